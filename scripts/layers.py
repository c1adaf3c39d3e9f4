#!/usr/bin/env python3
"""The module checks of the two crates.

The runtime crate's layer check: each module of `dynamo-model/src` uses only modules below it
in the layer map (and, inside a layer, only modules listed before it), so the top-level
module graph has no cycle and a reader sees the design from the bottom up. The cycle check,
for both crates: inside every module, the graph of its file-level submodules (`key::encode`,
`key::render`, ...) has no cycle either.

    python3 scripts/layers.py                 # runtime crate: layers and cycles; exit 1 on any
    python3 scripts/layers.py --graph         # also prints every top-level module's uses
    python3 scripts/layers.py --cycles DIR    # cycles only, in the crate whose src is DIR

What counts as a use of a module, outside `#[cfg(test)]` modules and `tests.rs` files:
- a path in code, in every spelling: `crate::x`, `dynamo_model::x` (the runtime crate is
  `extern crate self as dynamo_model`), `super::x` and `self::x` (relative to the place in the
  module tree, inline modules included), `x::y` where `x` is a submodule of the file's own
  module, and `use` groups nested at any depth (`crate::{a, b::{c, D}}`). `#[cfg(doc)]`
  imports are code like any other;
- an intra-doc link into the module tree, in every spelling: `[`Query`](crate::read::Query)`,
  `[`super::Query`]`, `[x]: self::x`, and a bare `[`Query`]` through a `#[cfg(doc)]` import.
  Rustdoc resolves each link from the documented module, so such a link ties the
  documentation to the module tree as an import ties the code, and it obeys the same
  layering: a lower module names a higher one's item in plain text, or the higher module
  links down to it;
- any `crate::module` written in a comment, as the reference tool `modgraph.py` counts it
  (every `crate::x` in a file's text), so that a graph without cycle here is one there.

Not a use: a doc link through the crate's public face, a root name (`crate::Db`) or a
public path (`dynamo_model::read::Query`): it names the item as a user finds it, not the
module that defines it, so a lower module may point up to the public API that way (which is
also how `#[cfg(doc)]` imports of higher modules were replaced). In code both spellings are
uses like any other.

A path is followed to the module that defines the item, through re-exports (`pub use`) and
glob imports, so `crate::Entity` is a use of `entity`. A path into the crate that names nothing
the check can find is an error, so that no new spelling slips past.
"""
import os
import re
import sys

# The layer map, bottom first. Inside a layer, a module may use the ones listed before it.
LAYERS = [
    # The item (attribute map), builder setters, text helpers, seals, the write token, the
    # names of stream records (below `error`, whose stream error names them), the error
    # types of every layer, retry policy, span names.
    ("foundation", ["item_map", "setters", "text", "sealed", "token", "stream_names", "error",
                    "retry", "trace"]),
    # What is stored and how: attribute codecs, the text of keys (encoding, formats,
    # computed parts, delimiters, templates, limits), the table schema (and the key
    # attributes of items it names), compression, chunk manifests, the entity registry,
    # entities and their typed keys, item sizes, key spaces (partitions, sort-key ranges and
    # chains, sharded partitions), the descriptors the derive generates, collections, cursors.
    ("model", ["codec", "extra_types", "attribute", "key", "schema", "encrypt",
               "compress", "chunk", "unique", "registry", "auto", "entity", "validate", "size", "keyspace", "generated",
               "collection", "cursor"]),
    # Every expression: conditions, updates, key conditions, guards.
    ("expr", ["expr"]),
    # The table handle and what it may carry: the record of each call its observers read,
    # the item cache, capacity accounting, the
    # insight into hot partitions and read shapes.
    ("handle", ["call", "cache", "capacity", "insight", "db"]),
    # Requests: what every request shares; batches; reads of many items (queries, scans,
    # scatter queries: one source towards DynamoDB, one merge); operations on one item (get,
    # put, update, delete, settlement of ambiguous outcomes, the chunk protocol); transactions.
    ("operations", ["request", "batch", "read", "item", "transact"]),
    # Features built on the operations.
    ("features", ["history", "period", "stream", "export", "migrate"]),
    # DynamoDB Local for tests, the test double, and the documentation modules (guide,
    # stored format).
    ("tools", ["local", "double", "guide", "stored_format"]),
    # What a user imports: the prelude.
    ("paths", ["prelude"]),
]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "dynamo-model", "src")
ALIAS = "dynamo_model"

