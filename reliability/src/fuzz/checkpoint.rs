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
    // The file of migration "m" is found by saving a checkpoint once.
    let Some(file) = file_of(dir) else {
        return;
    };
    if std::fs::write(&file, data).is_err() {
        return;
    }
    if let Some(Ok(Some(loaded))) = now(store.load("m")) {
        assert_eq!(Checkpoint::from_text(&loaded.to_text()), Some(loaded));
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Some(read) = Checkpoint::from_text(text)
    {
        assert_eq!(Checkpoint::from_text(&read.to_text()), Some(read));
    }
}

/// A directory of this process's own.
fn directory() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        std::env::temp_dir().join(format!("fuzz-checkpoints-{}", std::process::id()))
    })
}

/// The checkpoint file of migration "m" in `dir`: where a save puts it.
fn file_of(dir: &PathBuf) -> Option<PathBuf> {
    static FILE: OnceLock<Option<PathBuf>> = OnceLock::new();
    FILE.get_or_init(|| {
        let store = FileCheckpoints::new(dir);
        let checkpoint = Checkpoint::from_text("v1 AA 0 0 0 0 0 0 0 0 0 0")?;
        now(store.save("m", &checkpoint))?.ok()?;
        std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|path| path.extension().is_some_and(|e| e == "checkpoint"))
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
