#!/usr/bin/env bash
# Compile cost of #[derive(Entity)]: 50 entity structs with the derive (alone, as the crate
# needs no serde derive, and next to serde's) against the same structs with the serde
# derives only. Run by hand (not by CI); prints a markdown table.
#
#   scripts/compile-cost.sh [RUNS]      # RUNS timed builds per crate and command, default 3
#
# Two throw-away crates in one temporary workspace, with the same dependencies (both depend
# on dynamo-model by path, so the dependency graph is identical and built once in the
# shared target directory). Only the user crate's own compile is timed: the dependencies
# are built first, then `src/lib.rs` is touched and the rebuild timed, the two crates
# alternating run by run. Incremental compilation is off (CARGO_INCREMENTAL=0): a touched
# but unchanged file would otherwise be served from the incremental cache, and a real edit
# recompiles the crate's generated code.
#
# The expansion size (lines of `-Zunpretty=expanded`) is measured with RUSTC_BOOTSTRAP=1,
# which lets a stable rustc print it: a measurement, nothing is built with it.
#
# KEEP=1 keeps the temporary workspace (its path is printed). TARGET=dir builds into dir
# instead of the temporary workspace, so a second run (another commit, the same
# dependencies) reuses the dependencies built by the first.
set -euo pipefail

runs=${1:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/compile-cost.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "workspace: $work" >&2
else
  trap 'rm -rf "$work"' EXIT
fi

export CARGO_TARGET_DIR="${TARGET:-$work/target}"
export CARGO_INCREMENTAL=0

# ------------------------------------------------------------------ the two crates

cat >"$work/Cargo.toml" <<EOF
[workspace]
resolver = "2"
members = ["with-derive", "derive-only", "serde-only"]

[workspace.dependencies]
dynamo-model = { path = "$repo/dynamo-model", features = ["time"] }
serde = { version = "1", features = ["derive"] }
time = { version = "0.3", features = ["serde", "macros", "formatting", "parsing"] }
EOF
# The repository's lock file: the same dependency versions as the crate is tested with.
cp "$repo/Cargo.lock" "$work/Cargo.lock"

# entity I MODE: prints the struct of entity I; MODE is "derive" (with serde's derives),
# "derive-only" or "serde".
#  - 4 to 8 fields: String, u64, Option<String>, Vec<String>, OffsetDateTime;
#  - 1 to 3 key fields: the partition key takes the first, the sort key the others
#    (or a constant);
#  - one entity in four has a GSI.
entity() {
  local i=$1 mode=$2
  local nfields=$((4 + i % 5)) nkeys=$((1 + i % 3))
  local -a names types
  names=(id) types=(String)
  [ "$nkeys" -ge 2 ] && { names+=(at); types+=("$([ $((i % 2)) = 0 ] && echo OffsetDateTime || echo u64)"); }
  [ "$nkeys" -ge 3 ] && { names+=(seq); types+=(String); }
  names+=(name) types+=(String)
  local pool=(u64 "Option<String>" "Vec<String>" OffsetDateTime String)
  local j=0
  while [ "${#names[@]}" -lt "$nfields" ]; do
    names+=("f$j")
    types+=("${pool[$(((i + j) % 5))]}")
    j=$((j + 1))
  done

  local sk="E$i"
  case $nkeys in
    2) sk="E$i#{at}" ;;
    3) sk="E$i#{at}#{seq}" ;;
  esac
  if [ "$mode" != serde ]; then
    if [ "$mode" = derive ]; then
      echo "#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]"
    else
      echo "#[derive(Entity, Debug, Clone, PartialEq)]"
    fi
    local gsi=""
    [ $((i % 4)) = 0 ] && gsi=", index(GSI1, pk = \"N$i#{name}\", sk = \"{id}\")"
    echo "#[dynamo(table = App, pk = \"T$i#{id}\", sk = \"$sk\"$gsi)]"
  else
    echo "#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]"
  fi
  echo "pub struct Entity$i {"
  for k in "${!names[@]}"; do
    echo "    pub ${names[$k]}: ${types[$k]},"
  done
  echo "}"
  echo
}

