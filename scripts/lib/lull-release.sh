# Sourced by the measuring scripts (scripts/cold-start.sh,
# scripts/restart-cost.sh): builds the release `lull` (unless $LULL names
# one: scripts/figures.sh does) and sets
#   $lull       the binary
#   $workloads  the built-in workloads' names, as `lull components` lists them
if [ -n "${LULL:-}" ]; then
  lull=$LULL
else
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
  cargo build -q --release --bin lull
  lull="$CARGO_TARGET_DIR/release/lull"
fi
workloads=$("$lull" components --format json |
  python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(sys.stdin) if c.get("role") == "workload"))')
