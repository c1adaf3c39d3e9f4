//! The README's first contact: the `[dependencies]` lines it gives, its feature table, the
//! minimum Rust version and the licence say what the runtime crate's manifest says. Reads
//! files only; no DynamoDB Local.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

fn read(path: &str) -> String {
    let path = root().join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn manifest(path: &str) -> Table {
    read(path)
        .parse()
        .unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// The runtime crate's manifest, with what it inherits from the workspace filled in.
struct Manifest {
    version: String,
    rust_version: String,
    license: String,
    features: BTreeSet<String>,
    default: BTreeSet<String>,
}

fn runtime_manifest() -> Manifest {
    let crate_ = manifest("dynamo-model/Cargo.toml");
    let workspace = manifest("Cargo.toml");
    let package = |key: &str| -> String {
        let value = &crate_["package"][key];
        let value = match value.get("workspace") {
            Some(Value::Boolean(true)) => &workspace["workspace"]["package"][key],
            _ => value,
        };
        value
            .as_str()
            .unwrap_or_else(|| panic!("package.{key}"))
            .to_owned()
    };
    let table = crate_["features"].as_table().expect("a [features] table");
    let default = table["default"]
        .as_array()
        .expect("default features")
        .iter()
        .map(|f| f.as_str().expect("a feature name").to_owned())
        .collect();
    Manifest {
        version: package("version"),
        rust_version: package("rust-version"),
        license: package("license"),
        features: table.keys().filter(|k| *k != "default").cloned().collect(),
        default,
    }
}

/// The contents of the README's fenced blocks of the given language.
fn blocks<'a>(readme: &'a str, language: &str) -> Vec<&'a str> {
    let fence = format!("```{language}\n");
    readme
        .split(fence.as_str())
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap_or_default())
        .collect()
}

/// Every `dynamo-model` entry of the README's TOML blocks, with its section.
fn readme_dependencies(readme: &str) -> Vec<(String, Table)> {
    let mut found = Vec::new();
    for block in blocks(readme, "toml") {
        let parsed: Table = block
            .parse()
            .unwrap_or_else(|err| panic!("a README TOML block does not parse: {err}\n{block}"));
        for (section, deps) in &parsed {
            if let Some(entry) = deps.get("dynamo-model") {
                let entry = entry.as_table().unwrap_or_else(|| {
                    panic!("[{section}] dynamo-model: give a table with version and features")
                });
                found.push((section.clone(), entry.clone()));
            }
        }
    }
    found
}

fn features_of(entry: &Table) -> Vec<String> {
    entry
        .get("features")
        .and_then(Value::as_array)
        .map(|list| {
            let name = |f: &Value| f.as_str().expect("a feature name").to_owned();
            list.iter().map(name).collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_dependency_lines_match_the_manifest() {
    let manifest = runtime_manifest();
    let readme = read("README.md");
    let deps = readme_dependencies(&readme);
    assert!(
        deps.iter().any(|(section, _)| section == "dependencies"),
        "the README gives no [dependencies] line for dynamo-model"
    );
    for (section, entry) in &deps {
        let version = entry.get("version").and_then(Value::as_str);
        assert_eq!(
            version,
            Some(manifest.version.as_str()),
            "[{section}] dynamo-model: the version is the manifest's"
        );
        for feature in features_of(entry) {
            assert!(
                manifest.features.contains(&feature),
                "[{section}] dynamo-model: no feature `{feature}` in dynamo-model/Cargo.toml"
            );
        }
    }
    // The first block is what the quickstart needs: `dynamo_model::local`.
    let quickstart = read("examples/src/bin/quickstart/main.rs");
    let (section, first) = &deps[0];
    assert_eq!(section, "dependencies");
    if quickstart.contains("local::") {
        assert!(features_of(first).iter().any(|f| f == "local"));
    }
}

#[test]
fn the_feature_table_lists_every_feature_and_the_defaults() {
    let manifest = runtime_manifest();
    let readme = read("README.md");
    let section = readme
        .split("### Features\n")
        .nth(1)
        .expect("a `### Features` section");
    let mut listed = BTreeSet::new();
    let mut default = BTreeSet::new();
    for row in section
        .lines()
        .take_while(|l| l.is_empty() || l.starts_with('|'))
    {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some(name) = cells
            .get(1)
            .and_then(|c| c.strip_prefix('`')?.strip_suffix('`'))
        else {
            continue;
        };
        listed.insert(name.to_owned());
        if cells.get(2) == Some(&"yes") {
            default.insert(name.to_owned());
        }
    }
    assert_eq!(listed, manifest.features, "the README's feature table");
    assert_eq!(default, manifest.default, "the README's default features");
}

#[test]
fn the_minimum_rust_version_and_the_licence_are_stated() {
    let manifest = runtime_manifest();
    let readme = read("README.md");
    let rust = format!("Rust {} or newer", manifest.rust_version);
    assert!(readme.contains(&rust), "the README says `{rust}`");
    assert!(
        readme.contains(&manifest.license),
        "the README names the licence {}",
        manifest.license
    );
    for file in ["LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(
            readme.contains(&format!("({file})")),
            "the README links {file}"
        );
        assert!(!read(file).is_empty());
    }
    assert_eq!(
        manifest.license, "MIT OR Apache-2.0",
        "the LICENSE files are these two"
    );
}