crate() {
  local dir=$1 mode=$2
  mkdir -p "$work/$dir/src"
  cat >"$work/$dir/Cargo.toml" <<EOF
[package]
name = "$dir"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
dynamo-model.workspace = true
serde.workspace = true
time.workspace = true
EOF
  {
    echo "#![allow(dead_code, unused_imports)]"
    echo "use serde::{Deserialize, Serialize};"
    echo "use time::OffsetDateTime;"
    if [ "$mode" != serde ]; then
      echo "use dynamo_model::{Entity, Table};"
      echo
      echo "#[derive(Table)]"
      echo "#[dynamo(pk = \"PK\", sk = \"SK\", gsi(name = \"GSI1\", pk = \"GSI1PK\", sk = \"GSI1SK\"))]"
      echo "pub struct App;"
    else
      echo "// The same dependency graph as with-derive, unused here."
      echo "use dynamo_model as _;"
    fi
    echo
    for i in $(seq 0 49); do entity "$i" "$mode"; done
  } >"$work/$dir/src/lib.rs"
}

crate with-derive derive
crate derive-only derive-only
crate serde-only serde

# ------------------------------------------------------------------ timing

cd "$work"
echo "building the dependencies once (shared target directory)..." >&2
for command in build check; do
  cargo "$command" -q --workspace --offline 2>/dev/null || cargo "$command" -q --workspace
done

# seconds COMMAND CRATE: wall time of one rebuild of CRATE alone.
seconds() {
  touch "$work/$2/src/lib.rs"
  local start end
  start=$(date +%s.%N)
  cargo "$1" -q -p "$2" --offline
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

declare -A times
for command in build check; do
  for _ in $(seq 1 "$runs"); do
    for dir in with-derive derive-only serde-only; do
      times[$command.$dir]+="$(seconds "$command" "$dir") "
    done
  done
done

# Expansion: lines of the crate after macro expansion (the derive's generated code).
expanded_lines() {
  touch "$work/$1/src/lib.rs"
  RUSTC_BOOTSTRAP=1 cargo rustc -q -p "$1" --offline --profile=check -- -Zunpretty=expanded 2>/dev/null | wc -l
}

echo
echo "50 entities, \`cargo <command>\` of the user crate alone (dependencies built),"
echo "median of $runs runs, CARGO_INCREMENTAL=0; rustc $(rustc --version | cut -d' ' -f2):"
echo
echo "| command | crate | time (runs) | ratio to serde only | target (build ≤ 1.5×, check ≤ 1.2×) |"
echo "| --- | --- | --- | --- | --- |"
for command in build check; do
  s=$(echo "${times[$command.serde-only]}" | tr ' ' '\n' | grep . | median)
  for dir in derive-only with-derive serde-only; do
    d=$(echo "${times[$command.$dir]}" | tr ' ' '\n' | grep . | median)
    ratio=$(echo "$d / $s" | bc -l)
    limit=1.5
    [ "$command" = check ] && limit=1.2
    verdict=$(echo "$ratio <= $limit" | bc -l | sed 's/1/met/; s/0/not met/')
    [ "$dir" = serde-only ] && verdict="(baseline)"
    case $dir in
      derive-only) label='`#[derive(Entity)]`' ;;
      with-derive) label='`#[derive(Entity, Serialize, Deserialize)]`' ;;
      serde-only) label='`#[derive(Serialize, Deserialize)]`' ;;
    esac
    printf '| `cargo %s` | %s | %.2f s (%s) | %.2f× | %s |\n' \
      "$command" "$label" "$d" "$(echo "${times[$command.$dir]}" | xargs printf '%.2f ' | sed 's/ $//')" \
      "$ratio" "$verdict"
  done
done
d=$(expanded_lines with-derive)
o=$(expanded_lines derive-only)
s=$(expanded_lines serde-only)
src=$(wc -l <"$work/with-derive/src/lib.rs")
echo
echo "| expansion (\`-Zunpretty=expanded\`, lines) | derive only | derive and serde | serde only |"
echo "| --- | --- | --- | --- |"
printf '| 50 entities (%d source lines) | %d (%.2f×) | %d (%.2f×) | %d |\n' "$src" "$o" "$(echo "$o / $s" | bc -l)" "$d" "$(echo "$d / $s" | bc -l)" "$s"
