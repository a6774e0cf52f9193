#!/usr/bin/env python3
"""`lull trace info` against `blkparse` on the Hadoop blktrace set: paired,
interleaved whole-process runs, medians (docs/performance.md, "Against
blkparse on the biggest sample").

    scripts/trace-info-vs-blkparse.py [ROUNDS] [LULL...]

ROUNDS (default 9) rounds; each runs every LULL binary (default
target/release/lull, or $CARGO_TARGET_DIR/release/lull) on the set, then
`blkparse -D DIR -i sdb -o /dev/null`, so load changes hit both alike. One
untimed run of each first warms the page cache. Prints each command's
median, min and max, the ratio of the medians, the median of the per-round
ratios, and the load average before and after.

blkparse stops at the first missing CPU file and the set lacks
sdb.blktrace.33, so it reads a temporary directory of links to the set's
files with an empty file for CPU 33. The set is found at $LULL_TRACES, else
../shared/traces beside the repository. Needs blkparse (Debian: blktrace).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    lulls = sys.argv[2:] or [os.path.join(target, "release", "lull")]
    traces = os.environ.get("LULL_TRACES", os.path.join(ROOT, "..", "shared", "traces"))
    hadoop = os.path.join(traces, "blktrace", "zzunny97_hadoop_eternity10_sdb")
    if not os.path.isdir(hadoop):
        sys.exit(f"no Hadoop set at {hadoop} (set LULL_TRACES)")
    if shutil.which("blkparse") is None:
        sys.exit("needs blkparse (apt-get install blktrace)")
    with tempfile.TemporaryDirectory(prefix="hadoop_bp") as links:
        for name in os.listdir(hadoop):
            os.symlink(os.path.join(hadoop, name), os.path.join(links, name))
        open(os.path.join(links, "sdb.blktrace.33"), "w").close()
        cmds = {lull: [lull, "trace", "info", hadoop] for lull in lulls}
        cmds["blkparse"] = ["blkparse", "-D", links, "-i", "sdb", "-o", "/dev/null"]
        times = {name: [] for name in cmds}

        def run(cmd):
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            return (time.perf_counter() - start) * 1e3

        for cmd in cmds.values():
            run(cmd)
        load_before = os.getloadavg()
        for _ in range(rounds):
            for name, cmd in cmds.items():
                times[name].append(run(cmd))
        load_after = os.getloadavg()
    bp = statistics.median(times["blkparse"])
    for name, t in times.items():
        m = statistics.median(t)
        print(f"{name:40s} median {m:7.1f} ms  min {min(t):7.1f}  max {max(t):7.1f}  blkparse/this {bp / m:5.1f}x")
    for lull in lulls:
        ratios = [b / l for b, l in zip(times["blkparse"], times[lull])]
        shown = ", ".join(f"{r:.1f}" for r in ratios)
        print(f"{lull}: per-round ratios, median {statistics.median(ratios):.1f}x ({shown})")
    print("load average before {:.2f} {:.2f} {:.2f}, after {:.2f} {:.2f} {:.2f}".format(*load_before, *load_after))


if __name__ == "__main__":
    main()
