#!/usr/bin/env python3
"""Tests of the layer and cycle check (`scripts/layers.py`): each spelling of a use of a
higher module is caught, a cycle inside a module is caught, and a clean crate passes; a
layer map names every module and no other, orders the modules inside a layer, and the
crate's own map names each module once.

    python3 scripts/test_layers.py
"""
import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402

# A two-layer crate: `low` below `high`. `high` uses `low`, which is allowed.
LAYERS = [("bottom", ["low"]), ("top", ["high"])]
LIB = """\
extern crate self as dynamo_model;
mod high;
mod low;
pub use high::Thing;
"""
HIGH = """\
use crate::low::Base;
pub struct Thing;
pub struct More;
pub mod sub;
pub fn make(_: Base) -> Thing { Thing }
"""
LOW = """\
//! The bottom layer.
pub struct Base;
"""


class Fixture:
    """A crate written to a temporary directory: `files` maps a path under src to its text."""

    def __init__(self, files):
        self.dir = tempfile.TemporaryDirectory()
        base = {"lib.rs": LIB, "high.rs": HIGH, "high/sub.rs": "pub struct Deep;\n", "low.rs": LOW}
        base.update(files)
        for rel, text in base.items():
            path = os.path.join(self.dir.name, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(textwrap.dedent(text))

    def errors(self, layer_map=LAYERS):
        errors, _ = layers.check(self.dir.name, layer_map, "dynamo_model")
        self.dir.cleanup()
        return errors


def low(extra):
    """The fixture with `extra` appended to low.rs."""
    return Fixture({"low.rs": LOW + textwrap.dedent(extra)})


class UpwardUses(unittest.TestCase):
    def assert_upward(self, errors):
        self.assertTrue(errors, "no error reported")
        self.assertTrue(
            any("`low` (bottom) uses `high` (top)" in e for e in errors),
            "\n".join(errors),
        )

    def test_crate_path(self):
        self.assert_upward(low("use crate::high::Thing;\n").errors())

    def test_crate_path_in_code(self):
        self.assert_upward(low("fn f() { let _ = crate::high::make(Base); }\n").errors())

    def test_nested_group(self):
        self.assert_upward(low("use crate::{low::Base as B, high::{sub::{Deep}, More}};\n").errors())

    def test_root_reexport(self):
        self.assert_upward(low("use crate::Thing;\n").errors())

    def test_super_path(self):
        files = {
            "low.rs": LOW + "mod inner;\n",
            "low/inner.rs": "use super::super::high::More;\n",
        }
        self.assert_upward(Fixture(files).errors())

    def test_self_path(self):
        self.assert_upward(low("use self::super::high::More;\n").errors())

    def test_super_in_inline_module(self):
        self.assert_upward(low("mod inner {\n    use super::super::high::More;\n}\n").errors())

    def test_alias_path(self):
        self.assert_upward(low("fn f() { let _ = dynamo_model::high::More; }\n").errors())

    def test_cfg_doc_import(self):
        self.assert_upward(low("#[cfg(doc)]\nuse dynamo_model::high::More;\n").errors())

    def test_doc_link(self):
        self.assert_upward(low("/// Made by [`make`](crate::high::make).\npub struct B;\n").errors())

    def test_doc_link_shortcut(self):
        self.assert_upward(low("/// See [`super::high::More`].\npub struct B;\n").errors())

    def test_doc_link_reference(self):
        self.assert_upward(low("/// See [`More`].\n///\n/// [`More`]: crate::high::More\npub struct B;\n").errors())

    def test_comment_mention(self):
        # As the reference tool counts it: any `crate::module` written in a comment.
        self.assert_upward(low("// Called by crate::high on every item.\npub struct B;\n").errors())


class Names(unittest.TestCase):
    def test_unknown_name(self):
        errors = low("use crate::nothing::X;\n").errors()
        self.assertTrue(any("`nothing` is not an item of `crate`" in e for e in errors), errors)

    def test_unknown_item_of_a_module(self):
        errors = low("fn f() { let _ = crate::low::Missing; }\n").errors()
        self.assertTrue(any("`Missing` is not an item of `crate::low`" in e for e in errors), errors)

    def test_unknown_doc_link(self):
        errors = low("/// See [`X`](crate::high::Nothing).\npub struct B;\n").errors()
        self.assertTrue(any("`Nothing` is not an item of `crate::high`" in e for e in errors), errors)

    def test_layer_map_names_every_module(self):
        errors = Fixture({}).errors([("bottom", ["low"])])
        self.assertIn("modules missing from the layer map: high", errors)

    def test_layer_map_names_no_other_module(self):
        errors = Fixture({}).errors([("bottom", ["low", "gone"]), ("top", ["high"])])
        self.assertIn("layer map names modules that do not exist: gone", errors)

    def test_order_inside_a_layer(self):
        # Inside a layer, a module uses only the ones listed before it.
        self.assertEqual(Fixture({}).errors([("one", ["low", "high"])]), [])
        errors = Fixture({}).errors([("one", ["high", "low"])])
        self.assertTrue(any("`high` (one) uses `low` (one), which is above it" in e
                            for e in errors), errors)

    def test_crate_layer_map_names_each_module_once(self):
        # A module listed twice would silently take its last place.
        names = [m for _, mods in layers.LAYERS for m in mods]
        self.assertEqual(sorted(m for m in set(names) if names.count(m) > 1), [])
        self.assertTrue(all(mods for _, mods in layers.LAYERS), layers.LAYERS)


class Cycles(unittest.TestCase):
    FILES = {
        "low.rs": LOW + "mod a;\nmod b;\nmod c;\n",
        "low/a.rs": "pub struct A;\n",
        "low/b.rs": "use super::a::A;\npub struct B(pub A);\n",
        "low/c.rs": "pub struct C(pub super::b::B);\n",
    }

    def test_acyclic_submodules_pass(self):
        self.assertEqual(Fixture(self.FILES).errors(), [])

    def test_cycle_inside_a_module(self):
        files = dict(self.FILES, **{"low/a.rs": "pub struct A;\nfn f(_: crate::low::c::C) {}\n"})
        errors = Fixture(files).errors()
        self.assertTrue(any(e.startswith("cycle inside `crate::low`: a, b, c") for e in errors), errors)

    def test_cycle_through_a_reexport(self):
        # `super::C` is `c`'s item, re-exported by the parent.
        files = dict(self.FILES, **{
            "low.rs": LOW + "mod a;\nmod b;\nmod c;\npub use c::C;\n",
            "low/a.rs": "pub struct A;\n/// Used by [`C`](super::C).\npub fn f() {}\n",
        })
        errors = Fixture(files).errors()
        self.assertTrue(any(e.startswith("cycle inside `crate::low`") for e in errors), errors)

    def test_cycle_check_without_layers(self):
        files = dict(self.FILES, **{"low/a.rs": "use super::c::C;\npub struct A;\n"})
        errors = Fixture(files).errors(None)
        self.assertEqual(len(errors), 1, errors)
        self.assertTrue(errors[0].startswith("cycle inside `crate::low`"), errors)


class Clean(unittest.TestCase):
    def test_clean_crate_passes(self):
        self.assertEqual(Fixture({}).errors(), [])

    def test_allowed_spellings_pass(self):
        text = """\
            //! Nothing here uses `high`: [`Base`](crate::low::Base) is this module's own.
            use self::detail::Inner;
            mod detail {
                pub struct Inner;
            }
            /// Linked through the crate's public face, as a user would:
            /// [`Thing`](crate::Thing), [`More`](dynamo_model::high::More).
            pub fn f(_: Inner) {}
            const S: &str = "crate::high::Thing is only text";
            #[cfg(test)]
            mod tests {
                use crate::high::Thing;
            }
            """
        self.assertEqual(low(text).errors(), [])


if __name__ == "__main__":
    unittest.main()
