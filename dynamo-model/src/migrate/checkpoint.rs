//! Checkpoints: where a migration stands, saved after the items of each request, and the stores
//! that keep them.

use super::{BoxFuture, Progress};
use crate::cursor::{Cursor, Fingerprint};
use crate::{Error, ValidationReason};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

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
///
/// # Temporaries left by a crash
///
/// A save writes `<name>.checkpoint.<pid>-<n>.tmp` (`pid`: the saving process's id),
/// syncs it and renames it over the checkpoint. A process that dies between the two
/// leaves its temporary behind; every later [`load`](CheckpointStore::load) and
/// [`save`](CheckpointStore::save) of the same checkpoint removes such leftovers, and
/// only them, since another process may be saving the same checkpoint at that moment
/// (two runs of one migration, or a run on another machine sharing the directory):
/// - a temporary of this process is never removed by another save (it is one in
///   flight; a save that fails removes its own);
/// - a temporary of a process that is not running on this machine (told by `/proc`
///   where there is one) is removed once it is 30 seconds old: a save takes
///   milliseconds, and the grace spares a process of another machine, whose id means
///   nothing here, between its write and its rename;
/// - any other temporary is removed once it is an hour old: no save lasts that long,
///   and a process id can be reused by an unrelated process (without `/proc` this is
///   the only rule).
///
/// Files of other checkpoints and other names are never touched. Removal is best
/// effort: a leftover that cannot be removed stays, and the save or load goes on.
#[derive(Debug, Clone)]
pub struct FileCheckpoints {
    dir: PathBuf,
}

impl FileCheckpoints {
    /// A store in directory `dir` (created on the first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileCheckpoints { dir: dir.into() }
    }

    pub(super) fn path(&self, migration: &str) -> PathBuf {
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

/// How old a temporary of a process that is not running here must be to be removed.
const DEAD_SAVE_GRACE: Duration = Duration::from_secs(30);

/// How old any other temporary of another process must be to be removed.
const STALE_AFTER: Duration = Duration::from_secs(60 * 60);

/// Removes the temporaries that saves of the checkpoint at `path` left behind (see
/// [`FileCheckpoints`]'s rules). Best effort: errors are ignored.
fn remove_stale_temporaries(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let own = std::process::id();
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = file.to_str().and_then(|file| temporary_pid(file, name)) else {
            continue;
        };
        if pid == own {
            continue;
        }
        let age = entry
            .metadata()
            .and_then(|m| m.modified())
            .map(|modified| now.duration_since(modified).unwrap_or_default());
        if let Ok(age) = age
            && (age >= STALE_AFTER
                || (age >= DEAD_SAVE_GRACE && process_running(pid) == Some(false)))
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The process id in the name of a temporary of checkpoint file `checkpoint`
/// (`<checkpoint>.<pid>-<n>.tmp`), or `None` when `file` is not one.
fn temporary_pid(file: &str, checkpoint: &str) -> Option<u32> {
    let rest = file
        .strip_prefix(checkpoint)?
        .strip_prefix('.')?
        .strip_suffix(".tmp")?;
    let (pid, save) = rest.split_once('-')?;
    save.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Whether process `pid` runs on this machine, or `None` where that cannot be told
/// (no `/proc`).
fn process_running(pid: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return None;
    }
    Some(proc.join(pid.to_string()).exists())
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> Error {
    Error::Io {
        context: format!("migration checkpoint {}", path.display()),
        error: e,
    }
}

impl CheckpointStore for FileCheckpoints {
    fn load<'a>(&'a self, migration: &'a str) -> BoxFuture<'a, Result<Option<Checkpoint>, Error>> {
        Box::pin(async move {
            let path = self.path(migration);
            remove_stale_temporaries(&path);
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
            // One short line per save: blocking file calls are cheaper than a thread.
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
            })?;
            remove_stale_temporaries(&path);
            Ok(())
        })
    }
}
