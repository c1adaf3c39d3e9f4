//! What a soak run counts (operations by kind, invariant checks, how errors were
//! settled) and how it fails: a [`Broken`] invariant, named, with what was seen.

use reliability::{BoxError, Res};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// A broken invariant: the run stops at the first one and names it with the seed.
#[derive(Debug)]
pub struct Broken {
    /// The invariant, as the report's table names it.
    pub invariant: &'static str,
    /// What was expected and what was found.
    pub detail: String,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invariant broken: {}: {}", self.invariant, self.detail)
    }
}

impl std::error::Error for Broken {}

/// Fails with [`Broken`] unless `holds`.
pub fn ensure(holds: bool, invariant: &'static str, detail: impl FnOnce() -> String) -> Res<()> {
    if holds {
        Ok(())
    } else {
        Err(Box::new(Broken {
            invariant,
            detail: detail(),
        }))
    }
}

/// Counters shared by every task of the run.
#[derive(Default)]
pub struct Tally {
    ops: Mutex<BTreeMap<&'static str, u64>>,
    checks: Mutex<BTreeMap<&'static str, u64>>,
    settled: Mutex<BTreeMap<&'static str, u64>>,
}

fn bump(map: &Mutex<BTreeMap<&'static str, u64>>, name: &'static str) {
    *map.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(name)
        .or_default() += 1;
}

fn snapshot(map: &Mutex<BTreeMap<&'static str, u64>>) -> BTreeMap<&'static str, u64> {
    map.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

impl Tally {
    /// One operation of kind `name` was sent (whatever its outcome).
    pub fn op(&self, name: &'static str) {
        bump(&self.ops, name);
    }

    /// Checks invariant `invariant`: counted, then [`ensure`]d.
    pub fn check(
        &self,
        invariant: &'static str,
        holds: bool,
        detail: impl FnOnce() -> String,
    ) -> Res<()> {
        bump(&self.checks, invariant);
        ensure(holds, invariant, detail)
    }

    /// An error was met and settled this way (e.g. "put: outcome unknown, resent").
    pub fn settled(&self, how: &'static str) {
        bump(&self.settled, how);
    }

    pub fn ops(&self) -> BTreeMap<&'static str, u64> {
        snapshot(&self.ops)
    }

    pub fn checks(&self) -> BTreeMap<&'static str, u64> {
        snapshot(&self.checks)
    }

    pub fn settlements(&self) -> BTreeMap<&'static str, u64> {
        snapshot(&self.settled)
    }
}

/// How many times a read that failed (an injected fault the SDK's retries did not
/// absorb) is sent again before the run gives up: reads change nothing, so resending
/// them is always safe.
const READ_ATTEMPTS: u32 = 30;

/// Runs the read `read` until it succeeds, counting each failure in `tally` as
/// `what`. A read failing [`READ_ATTEMPTS`] times in a row stops the run (not an
/// invariant: the harness cannot check anything without reading).
pub async fn read<T, F, Fut>(tally: &Tally, what: &'static str, mut read: F) -> Res<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, dynamo_model::Error>>,
{
    let mut last: Option<BoxError> = None;
    for attempt in 0..READ_ATTEMPTS {
        match read().await {
            Ok(value) => return Ok(value),
            // Every item this run writes decodes: a value that does not (a chunk
            // missing, a checksum that does not match) is a torn write, not a fault.
            Err(dynamo_model::Error::Decode(e)) => {
                return Err(Box::new(Broken {
                    invariant: "every item read decodes (no torn chunked value)",
                    detail: format!("{what}: {e}"),
                }));
            }
            Err(e) => {
                tally.settled(what);
                last = Some(Box::new(e));
                tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt + 1))).await;
            }
        }
    }
    Err(format!("{what}: {READ_ATTEMPTS} attempts failed, the last: {last:?}").into())
}