# Comments, raw and plain string literals and char literals, in one pass so that each is
# taken from its own start (a `//` inside a string is not a comment).
TOKENS = re.compile(
    r"//[^\n]*|/\*.*?\*/|b?r(#*)\".*?\"\1|b?\"(?:\\.|[^\"\\])*\"|'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^'\\])'",
    re.S,
)
CFG_TEST = r"#\[cfg\((?:test|all\(test[^\]]*\))\)\]"
ATTRS = r"((?:#\[[^\]]*\]\s*)*)"
VIS = r"(?:pub(?:\([^)]*\))?\s+)?"
ITEM = re.compile(r"\b(?:fn|struct|enum|trait|type|const|static|union|mod)\s+(?!(?:fn|unsafe|async|extern|mut)\b)(\w+)|\bmacro_rules!\s*(\w+)")
# A path's first segment: not preceded by `::`, a letter or a `.` (a method call).
PATH = re.compile(r"(?<![\w:.$])(\w+)\s*::\s*(\{|\w+|\*)")
DOC_LINK = re.compile(
    r"\]\(\s*<?([^)\s>]+)>?\s*\)"          # [text](target)
    r"|\[`?([\w:@!<>()]+?)`?\](?![(\[:])"  # [`target`], [target]
    r"|^\s*(?://[/!])?\s*\[[^\]]+\]:\s*(\S+)",  # [label]: target
    re.M,
)


def blank(text):
    """`text` with everything but its line breaks turned to spaces (offsets kept)."""
    return re.sub(r"[^\n]", " ", text)


class Source:
    """One file of the crate: its module path, its code (comments and strings blanked,
    `#[cfg(test)]` modules cut), the inline modules around each position, its imports and
    items, and the paths written in its comments."""

    def __init__(self, rel, module, text):
        self.rel, self.module = rel, module
        self.comments = []  # (text, offset) of every comment
        code, tests = cut_test_modules(TOKENS.sub(lambda m: self._token(m), text))
        self.comments = [(c, at) for c, at in self.comments
                         if not any(start <= at < end for start, end in tests)]
        self.code = cut_quotes(code)
        self.inline = inline_modules(self.code)
        self.items = {a or b for a, b in ITEM.findall(self.code)}
        self.imports, self.globs = {}, []
        for m in re.finditer(r"\buse\s+([^;]+);", self.code):
            at = self.scope(m.start())
            for path, name in use_tree(m.group(1)):
                if name == "*":
                    self.globs.append((at, path[:-1]))
                elif name != "_":
                    self.imports[name] = (at, path)

    def _token(self, m):
        if m.group(0).startswith(("//", "/*")):
            self.comments.append((m.group(0), m.start()))
        return blank(m.group(0))

    def scope(self, pos):
        """The module path at `pos`: the file's module and the inline modules around it."""
        return self.module + tuple(name for name, start, end in self.inline if start <= pos < end)

    def line(self, pos):
        return self.code.count("\n", 0, pos) + 1


def cut_test_modules(code):
    """Code with the `#[cfg(test)] mod x { ... }` blocks blanked, and their spans."""
    out, spans, i = [], [], 0
    for m in re.finditer(CFG_TEST + r"\s*(?:#\[[^\]]*\]\s*)*" + VIS + r"mod\s+\w+\s*\{", code):
        if m.start() < i:
            continue
        out.append(code[i:m.start()])
        j = match_brace(code, m.end())
        out.append(blank(code[m.start():j]))
        spans.append((m.start(), j))
        i = j
    out.append(code[i:])
    return "".join(out), spans


