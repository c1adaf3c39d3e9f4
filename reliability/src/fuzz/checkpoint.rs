//! Migration checkpoint files, read by `FileCheckpoints` (a file another process or a
//! crash may have left in any state).

use dynamo_model::migrate::{Checkpoint, CheckpointStore, FileCheckpoints};
use std::future::Future;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};

/// Writes the input as a checkpoint file and loads it; a checkpoint read must read back
/// the same from its own text.
pub fn checkpoint(data: &[u8]) {
    let dir = directory();
    let store = FileCheckpoints::new(dir);
    // The file of this process's migration is found by saving a checkpoint once.
    let Some(file) = file_of(dir) else {
        return;
    };
    if std::fs::write(&file, data).is_err() {
        return;
    }
    let loaded = now(store.load(migration()));
    // Nothing is left behind (each execution writes the file anew).
    let _ = std::fs::remove_file(&file);
    if let Some(Ok(Some(loaded))) = loaded {
        assert_eq!(Checkpoint::from_text(&loaded.to_text()), Some(loaded));
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Some(read) = Checkpoint::from_text(text)
    {
        assert_eq!(Checkpoint::from_text(&read.to_text()), Some(read));
    }
}

/// The directory of the checkpoint files, shared by every process (each has a file of
/// its own).
fn directory() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| std::env::temp_dir().join("dynamo-model-fuzz-checkpoints"))
}

/// The migration this process reads the checkpoint of.
fn migration() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| format!("fuzz-{}", std::process::id()))
}

/// The checkpoint file of this process's migration in `dir`: where a save puts it.
fn file_of(dir: &PathBuf) -> Option<PathBuf> {
    static FILE: OnceLock<Option<PathBuf>> = OnceLock::new();
    FILE.get_or_init(|| {
        let store = FileCheckpoints::new(dir);
        let checkpoint = Checkpoint::from_text("v1 AA 0 0 0 0 0 0 0 0 0 0")?;
        now(store.save(migration(), &checkpoint))?.ok()?;
        std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|path| {
                path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with(&format!("{}-", migration())) && n.ends_with(".checkpoint")
                })
            })
    })
    .clone()
}

/// The output of a future that completes without waiting (the file store's do).
fn now<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(out) => Some(out),
        Poll::Pending => None,
    }
}
