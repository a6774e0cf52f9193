#!/usr/bin/env bash
# docs/results.md's ranking views (issue 35): `lull rank` runs, read by
# scripts/rank-views.py (see its docs for what each view is).
#
#   scripts/rank-views.sh cleaning                  # 4 h built-in workloads, earlier-of
#   scripts/rank-views.sh cleaning-predicted-end    # the same under predicted-end
#   scripts/rank-views.sh shared-traces             # four tasks on six samples of
#                                                   # ../shared/traces (or $LULL_TRACES)
#
# lull: $LULL or target/release/lull.
set -euo pipefail
lull=${LULL:-target/release/lull}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
case ${1:-} in
  cleaning)
    "$lull" rank --task cleaning --device wd-red-plus --duration 4h --days 1 --seed 1 --out "$out/r" >/dev/null 2>&1
    python3 scripts/rank-views.py views "$out/r" ;;
  cleaning-predicted-end)
    "$lull" rank --task cleaning --device wd-red-plus --policy predicted-end --duration 4h --days 1 --seed 1 \
      --out "$out/r" >/dev/null 2>&1
    python3 scripts/rank-views.py views "$out/r" ;;
  shared-traces)
    traces=${LULL_TRACES:-../shared/traces}
    T=(msr/msr-cambridge1-sample_hm0.csv blktrace/liuzel01_mynotes_sda blktrace/isotopp_keks_sdd4
       blkparse/apress_mbpa_sdb_blkparse.txt other/systor17-traces-sample.csv.gz
       other/cloudphysics_cloudPhysicsIO.vscsi)
    dirs=()
    for task in spindown none writeback cleaning; do
      "$lull" rank "${T[@]/#/$traces/}" --task "$task" --out "$out/$task" >/dev/null 2>&1
      dirs+=("$out/$task")
    done
    python3 scripts/rank-views.py tasks "${dirs[@]}" ;;
  *)
    sed -n '2,10p' "$0" >&2
    exit 2 ;;
esac
