//! The README's first Rust example is the quickstart program, line for line. CI runs the
//! quickstart (`cargo run -p examples --bin quickstart`), so the README's example is known
//! to compile and to run against DynamoDB Local.

/// The body of the first code block of `markdown` whose info string starts with `rust`.
fn first_rust_block(markdown: &str) -> Option<String> {
    let mut lines = markdown.lines();
    lines.find(|line| line.starts_with("```rust"))?;
    let mut body = String::new();
    for line in lines {
        if line.starts_with("```") {
            return Some(body);
        }
        body.push_str(line);
        body.push('\n');
    }
    None // an unterminated block
}

#[test]
fn the_readme_example_is_the_quickstart() {
    let readme = include_str!("../../README.md");
    let quickstart = include_str!("../src/bin/quickstart/main.rs");
    let block = first_rust_block(readme).expect("the README has a Rust code block");
    assert_eq!(
        block, quickstart,
        "README.md's first Rust example differs from examples/src/bin/quickstart/main.rs"
    );
    let lines = quickstart.lines().count();
    assert!(
        lines <= 25,
        "the quickstart has {lines} lines; the README promises at most 25"
    );
}

#[test]
fn a_different_block_is_noticed() {
    let readme = "# t\n\n```sh\nls\n```\n\n```rust,ignore\nfn main() {}\n```\n";
    assert_eq!(first_rust_block(readme).as_deref(), Some("fn main() {}\n"));
    assert_eq!(first_rust_block("```rust\nfn main() {}\n"), None);
}
