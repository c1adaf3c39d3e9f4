#!/usr/bin/env bash
# How much code `#[derive(Entity)]` generates, on one reference entity: 5 fields, a sort key
# of 3 parts, one GSI.
#
#   scripts/expansion.sh            # prints the figures (BENCHMARKS.md, "Generated code")
#   RUNS=5 scripts/expansion.sh     # more `cargo check` runs for the median
#   KEEP=/tmp/x scripts/expansion.sh # also keep the two expansions in /tmp/x
#
# Prints:
# - the lines of `-Zunpretty=expanded` output attributable to the derive: the crate with
#   the derive minus the same struct without it (the table declaration is in both);
# - the generated `fn` items (same difference);
# - the `cargo check` time of a crate of 50 such entities (median of RUNS, dependencies
#   already built, only the crate itself re-checked).
#
# Needs only the stable toolchain (`RUSTC_BOOTSTRAP=1` unlocks `-Z` flags) and the
# workspace's registry cache (it runs offline with the workspace's lock file). Builds into
# target/expansion (or $TARGET) so later runs reuse the compiled dependencies; the timed
# checks are not incremental.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-3}
# Two target directories: build scripts that probe `RUSTC_BOOTSTRAP` would otherwise
# rebuild every dependency each time the script switches between expanding and checking.
TARGET=${TARGET:-$ROOT/target/expansion}
EXPAND_TARGET="$TARGET/expand"
CHECK_TARGET="$TARGET/check"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# A crate `$1` in $WORK whose lib.rs is stdin.
crate() {
    mkdir -p "$WORK/$1/src"
    cat >"$WORK/$1/Cargo.toml" <<EOF
[package]
name = "$1"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
path = "src/lib.rs"

[dependencies]
dynamo-model = { path = "$ROOT/dynamo-model" }

[workspace]
EOF
    cp "$ROOT/Cargo.lock" "$WORK/$1/Cargo.lock"
    cat >"$WORK/$1/src/lib.rs"
}

TABLE='#![allow(unused_imports)]
use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct App;
'

# The reference entity `Order$1`; with `$2 = plain`, the same struct without the derive.
entity() {
    if [ "${2:-}" != plain ]; then
        cat <<EOF
#[derive(Entity)]
#[dynamo(table = App, pk = "CUSTOMER#{customer_id}",
         sk = "ORDER#{placed_at}#{region}#{order_id}",
         index(GSI1, pk = "STATUS#{status}", sk = "{placed_at}#{order_id}"))]
EOF
    fi
    cat <<EOF
#[derive(Debug, Clone, PartialEq)]
pub struct Order$1 {
    pub customer_id: String,
    pub placed_at: u64,
    pub region: String,
    pub order_id: String,
    pub status: String,
}
EOF
}

expand() {
    (cd "$WORK/$1" && CARGO_TARGET_DIR="$EXPAND_TARGET" RUSTC_BOOTSTRAP=1 cargo rustc --offline --quiet --lib -- -Zunpretty=expanded)
}

{ echo "$TABLE"; entity ""; } | crate derived
{ echo "$TABLE"; entity "" plain; } | crate plain
expand derived >"$WORK/derived.rs"
expand plain >"$WORK/plain.rs"

if [ -n "${KEEP:-}" ]; then cp "$WORK/derived.rs" "$WORK/plain.rs" "$KEEP"; fi

lines() { wc -l <"$1"; }
fns() { grep -cE '\bfn [A-Za-z_]' "$1" || true; }
LINES=$(($(lines "$WORK/derived.rs") - $(lines "$WORK/plain.rs")))
FNS=$(($(fns "$WORK/derived.rs") - $(fns "$WORK/plain.rs")))

{
    echo "$TABLE"
    for n in $(seq 1 50); do entity "$n"; done
} | crate fifty
# Not incremental: an incremental re-check of an unchanged file reuses its results.
check() { (cd "$WORK/fifty" && CARGO_INCREMENTAL=0 CARGO_TARGET_DIR="$CHECK_TARGET" cargo check --offline --quiet); }
check # the dependencies, once
times=()
for _ in $(seq 1 "$RUNS"); do
    touch "$WORK/fifty/src/lib.rs"
    start=$(date +%s%N)
    check
    end=$(date +%s%N)
    times+=($(((end - start) / 1000000)))
done
MEDIAN=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((RUNS + 1) / 2))p")

echo "reference entity: 5 fields, sk of 3 parts, one GSI ($(git -C "$ROOT" rev-parse --short HEAD))"
echo "expanded lines attributable to the derive: $LINES"
echo "generated fn items: $FNS"
echo "cargo check, 50 entities: median ${MEDIAN} ms of ${times[*]} ms"
