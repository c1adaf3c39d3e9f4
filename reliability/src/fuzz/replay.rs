//! The committed corpora (`reliability/fuzz/corpus/<target>/`), replayed through their
//! targets: every input a campaign kept, crashes found included, runs on each test run.

use super::TARGETS;
use std::path::PathBuf;

fn corpus(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target)
}

#[test]
fn every_corpus_input_passes_its_target() {
    for (name, target) in TARGETS {
        let dir = corpus(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.is_file())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "corpus {} is empty", dir.display());
        for file in files {
            let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            // A failure names the input to reproduce it with.
            eprintln!("replaying {}", file.display());
            target(&data);
        }
    }
}

#[test]
fn every_seed_passes_its_target() {
    for (name, _, data) in super::seeds::all() {
        let (_, target) = TARGETS.iter().find(|(n, _)| *n == name).expect("a target");
        target(&data);
    }
}

/// The seeds reach the decoders' far side: each item and key seed decodes.
#[test]
fn seeds_decode() {
    use super::entities::{PROFILE_NAMES, Profile};
    use super::input::Input;
    use dynamo_model::Entity;
    let seeds = super::seeds::all();
    assert!(seeds.iter().filter(|(name, _, _)| *name == "item").count() >= 2);
    for (name, file, data) in seeds {
        if name == "item" {
            let item = Input::new(&data).map(PROFILE_NAMES, 0);
            if let Err(e) = Profile::from_item(item) {
                panic!("{file}: {e}");
            }
        }
        if name == "stream" && file.starts_with("lambda") {
            let event = serde_json::from_slice(&data[1..]).expect("lambda JSON");
            let record = dynamo_model::stream::StreamRecord::from_lambda(event).expect(&file);
            if let Err(e) = record.decode::<Profile>() {
                panic!("{file}: {e}");
            }
        }
    }
}
