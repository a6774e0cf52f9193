#!/usr/bin/env python3
"""docs/results.md, issue 17: why delayed writeback loses on `home-nas` and `cron-server`.

A FIFO simulation of the wd-red-plus service model (crates/tasks/src/device.rs)
outside lull, on a normalized CSV: mean read latency (ms) with every write
served when it arrives, with every write delayed until the disk has been
idle 1 s, and with writes delayed only when they arrive at a busy disk.

    lull synth --workload home-nas --duration 24h -o /tmp/hn.csv
    python3 - <<'X'   # cut hour 08 out of it
    import csv; r=list(csv.reader(open('/tmp/hn.csv')))
    csv.writer(open('/tmp/hn-08.csv','w')).writerows([r[0]]+[x for x in r[1:] if 8*3600e9<=int(x[0])<9*3600e9])
    X
    scripts/writeback-locality.py /tmp/hn-08.csv
"""
import csv
import math
import sys

CAP, RPM, TRACK, FULL, MB_S, OVH = 7_814_037_168, 5400.0, 1.0, 20.0, 150.0, 0.1
TRACK_BYTES = MB_S * 1e6 * 60 / RPM


def xfer(b):
    return b / (MB_S * 1e6) * 1e3


def service(head, sector, b):
    skip = (sector - head) * 512
    if head == sector:
        pos = 0.0
    elif sector > head and skip <= TRACK_BYTES:
        pos = xfer(skip)
    else:
        pos = TRACK + (FULL - TRACK) * math.sqrt(abs(sector - head) / CAP) + 30000 / RPM
    return (OVH + pos + xfer(b)) / 1e3


def run(reqs, delay, only_when_busy=False, flush_after=1.0):
    # `last`: the latest arrival. The host sees a delayed write complete at
    # once, so the disk has been idle `flush_after` only that long after
    # both the device fell free and the last request arrived: a flush
    # never starts before the write it flushes exists.
    head, free, last, lat, queue = 0, 0.0, 0.0, [], []
    for a, op, sector, b in reqs:
        if queue:
            t = max(free, last) + flush_after
            while queue and t < a:
                s, n = queue.pop(0)
                t += service(head, s, n)
                head, free = s + (n + 511) // 512, t
        last = a
        if delay and op == "W" and (not only_when_busy or free > a or queue):
            queue.append((sector, b))
            continue
        start = max(a, free)
        free = start + service(head, sector, b)
        head = sector + (b + 511) // 512
        if op == "R":
            lat.append(free - a)
    return sum(lat) / len(lat) * 1e3


for path in sys.argv[1:]:
    reqs = sorted((int(r["arrival_ns"]) / 1e9, r["op"], int(r["sector"]), int(r["bytes"]))
                  for r in csv.DictReader(open(path)))
    print(f"{path}: writes at once {run(reqs, False):.3f} ms, delayed {run(reqs, True):.3f} ms, "
          f"delayed when busy {run(reqs, True, True):.3f} ms")
