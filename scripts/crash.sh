#!/usr/bin/env bash
# The crash harness's scripted run: every protocol killed with SIGKILL at 200 seeded random
# moments (reliability/src/bin/crash), its invariant checked after each kill, its recovery
# run and checked again. Prints the Markdown tables RELIABILITY.md holds.
#   scripts/crash.sh                 # 200 kills per protocol, seed 1
#   scripts/crash.sh --kills 50 --seed 7 --only chunked
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  set -- --kills 200
fi
cargo run -q --release -p reliability --bin crash -- "$@"
