#!/usr/bin/env bash
# Load on hot items (reliability/src/bin/load), release build: 64 writers on one item
# through optimistic locking, history `revise` and `add`; scatter reads over 16 shards
# while 64 writers write; a bulk load of 100,000 rows. Prints the Markdown RELIABILITY.md
# holds; exits non-zero when a check fails.
#   scripts/load.sh                          # 64 writers, 20 operations each, 100,000 rows
#   scripts/load.sh --ops 50 --only revise   # one scenario, more operations
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q --release -p reliability --bin load -- "$@"
