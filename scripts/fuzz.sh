#!/usr/bin/env bash
# Coverage-guided fuzzing of every decoder of outside bytes (reliability/src/fuzz) with
# AFL++ through cargo-afl, on stable Rust. Each target runs for a fixed time, one after
# the other, starting from its committed corpus and seeds made from real encodings; the
# queue it keeps is minimised (afl-cmin) back into reliability/fuzz/corpus/<target>/,
# which the unit tests replay. Prints the Markdown table RELIABILITY.md holds.
#   scripts/fuzz.sh                  # 300 s per target
#   scripts/fuzz.sh 120              # 120 s per target
#   scripts/fuzz.sh 60 keys cursor   # some targets only
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(cursor item keys chunk compress stream checkpoint)

export PATH="$HOME/.cargo/bin:$PATH"
# cargo-afl works on stable Rust: install it, then build AFL++ and its runtime for this
# compiler, when missing.
if ! cargo afl --version >/dev/null 2>&1; then
  cargo install --locked cargo-afl
fi
if ! config=$(cargo afl config --build 2>&1) && ! grep -q "already built" <<<"$config"; then
  echo "$config" >&2
  exit 1
fi

# Instrumented builds never share the normal target directory (FUZZ_TARGET_DIR names
# another one).
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$PWD/target/afl}"
cargo afl build --release --quiet --manifest-path reliability/fuzz/Cargo.toml
bin="$CARGO_TARGET_DIR/release"
# AFL++'s own tools, as cargo-afl built them for this compiler.
afl=$(dirname "$(find "${XDG_DATA_HOME:-$HOME/.local/share}/afl.rs" -path '*/afl/bin/afl-fuzz' | head -1)")

# A container has no CPU frequency governor and its core pattern is the host's.
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1
export AFL_NO_AFFINITY=1

work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")
"$bin/seeds" "$work/seeds"

stat() { sed -n "s/^$1 *: *//p" "$2"; }

rows=()
for target in "${targets[@]}"; do
  corpus="reliability/fuzz/corpus/$target"
  mkdir -p "$corpus" "$work/in/$target" "$work/out" "$work/min"
  cp "$work/seeds/$target"/* "$work/in/$target/" 2>/dev/null || true
  cp "$corpus"/* "$work/in/$target/" 2>/dev/null || true
  echo "== $target: ${seconds} s" >&2
  cargo afl fuzz -V "$seconds" -t 1000 -i "$work/in/$target" -o "$work/out/$target" \
    -- "$bin/$target" >"$work/$target.log" 2>&1 || {
    echo "afl-fuzz failed on $target (log: $work/$target.log)" >&2
    tail -20 "$work/$target.log" >&2
    exit 1
  }
  out="$work/out/$target/default"
  # The queue, minimised to the inputs that keep its coverage, named by content.
  rm -rf "$work/min/$target"
  # (afl-cmin.bash: this AFL++'s Python afl-cmin finds no tuples in a persistent-mode
  # target; -e keeps edges, not hit counts, so the corpus stays small.)
  AFL_PATH="$afl" "$afl/afl-cmin.bash" -e -i "$out/queue" -o "$work/min/$target" \
    -- "$bin/$target" >"$work/$target.cmin.log" 2>&1
  rm -f "$corpus"/*
  for f in "$work/min/$target"/*; do
    cp "$f" "$corpus/$(sha1sum "$f" | cut -c1-16)"
  done
  crashes=$(find "$out/crashes" -type f -name 'id:*' | wc -l)
  hangs=$(find "$out/hangs" -type f -name 'id:*' | wc -l)
  if [ "$crashes" -gt 0 ] || [ "$hangs" -gt 0 ]; then
    mkdir -p "reliability/fuzz/findings/$target"
    cp "$out/crashes"/id:* "$out/hangs"/id:* "reliability/fuzz/findings/$target/" 2>/dev/null || true
  fi
  s="$out/fuzzer_stats"
  rows+=("| $target | $(stat run_time "$s") s | $(stat execs_done "$s") | $(stat execs_per_sec "$s") | $(stat edges_found "$s") / $(stat total_edges "$s") ($(stat bitmap_cvg "$s")) | $(stat corpus_count "$s") → $(ls "$corpus" | wc -l) | $crashes | $hangs |")
done

echo
echo "| target | time | executions | per second | edges found / instrumented (map coverage) | queue → corpus kept | crashes | hangs |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
if [ -d reliability/fuzz/findings ]; then
  echo
  echo "Crashing and hanging inputs: reliability/fuzz/findings/ (each needs a regression test and a fix)."
fi
rm -rf "$work"
