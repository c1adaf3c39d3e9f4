//! What a scenario reports: its figures, what it counted on the wire, and its checks.

use aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextRef, BeforeTransmitInterceptorContextRef,
    FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use dynamo_model::{Db, Table};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Counts what a client sends: calls (one per SDK operation: one `PutItem`, one
/// `BatchWriteItem`) and attempts (the SDK sends a call again after a throttle, a 5xx, a
/// timeout or a broken connection), and how attempts failed other than by a 4xx answer.
#[derive(Debug, Clone, Default)]
pub struct Wire(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    calls: AtomicU64,
    attempts: AtomicU64,
    failures: Mutex<BTreeMap<String, u64>>,
}

impl Wire {
    /// `db` on a client of its own that counts into this wire.
    pub fn attach<T: Table>(&self, db: &Db<T>) -> Db<T> {
        let config = db.client().config().to_builder().interceptor(self.clone());
        Db::new(
            aws_sdk_dynamodb::Client::from_conf(config.build()),
            db.table_name(),
        )
    }

    /// Calls sent (SDK operations).
    pub fn calls(&self) -> u64 {
        self.0.calls.load(Ordering::Relaxed)
    }

    /// Attempts sent (calls plus the SDK's own resends).
    pub fn attempts(&self) -> u64 {
        self.0.attempts.load(Ordering::Relaxed)
    }

    /// Attempts that ended in a 5xx answer or without one, by kind.
    pub fn failures(&self) -> BTreeMap<String, u64> {
        self.0
            .failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Intercept for Wire {
    fn name(&self) -> &'static str {
        "reliability::load::Wire"
    }

    fn read_before_execution(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        self.0.calls.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn read_before_attempt(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        self.0.attempts.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        let status = context.response().map(|r| r.status());
        let kind = match (status, context.output_or_error()) {
            (Some(s), _) if s.is_server_error() => format!("HTTP {}", s.as_u16()),
            (None, Some(Err(e))) if e.is_timeout_error() => "timeout".into(),
            (None, Some(Err(e))) => format!("no answer: {e}"),
            _ => return Ok(()),
        };
        let mut failures = self
            .0
            .failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *failures.entry(kind).or_default() += 1;
        Ok(())
    }
}

/// One scenario's outcome.
#[derive(Debug, Default)]
pub struct Report {
    pub name: &'static str,
    /// Operations that succeeded (increments, revisions, adds, puts, items loaded).
    pub ops: u64,
    /// Wall time of the load itself (setting up and checking excluded).
    pub took: Duration,
    /// Writes refused because another writer got there first.
    pub conflicts: u64,
    /// Operations tried again: by the writer or `revise` after a conflict, and calls
    /// beyond the least the attempts need (the crate's resends of unprocessed items or of
    /// transactions, the settling reads of ambiguous writes).
    pub retries: u64,
    /// Calls sent, and the SDK's resends of them.
    pub calls: u64,
    pub sdk_retries: u64,
    /// Further figures, as `name: value` phrases.
    pub notes: Vec<String>,
    /// Each check and whether it held.
    pub checks: Vec<(String, bool)>,
}

impl Report {
    pub fn new(name: &'static str) -> Self {
        Report {
            name,
            ..Report::default()
        }
    }

    /// Records the calls `wire` counted: `least` is the number the attempts need, and
    /// `tried_again` the attempts after a conflict.
    pub fn wire(&mut self, wire: &Wire, least: u64, tried_again: u64) {
        self.calls = wire.calls();
        self.sdk_retries = wire.attempts().saturating_sub(self.calls);
        self.retries = tried_again + self.calls.saturating_sub(least);
        let failures = wire.failures();
        if !failures.is_empty() {
            self.notes.push(format!(
                "attempts that failed without a 4xx answer (the SDK resends these): {failures:?}"
            ));
        }
    }

    /// Records check `what` with its outcome.
    pub fn check(&mut self, what: impl Into<String>, held: bool) {
        self.checks.push((what.into(), held));
    }

    pub fn held(&self) -> bool {
        self.checks.iter().all(|(_, held)| *held)
    }

    /// Operations a second.
    pub fn rate(&self) -> f64 {
        per_second(self.ops, self.took)
    }

    /// The row of the summary table.
    pub fn row(&self) -> String {
        let held = self.checks.iter().filter(|(_, h)| *h).count();
        format!(
            "| {} | {} | {:.2} s | {:.0} | {} | {} | {} | {} | {} of {} |",
            self.name,
            self.ops,
            self.took.as_secs_f64(),
            self.rate(),
            self.conflicts,
            self.retries,
            self.calls,
            self.sdk_retries,
            held,
            self.checks.len()
        )
    }

    /// The scenario's details: its notes and every check.
    pub fn details(&self) -> String {
        let mut out = format!("### {}\n\n", self.name);
        for note in &self.notes {
            out += &format!("- {note}\n");
        }
        for (what, held) in &self.checks {
            out += &format!("- [{}] {what}\n", if *held { "x" } else { " " });
        }
        out
    }
}

/// The summary table's header.
pub const HEADER: &str = "| scenario | operations | duration | ops/s | conflicts | retries | calls | SDK resends | checks held |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |";

/// `n` over `took`, a second's worth.
pub fn per_second(n: u64, took: Duration) -> f64 {
    let secs = took.as_secs_f64();
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}
