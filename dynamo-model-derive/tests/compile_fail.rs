//! Derive diagnostics: every compile error of the derives, with its `.stderr` snapshot.
//! All cases share one `TestCases`, which trybuild checks in one batched `cargo check`;
//! the inputs that must compile are ordinary tests of the runtime crate
//! (`dynamo-model/tests/derive_accepts.rs`).

#[test]
fn derive_errors() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
