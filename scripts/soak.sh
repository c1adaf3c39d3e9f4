#!/usr/bin/env bash
# The soak's scripted run: a mixed workload over every feature for 30 minutes under 10 %
# injected faults of every kind (reliability/src/bin/soak), checked against a model as it
# runs, the process's memory sampled every second. Prints the Markdown tables
# RELIABILITY.md holds; exits non-zero on a broken invariant or unbounded memory.
#   scripts/soak.sh                                  # 30 minutes, seed 1, 8 workers
#   scripts/soak.sh --seconds 600 --seed 7 --concurrency 4
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  set -- --seconds 1800
fi
cargo run -q --release -p reliability --bin soak -- "$@"
