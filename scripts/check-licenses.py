#!/usr/bin/env python3
"""Licence check of every package the workspace resolves (all features, dev and build
dependencies included): each licence expression must be satisfiable with the allowed
licences below. Works offline from `cargo metadata`, so CI needs no extra tool.

(`cargo deny` would also check advisories, but its advisory database is fetched from
GitHub, which CI cannot reach.)
"""

import json
import re
import subprocess
import sys

# Permissive licences compatible with the crate's own MIT OR Apache-2.0.
ALLOWED = {
    "MIT",
    "MIT-0",
    "Apache-2.0",
    "Apache-2.0 WITH LLVM-exception",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Unicode-3.0",
    "Zlib",
    "0BSD",
    "CC0-1.0",
    "BSL-1.0",
    "Unlicense",
}


def tokens(expr):
    # Old-style "MIT/Apache-2.0" means OR.
    expr = re.sub(r"\s*/\s*", " OR ", expr)
    return re.findall(r"\(|\)|[A-Za-z0-9.+-]+", expr)


def satisfiable(expr):
    """Evaluates an SPDX expression (OR, AND, WITH, parentheses) against ALLOWED."""
    toks = tokens(expr)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def atom():
        if peek() == "(":
            take()
            value = disjunction()
            if take() != ")":
                raise ValueError(f"unbalanced parentheses in {expr!r}")
            return value
        name = take()
        if peek() == "WITH":
            take()
            name = f"{name} WITH {take()}"
        return name in ALLOWED

    def conjunction():
        value = atom()
        while peek() == "AND":
            take()
            value = atom() and value
        return value

    def disjunction():
        value = conjunction()
        while peek() == "OR":
            take()
            value = conjunction() or value
        return value

    result = disjunction()
    if pos != len(toks):
        raise ValueError(f"cannot parse licence expression {expr!r}")
    return result


def main():
    metadata = json.loads(
        subprocess.check_output(
            ["cargo", "metadata", "--format-version", "1", "--all-features", "--locked"]
        )
    )
    members = set(metadata["workspace_members"])
    bad = []
    checked = 0
    for package in metadata["packages"]:
        licence = package.get("license")
        if package["id"] in members:
            # Unpublished members (examples, tests) need none; published ones must have one.
            if package.get("publish") == [] or licence:
                if licence and not satisfiable(licence):
                    bad.append((package["name"], licence))
                continue
            bad.append((package["name"], "no licence"))
            continue
        checked += 1
        if not licence:
            bad.append((package["name"], "no licence field"))
        elif not satisfiable(licence):
            bad.append((package["name"], licence))
    for name, licence in bad:
        print(f"licence not allowed: {name}: {licence}", file=sys.stderr)
    if bad:
        sys.exit(1)
    print(f"licences ok: {checked} dependencies")


if __name__ == "__main__":
    main()
