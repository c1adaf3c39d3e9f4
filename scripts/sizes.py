#!/usr/bin/env python3
"""Sizes a reader can take in one sitting: no source file of the two crates over 700 lines
and no function in them over 120 lines (tests excepted: `tests.rs` files and files under
a `tests/` directory).

    python3 scripts/sizes.py    # exit 1 on any file or function over its limit
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MAX_FILE_LINES = 700
# Comments, raw and plain string literals and char literals, in one pass so that each is
# taken from its own start (a `//` inside a string is not a comment).
TOKENS = re.compile(
    r"//[^\n]*|/\*.*?\*/|b?r(#*)\".*?\"\1|b?\"(?:\\.|[^\"\\])*\"|'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^'\\])'",
    re.S,
)
MAX_FN_LINES = 120
SOURCES = ["dynamo-model/src", "dynamo-model-derive/src"]


def is_test(rel):
    return os.path.basename(rel) == "tests.rs" or "/tests/" in rel


def functions(text):
    """(name, first line, line count) of each `fn` with a body, by brace matching on code
    with comments, strings and char literals blanked out."""
    code = TOKENS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for m in re.finditer(r"\bfn\s+(\w+)", code):
        i = m.end()
        depth = 0
        while i < len(code) and code[i] not in "{;":
            depth += {"(": 1, ")": -1, "<": 0}.get(code[i], 0)
            i += 1
        if i >= len(code) or code[i] == ";":
            continue
        start, depth = i, 0
        while i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
            if depth == 0:
                break
        first = code.count("\n", 0, m.start()) + 1
        yield m.group(1), first, code.count("\n", m.start(), i) + 1


def main():
    errors = []
    for source in SOURCES:
        for dirpath, _, files in os.walk(os.path.join(ROOT, source)):
            for f in sorted(files):
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT)
                text = open(path, encoding="utf-8").read()
                lines = text.count("\n")
                if is_test(rel):
                    continue
                if lines > MAX_FILE_LINES:
                    errors.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES})")
                for name, first, count in functions(text):
                    if count > MAX_FN_LINES:
                        errors.append(
                            f"{rel}:{first}: fn {name} is {count} lines (at most {MAX_FN_LINES})"
                        )
    if errors:
        print(f"{len(errors)} over their limits:", file=sys.stderr)
        for e in errors:
            print(f"  {e}", file=sys.stderr)
        sys.exit(1)
    print(f"sizes: every file at most {MAX_FILE_LINES} lines, every fn at most {MAX_FN_LINES}")


if __name__ == "__main__":
    main()