def cut_quotes(code):
    """Code with the bodies of `quote!` and its kin blanked: generated code is not a use."""
    out, i = [], 0
    for m in re.finditer(r"\b(?:parse_)?quote(?:_spanned)?!\s*[({\[]", code):
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += 1 if code[j] in "({[" else -1 if code[j] in ")}]" else 0
            j += 1
        out.append(code[i:m.end()])
        out.append(blank(code[m.end():j]))
        i = j
    out.append(code[i:])
    return "".join(out)


def match_brace(code, j):
    """The index after the `}` closing the `{` just before `j`."""
    depth = 1
    while j < len(code) and depth:
        depth += {"{": 1, "}": -1}.get(code[j], 0)
        j += 1
    return j


def inline_modules(code):
    """(name, start, end) of each inline `mod name { ... }`."""
    return [(m.group(1), m.end(), match_brace(code, m.end()))
            for m in re.finditer(r"\bmod\s+(\w+)\s*\{", code)]


def use_tree(tree, prefix=()):
    """(path, name) of each leaf of a `use` tree: `a::{b, c::{d as e, self}}` gives
    (a::b, b), (a::c::d, e), (a::c, c)."""
    tree = re.sub(r"\s*(::|,|\{|\})\s*", r"\1", tree.strip()).removeprefix("::")
    if "{" in tree and (tree.find("{") < tree.find(",") if "," in tree else True):
        head, body = tree.split("{", 1)
        body = body[:body.rindex("}")]
        head = [s for s in head.split("::") if s]
        for part in split_group(body):
            yield from use_tree(part, prefix + tuple(head))
        return
    name = None
    m = re.fullmatch(r"(.*?)\s+as\s+(\w+)", tree)
    if m:
        tree, name = m.group(1), m.group(2)
    segs = list(prefix) + [s for s in tree.split("::") if s]
    if not segs:
        return
    if segs[-1] == "self":
        segs = segs[:-1]
    if not segs:
        return
    yield segs, name or segs[-1]


