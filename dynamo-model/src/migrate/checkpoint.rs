//! Checkpoints: where a migration stands, saved after every page, and the stores that keep them.

use super::{BoxFuture, Progress};
use crate::cursor::{Cursor, Fingerprint};
use crate::{Error, ValidationReason};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A saved position of a migration: where each segment stands and the counts so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Every segment's position, bound to the migration (a checksummed cursor).
    pub positions: Cursor,
    /// The counts up to that position.
    pub progress: Progress,
}

impl Checkpoint {
    /// The checkpoint as one line of text (what [`FileCheckpoints`] stores).
    pub fn to_text(&self) -> String {
        format!("v1 {} {}", self.positions, self.progress.to_text())
    }

    /// Reads [`Checkpoint::to_text`]'s text back (`None` when it is not one).
    pub fn from_text(text: &str) -> Option<Checkpoint> {
        let rest = text.trim().strip_prefix("v1 ")?;
        let (positions, progress) = rest.split_once(' ')?;
        Some(Checkpoint {
            positions: Cursor::from(positions),
            progress: Progress::from_text(progress)?,
        })
    }
}

/// Where checkpoints are kept, by migration name.
pub trait CheckpointStore: Send + Sync {
    /// The last checkpoint saved for `migration`.
    fn load<'a>(&'a self, migration: &'a str) -> BoxFuture<'a, Result<Option<Checkpoint>, Error>>;
    /// Saves `checkpoint` for `migration`, replacing the previous one.
    fn save<'a>(
        &'a self,
        migration: &'a str,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), Error>>;
}

/// Checkpoints in memory (shared by clones): for tests, and for jobs that resume within
/// one process.
#[derive(Debug, Clone, Default)]
pub struct MemoryCheckpoints(Arc<Mutex<HashMap<String, Checkpoint>>>);

impl MemoryCheckpoints {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The checkpoint saved for `migration`.
    pub fn get(&self, migration: &str) -> Option<Checkpoint> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(migration)
            .cloned()
    }
}

impl CheckpointStore for MemoryCheckpoints {
    fn load<'a>(&'a self, migration: &'a str) -> BoxFuture<'a, Result<Option<Checkpoint>, Error>> {
        let found = self.get(migration);
        Box::pin(async move { Ok(found) })
    }

    fn save<'a>(
        &'a self,
        migration: &'a str,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), Error>> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(migration.to_owned(), checkpoint.clone());
        Box::pin(async { Ok(()) })
    }
}

/// Checkpoints in files, one per migration (`<dir>/<name>.checkpoint`), each replaced
/// atomically (written to a temporary file, then renamed over it).
#[derive(Debug, Clone)]
pub struct FileCheckpoints {
    dir: PathBuf,
}

impl FileCheckpoints {
    /// A store in directory `dir` (created on the first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileCheckpoints { dir: dir.into() }
    }

    fn path(&self, migration: &str) -> PathBuf {
        // A name is any text: keep the file name to safe characters, and short (file
        // systems allow 255 bytes); the digest of the whole name tells names apart.
        let file: String = migration
            .chars()
            .take(100)
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        // Names that differ only in other characters get files of their own.
        let digest: String = Fingerprint::of(&[migration.as_bytes()]).bytes()[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        self.dir.join(format!("{file}-{digest}.checkpoint"))
    }
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> Error {
    Error::Io {
        context: format!("migration checkpoint {}", path.display()),
        source: e,
    }
}

impl CheckpointStore for FileCheckpoints {
    fn load<'a>(&'a self, migration: &'a str) -> BoxFuture<'a, Result<Option<Checkpoint>, Error>> {
        Box::pin(async move {
            let path = self.path(migration);
            match std::fs::read_to_string(&path) {
                Ok(text) => Checkpoint::from_text(&text).map(Some).ok_or_else(|| {
                    Error::invalid_request(
                        "Migration",
                        ValidationReason::InvalidOption,
                        format!("{} is not a migration checkpoint", path.display()),
                    )
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io_error(&path, e)),
            }
        })
    }

    fn save<'a>(
        &'a self,
        migration: &'a str,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let path = self.path(migration);
            // One short line per page: blocking file calls are cheaper than a thread.
            std::fs::create_dir_all(&self.dir).map_err(|e| io_error(&self.dir, e))?;
            // A temporary file of this save's own (two runs sharing the directory never
            // write one file), synced before it replaces the checkpoint: a crash leaves
            // the old checkpoint or the new one, whole.
            static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let save = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let temporary =
                path.with_extension(format!("checkpoint.{}-{save}.tmp", std::process::id()));
            let written = (|| {
                use std::io::Write;
                let mut file = std::fs::File::create(&temporary)?;
                file.write_all(checkpoint.to_text().as_bytes())?;
                file.sync_all()
            })();
            if let Err(e) = written {
                let _ = std::fs::remove_file(&temporary);
                return Err(io_error(&temporary, e));
            }
            std::fs::rename(&temporary, &path).map_err(|e| {
                let _ = std::fs::remove_file(&temporary);
                io_error(&path, e)
            })
        })
    }
}
