//! What errors' messages show of keys: nothing unless the program opted in with
//! [`Error::show_keys`], as traces show keys only with `Db::trace_keys`. A key can hold
//! personal data (an email in `USER#{email}`), and an error's message ends up in logs;
//! the key stays in the error's fields for code that needs it.

use super::Error;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

static SHOW_KEYS: AtomicBool = AtomicBool::new(false);

impl Error {
    /// Whether the messages of errors (their `Display`) name the keys of the items
    /// involved, for the whole process; off by default. The keys are in the errors'
    /// fields either way (`key`, `first`, `owner`, ...).
    ///
    /// ```
    /// dynamo_model::Error::show_keys(cfg!(debug_assertions)); // keys in messages in debug builds
    /// ```
    pub fn show_keys(show: bool) {
        SHOW_KEYS.store(show, Ordering::Relaxed);
    }

    /// Whether messages name keys (see [`Error::show_keys`]).
    pub fn shows_keys() -> bool {
        #[cfg(test)]
        if SHOWN_HERE.with(std::cell::Cell::get) {
            return true;
        }
        SHOW_KEYS.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
thread_local! {
    /// Keys shown on this thread only: unit tests turn it on without changing what the
    /// tests running beside them see.
    static SHOWN_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with keys shown on this thread.
#[cfg(test)]
pub(super) fn with_keys_shown<R>(f: impl FnOnce() -> R) -> R {
    SHOWN_HERE.with(|shown| shown.set(true));
    let out = f();
    SHOWN_HERE.with(|shown| shown.set(false));
    out
}

/// `before` and a key (or a key's value) when keys are shown, else nothing: ` PK=...,
/// SK=...` after an entity's name, ` in "a#b"` after a refused character.
pub(super) fn suffix(before: &str, key: impl fmt::Display) -> String {
    if Error::shows_keys() {
        format!("{before}{key}")
    } else {
        String::new()
    }
}

/// A key inside a message written before it is shown: the key, or words saying it is
/// not shown.
pub(crate) fn key_text(key: &impl fmt::Display) -> String {
    if Error::shows_keys() {
        key.to_string()
    } else {
        "(key not shown)".to_owned()
    }
}

/// A stored version, in words.
pub(super) fn version(found: Option<u64>) -> String {
    match found {
        Some(version) => format!("version {version}"),
        None => "no version".to_owned(),
    }
}

/// The entity type an item stored under a key has, in words.
pub(super) fn stored(stored: Option<&str>) -> String {
    match stored {
        Some(entity) => format!("an item of entity type {entity}"),
        None => "an item without an entity type".to_owned(),
    }
}
