"""One `lull replay --format json` for the figure scripts.

Each script of docs/results.md's tables replays built-in workloads with
the release binary. They used to hold one copy each of the same call;
this module is the one copy.

    from lullreplay import replay
    r = replay(LULL, "office", 301, device="wd-red-plus", net="auto", budget=48)
"""
import json
import subprocess


def replay(lull, workload, seed, *, device, net, duration="24h", task="spindown",
           budget=None, warm_up_seed=None, warm_up_duration=None):
    """The JSON of `lull replay` of `workload` with `seed` for `duration`,
    on `device` with network `net`; behind a gate of `budget` spin-downs
    a day when given; after learning a warm-up day of `warm_up_seed` when
    given. Stops the script with the command and its error when it fails."""
    argv = [lull, "replay", "--workload", workload, "--seed", str(seed), "--duration",
            duration, "--task", task, "--device", device, "--net", net, "--format", "json"]
    if budget:
        argv += ["--max-spindowns-per-day", str(budget)]
    if warm_up_seed is not None:
        argv += ["--warm-up-seed", str(warm_up_seed)]
        if warm_up_duration:
            argv += ["--warm-up-duration", warm_up_duration]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {p.stderr.strip()}")
    return json.loads(p.stdout)
