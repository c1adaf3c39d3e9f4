#!/usr/bin/env python3
"""The runtime crate's layer check: each module of `dynamo-model/src` imports only modules
below it in the layer map (and, inside a layer, only modules listed before it), so the module
graph has no cycle and a reader sees the design from the bottom up.

    python3 scripts/layers.py          # checks, prints the layers; exit 1 on any violation
    python3 scripts/layers.py --graph  # also prints every module's imports

A reference is any `crate::name` path or `crate::{...}` group in code, outside comments and
`#[cfg(test)]` modules; a root re-export (`crate::Entity`) counts as the module that defines
it, read from lib.rs's `pub use` lines. Doc comments are prose, not dependencies: a doc link
to a higher layer uses the public path (`dynamo_model::read::Query`).
"""
import os
import re
import sys

# The layer map, bottom first. Inside a layer, a module may use the ones listed before it.
LAYERS = [
    # Builder setters, text helpers, seals, the error types of every layer, retry policy, span names.
    ("foundation", ["setters", "text", "sealed", "error", "retry", "trace"]),
    # What is stored and how: attribute codecs, the table schema, the text of keys,
    # compression, chunk manifests, the entity registry, entities and their typed keys,
    # key conditions, collections, item sizes, cursors.
    ("model", ["codec", "extra_types", "attribute", "schema", "keytext",
               "compress", "chunk", "registry", "entity", "size", "key", "generated", "collection",
               "cursor"]),
    # Every expression: conditions, updates, key conditions, guards.
    ("expr", ["expr"]),
    # The table handle and what it may carry: the item cache, capacity accounting, the
    # insight into hot partitions and read shapes.
    ("handle", ["cache", "capacity", "insight", "db"]),
    # Requests: what every request shares; batches; reads of many items (queries, scans,
    # scatter queries: one page source, one merge); operations on one item (get, put,
    # update, delete, settlement of ambiguous outcomes, the chunk protocol); transactions.
    ("operations", ["request", "batch", "read", "item", "transact"]),
    # Features built on the operations.
    ("features", ["history", "period", "stream", "export", "migrate"]),
    # DynamoDB Local for tests, and the documentation modules (guide, stored format).
    ("tools", ["local", "guide", "stored_format"]),
    # What a user imports: the prelude, and the deprecated paths of moved items.
    ("paths", ["prelude", "ops"]),
]

# Comments, raw and plain string literals and char literals, in one pass so that each is
# taken from its own start (a `//` inside a string is not a comment).
TOKENS = re.compile(
    r"//[^\n]*|/\*.*?\*/|b?r(#*)\".*?\"\1|b?\"(?:\\.|[^\"\\])*\"|'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^'\\])'",
    re.S,
)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dynamo-model", "src")


def strip(text):
    """Code without comments, string literals and `#[cfg(test)] mod x { ... }` bodies."""
    text = TOKENS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\((?:test|all\(test[^\]]*\))\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\(crate\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def group_names(body):
    """Top-level names of a `{a, b::c, d::{e, f}}` group."""
    names, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            names.append(cur)
            cur = ""
        else:
            cur += ch
    names.append(cur)
    return [n.strip().split("::")[0].strip() for n in names if n.strip()]


def main():
    lib = open(os.path.join(ROOT, "lib.rs"), encoding="utf-8").read()
    code = strip(lib)
    modules = set(re.findall(r"^\s*(?:pub(?:\(crate\))?\s+)?mod\s+(\w+)\s*;", code, re.M))
    reexport = {}
    for m in re.finditer(r"pub\s+use\s+(\w+)::([^;]*);", code):
        module, rest = m.group(1), m.group(2)
        if module not in modules:
            continue
        last = rest.split("::")[-1] if "{" not in rest else None
        names = group_names(rest[rest.index("{") + 1:rest.rindex("}")]) if "{" in rest else []
        # `pub use a::b::{C, D}` or `pub use a::b::C` or `... as E`
        if last:
            names = [last]
        for n in names:
            n = n.split(" as ")[-1].strip()
            reexport[n] = module

    rank, layer_of = {}, {}
    for li, (layer, mods) in enumerate(LAYERS):
        for m in mods:
            rank[m] = len(rank)
            layer_of[m] = layer
    missing = sorted(modules - set(rank))
    stale = sorted(set(rank) - modules)
    errors = []
    if missing:
        errors.append(f"modules missing from the layer map: {', '.join(missing)}")
    if stale:
        errors.append(f"layer map names modules that do not exist: {', '.join(stale)}")

    graph = {m: set() for m in modules}
    for dirpath, _, files in os.walk(ROOT):
        for f in sorted(files):
            if not f.endswith(".rs") or f == "tests.rs":
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, ROOT)
            if rel == "lib.rs":
                continue
            top = rel.split(os.sep)[0].removesuffix(".rs")
            text = strip(open(path, encoding="utf-8").read())
            refs = []
            for m in re.finditer(r"\bcrate::(\{)?", text):
                line = text.count("\n", 0, m.start()) + 1
                if m.group(1):
                    depth, j = 1, m.end()
                    while depth and j < len(text):
                        depth += {"{": 1, "}": -1}.get(text[j], 0)
                        j += 1
                    refs += [(n, line) for n in group_names(text[m.end():j - 1])]
                else:
                    name = re.match(r"\w+", text[m.end():])
                    if name:
                        refs.append((name.group(0), line))
            for name, line in refs:
                target = name if name in modules else reexport.get(name)
                if target is None or target == top:
                    continue
                graph.setdefault(top, set()).add(target)
                if top in rank and target in rank and rank[target] > rank[top]:
                    errors.append(
                        f"{rel}:{line}: `{top}` ({layer_of[top]}) uses `{target}` "
                        f"({layer_of[target]}), which is above it"
                    )
    for layer, mods in LAYERS:
        print(f"{layer:>10}: {' '.join(mods)}")
    if "--graph" in sys.argv:
        for m in sorted(graph, key=lambda m: rank.get(m, -1)):
            print(f"  {m} -> {' '.join(sorted(graph[m], key=lambda t: rank.get(t, -1)))}")
    if errors:
        print(f"\n{len(errors)} layer violations:", file=sys.stderr)
        for e in errors:
            print(f"  {e}", file=sys.stderr)
        sys.exit(1)
    print("layers: no module uses a module above it; the module graph has no cycle")


if __name__ == "__main__":
    main()