def split_group(body):
    """The comma-separated parts of a `use` group, nested groups kept whole."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


class Crate:
    """The file modules of one crate and the resolution of paths to them."""

    def __init__(self, root, alias=None):
        self.root, self.alias = root, alias
        self.files = {}  # module path (tuple) -> Source
        self._load((), "lib.rs" if os.path.exists(os.path.join(root, "lib.rs")) else "main.rs")
        self.macros = {}
        for mod, src in self.files.items():
            for m in re.finditer(r"#\[macro_export\]\s*(?:#\[[^\]]*\]\s*)*macro_rules!\s*(\w+)", src.code):
                self.macros[m.group(1)] = mod

    def _load(self, module, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8") as f:
            text = f.read()
        src = Source(rel, tuple(module), text)
        self.files[module] = src
        base = os.path.dirname(rel)
        if os.path.basename(rel) not in ("lib.rs", "main.rs", "mod.rs"):
            base = rel[:-3]
        for m in re.finditer(ATTRS + VIS + r"\bmod\s+(\w+)\s*;", src.code):
            attrs, name = m.group(1), m.group(2)
            if re.search(CFG_TEST, attrs) or name == "tests":
                continue
            path = re.search(r"#\[path\s*=\s*\"([^\"]+)\"\]", text[m.start():m.end()])
            if path:
                child = os.path.join(os.path.dirname(rel), path.group(1))
            else:
                child = os.path.join(base, name + ".rs")
                if not os.path.exists(os.path.join(self.root, child)):
                    child = os.path.join(base, name, "mod.rs")
            self._load(module + (name,), os.path.normpath(child))

    def children(self, module):
        n = len(module)
        return {m[n] for m in self.files if len(m) == n + 1 and m[:n] == module}

    def file_of(self, scope):
        """The nearest file module of a module path (inline modules belong to their file)."""
        scope = tuple(scope)
        while scope not in self.files:
            scope = scope[:-1]
        return scope

    def start(self, src, scope, segs):
        """Where a path written at `scope` starts: (base module, remaining segments), or
        None for a path outside the crate (another crate, a local name, an imported name
        whose import is itself a use)."""
        head = segs[0]
        if head == "crate" or (self.alias and head == self.alias):
            return (), segs[1:]
        if head == "self":
            return tuple(scope), segs[1:]
        if head == "super":
            base = list(scope)
            while segs and segs[0] == "super":
                if not base:
                    return None
                base, segs = base[:-1], segs[1:]
            return tuple(base), segs
        if head in self.children(src.module) and tuple(scope) == tuple(src.module):
            return tuple(src.module), segs
        return None

    def resolve(self, base, segs, seen=None):
        """The file module that defines the item `base::segs`, None for an item of another
        crate, or a string saying what is unknown."""
        seen = seen or set()
        key = (base, tuple(segs))
        if key in seen:
            return None
        seen.add(key)
        cur = self.file_of(base)
        for i, seg in enumerate(segs):
            if seg in ("*", "{"):
                return cur
            if seg in self.children(cur):
                cur += (seg,)
                continue
            if seg == "super" and cur:
                cur = cur[:-1]
                continue
            src = self.files[cur]
            if seg in src.imports:
                at, path = src.imports[seg]
                start = self.start(src, at, path)
                if start is None:
                    return None  # a re-export of another crate's item
                return self.resolve(start[0], list(start[1]) + segs[i + 1:], seen)
            if seg in src.items:
                return cur
            if not cur and seg in self.macros:
                return self.macros[seg]
            for at, path in src.globs:
                start = self.start(src, at, path)
                if start is None:
                    continue
                found = self.resolve(start[0], list(start[1]) + segs[i:], seen)
                if found is not None and not isinstance(found, str):
                    return found
            return f"`{seg}` is not an item of `{'::'.join(('crate',) + cur)}`"
        return cur

    def uses(self):
        """(from file module, to file module, file, line, spelling) of every use, and the
        errors of unknown names."""
        out, errors = [], []
        for module, src in self.files.items():
            for pos, text, kind in paths_of(src):
                segs = re.sub(r"\s*::\s*", "::", text).split("::")
                scope = src.scope(pos)
                for path in expand(segs):
                    start = self.start(src, scope, path)
                    if start is None:
                        continue
                    if kind == "mention" and path[1] not in self.children(()):
                        continue  # prose about a name, not a module of the crate
                    target = self.resolve(*start)
                    if kind == "link" and public(path, self.alias, self.children(())) and not isinstance(target, str):
                        continue
                    if isinstance(target, str):
                        errors.append(f"{src.rel}:{src.line(pos)}: `{'::'.join(path)}`: {target}")
                    elif target is not None:
                        out.append((module, target, src.rel, src.line(pos), "::".join(path)))
        return out, errors


def public(path, alias, modules):
    """Whether a doc link names the crate's public face: a `dynamo_model::` path or a root
    name (`crate::Db`), not a module of the tree (`crate::db::Db`)."""
    return path[0] == alias or (path[0] == "crate" and len(path) > 1 and path[1] not in modules)


def expand(segs):
    """The paths of a path that may end in a group: `crate::{a, b::c}` gives two."""
    text = "::".join(segs)
    if "{" not in text:
        return [segs]
    return [p for p, _ in use_tree(text)]


def paths_of(src):
    """(offset, path text) of every path in code and every path in a doc link or comment."""
    code = src.code
    for m in PATH.finditer(code):
        if m.group(2) == "{":
            end = match_brace(code, m.end())
            yield m.start(), code[m.start():end], "code"
        else:
            end = m.end()
            while True:
                nxt = re.match(r"\s*::\s*(\w+|\*|\{)", code[end:])
                if not nxt:
                    break
                if nxt.group(1) == "{":
                    end = match_brace(code, end + nxt.end())
                    break
                end += nxt.end()
            yield m.start(), code[m.start():end], "code"
    for text, offset in src.comments:
        doc = text.startswith(("///", "//!", "/**", "/*!"))
        targets = []
        if doc:
            for m in DOC_LINK.finditer(text):
                targets.append((m.start(), m.group(1) or m.group(2) or m.group(3)))
        seen = set()
        for at, target in targets:
            target = re.sub(r"^\w+@|[!]$|\(\)$|#.*$|<.*$", "", target.strip("`"))
            if re.fullmatch(r"\w+(::\w+)+", target) and target not in seen:
                seen.add(target)
                yield offset + at, target, "link"
        for m in re.finditer(r"\bcrate::\w+", text):
            yield offset + m.start(), m.group(0), "mention"


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def submodule_graphs(uses):
    """For each module, the graph of its submodules: `a` uses `b` when a file under
    `module::a` uses an item defined under `module::b`."""
    graphs = {}
    for frm, to, *_ in uses:
        n = 0
        while n < min(len(frm), len(to)) and frm[n] == to[n]:
            n += 1
        if n < len(frm) and n < len(to):
            graphs.setdefault(frm[:n], {}).setdefault(frm[n], set()).add(to[n])
    return graphs


def check_cycles(crate, uses, skip_root=False):
    """A cycle among the submodules of any module (of the top-level ones unless `skip_root`)."""
    errors = []
    for module, graph in sorted(submodule_graphs(uses).items()):
        if skip_root and not module:
            continue
        for comp in cycles(graph):
            name = "::".join(("crate",) + module)
            edges = sorted(f"{a} -> {b}" for a in comp for b in graph.get(a, ()) if b in comp)
            errors.append(f"cycle inside `{name}`: {', '.join(comp)} ({'; '.join(edges)})")
    return errors


def check(root=ROOT, layers=LAYERS, alias=ALIAS):
    """The errors of the crate whose src is `root`: layer violations (when `layers` is
    given), unknown names and cycles inside modules. Returns (errors, top-level graph)."""
    crate = Crate(root, alias)
    uses, errors = crate.uses()
    graph = {}
    for frm, to, *_ in uses:
        if frm and to and frm[0] != to[0]:
            graph.setdefault(frm[0], set()).add(to[0])
    if layers is not None:
        errors += check_layers(crate, uses, layers)
    # With a layer map, a cycle among the top-level modules is a layer violation already.
    errors += check_cycles(crate, uses, skip_root=layers is not None)
    return errors, graph


def check_layers(crate, uses, layers):
    rank, layer_of = {}, {}
    for layer, mods in layers:
        for m in mods:
            rank[m] = len(rank)
            layer_of[m] = layer
    modules = crate.children(())
    errors = []
    missing = sorted(modules - set(rank))
    stale = sorted(set(rank) - modules)
    if missing:
        errors.append(f"modules missing from the layer map: {', '.join(missing)}")
    if stale:
        errors.append(f"layer map names modules that do not exist: {', '.join(stale)}")
    for frm, to, rel, line, spelling in uses:
        if not frm or not to or frm[0] == to[0] or frm[0] not in rank or to[0] not in rank:
            continue
        top, target = frm[0], to[0]
        if rank[target] > rank[top]:
            errors.append(
                f"{rel}:{line}: `{top}` ({layer_of[top]}) uses `{target}` "
                f"({layer_of[target]}), which is above it: `{spelling}`"
            )
    return errors


def report(errors, what):
    if errors:
        print(f"\n{len(errors)} {what}:", file=sys.stderr)
        for e in errors:
            print(f"  {e}", file=sys.stderr)
        return 1
    return 0


def main(argv):
    if "--cycles" in argv:
        root = argv[argv.index("--cycles") + 1]
        errors, _ = check(root, layers=None, alias=None)
        if report(errors, "errors"):
            return 1
        print(f"cycles: no module of {root} has a cycle among its submodules")
        return 0
    errors, graph = check()
    rank = {m: i for i, m in enumerate(m for _, mods in LAYERS for m in mods)}
    for layer, mods in LAYERS:
        print(f"{layer:>10}: {' '.join(mods)}")
    if "--graph" in argv:
        for m in sorted(graph, key=lambda m: rank.get(m, -1)):
            print(f"  {m} -> {' '.join(sorted(graph[m], key=lambda t: rank.get(t, -1)))}")
    if report(errors, "errors"):
        return 1
    print("layers: no module uses a module above it, no module has a cycle among its submodules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
