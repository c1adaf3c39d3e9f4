//! Attacks on the tracker behind the interceptor and on how the interceptor shares units:
//! which partitions `hot_partitions` keeps, the cooldown, odd unit values.

use super::{Touched, share};
use crate::capacity::Units;
use crate::insight::hot::Tracker;
use crate::insight::{PartitionId, PartitionKey, Settings, key_hash};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn settings(top: usize, warn_at: f64, cooldown: Duration) -> Settings {
    Settings {
        top,
        warn_at,
        cooldown,
        ..Settings::default()
    }
}

fn label(key: &str) -> Arc<PartitionId> {
    Arc::new(PartitionId {
        table: Arc::from("t"),
        index: None,
        entity_type: Some(Arc::from("Reading")),
        template: Some("SENSOR#{sensor}"),
        key: PartitionKey::Hashed(key_hash(key)),
    })
}

fn record(t: &mut Tracker, at: Instant, units: Units, key: &str, consumed: f64) -> bool {
    t.record(at, units, key_hash(key), consumed, || label(key), None)
        .is_some()
}

fn kept(t: &Tracker) -> Vec<(PartitionKey, f64)> {
    t.peaks()
        .into_iter()
        .map(|h| (h.partition.key, h.rate))
        .collect()
}

/// With `top(2)`, a third partition far lighter than the two kept must not push out the
/// busier of them: `hot_partitions` is "the busiest partitions seen".
#[test]
fn a_light_partition_does_not_evict_a_busier_peak() {
    let mut t = Tracker::new(settings(2, 0.8, Duration::from_secs(60)));
    let now = Instant::now();
    record(&mut t, now, Units::Write, "A", 100.0);
    record(&mut t, now, Units::Write, "B", 50.0);
    record(&mut t, now, Units::Write, "C", 1.0);
    let keys: Vec<PartitionKey> = kept(&t).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        vec![
            PartitionKey::Hashed(key_hash("A")),
            PartitionKey::Hashed(key_hash("B"))
        ],
        "{:?}",
        kept(&t)
    );
}

/// Peaks are ranked by share of their limit (the doc: "highest share of its limit
/// first"), so a write partition at 6 % of its limit outranks a read one at 3 %.
#[test]
fn peaks_compare_shares_of_the_limit_not_raw_units() {
    let mut t = Tracker::new(settings(1, 0.8, Duration::from_secs(60)));
    let now = Instant::now();
    record(&mut t, now, Units::Write, "W", 60.0);
    record(&mut t, now, Units::Read, "R", 100.0);
    let peaks = t.peaks();
    assert_eq!(peaks.len(), 1);
    assert_eq!(peaks[0].units, Units::Write, "{peaks:?}");
}

/// The cooldown holds whatever the number of hot partitions.
#[test]
fn the_cooldown_holds_with_more_hot_partitions_than_top() {
    let mut t = Tracker::new(settings(2, 0.001, Duration::from_secs(3_600)));
    let start = Instant::now();
    let mut warned = 0;
    for round in 0..5u32 {
        let at = start + Duration::from_millis(u64::from(round));
        for key in ["A", "B", "C"] {
            warned += usize::from(record(&mut t, at, Units::Write, key, 10.0));
        }
    }
    assert_eq!(warned, 3, "one warning per partition per cooldown");
}

/// A regression test of the cooldown itself: one warning per partition per period, again
/// once it passed.
#[test]
fn the_cooldown_limits_warnings_per_partition() {
    let mut t = Tracker::new(settings(64, 0.001, Duration::from_millis(500)));
    let start = Instant::now();
    let mut at_times = Vec::new();
    for ms in (0..1_200u64).step_by(50) {
        if record(
            &mut t,
            start + Duration::from_millis(ms),
            Units::Write,
            "A",
            5.0,
        ) {
            at_times.push(ms);
        }
    }
    assert_eq!(at_times, vec![0, 500, 1_000]);
    assert_eq!(t.warnings().len(), 3);
}

/// Odd values never make a rate, a share or a template total negative or not a number.
#[test]
fn odd_units_leave_every_figure_finite_and_non_negative() {
    let mut t = Tracker::new(settings(4, 0.8, Duration::from_secs(60)));
    let now = Instant::now();
    for consumed in [f64::NAN, -5.0, -0.0, 0.0, 1e-9, 0.24, 0.25, 0.5, 3.0] {
        let _ = record(&mut t, now, Units::Read, "A", consumed);
        let _ = record(&mut t, now, Units::Write, "A", consumed);
    }
    for h in t.peaks().into_iter().chain(t.current(now)) {
        assert!(h.rate.is_finite() && h.rate >= 0.0, "{h:?}");
        assert!(
            h.share.is_finite() && (0.0..=1.0).contains(&h.share),
            "{h:?}"
        );
        assert!(h.shards >= 1);
    }
    for l in t.templates() {
        assert!(l.read_units.is_finite() && l.read_units >= 0.0, "{l:?}");
        assert!(l.write_units.is_finite() && l.write_units >= 0.0, "{l:?}");
    }
}

fn touched(index: Option<&'static str>, pk: &str, estimate: f64) -> Touched {
    Touched {
        index,
        pk: pk.into(),
        sk: None,
        entity_type: None,
        estimate,
    }
}

/// A reported total is shared in proportion to the estimates and adds up to the total;
/// zero estimates or totals give no NaN.
#[test]
fn shares_add_up_to_the_reported_total_and_are_never_nan() {
    let reported: HashMap<Option<&'static str>, f64> =
        [(None, 10.0), (Some("GSI1"), 0.0)].into_iter().collect();
    let out = share(
        vec![
            touched(None, "a", 1.0),
            touched(None, "b", 3.0),
            touched(Some("GSI1"), "x", 0.0),
            touched(Some("GSI2"), "y", 2.0),
        ],
        &reported,
    );
    let table: f64 = out
        .iter()
        .filter(|(t, _)| t.index.is_none())
        .map(|(_, u)| u)
        .sum();
    assert_eq!(table, 10.0);
    assert!(
        out.iter().all(|(_, u)| u.is_finite() && *u >= 0.0),
        "{out:?}"
    );
    let zero = share(
        vec![touched(None, "a", 0.0), touched(None, "b", 0.0)],
        &reported,
    );
    assert!(zero.iter().all(|(_, u)| u.is_finite()), "{zero:?}");
}

/// Settings a caller may pass do not bring the process down.
#[test]
fn a_huge_top_does_not_panic() {
    let built = std::panic::catch_unwind(|| crate::insight::Insight::new().top(usize::MAX));
    assert!(built.is_ok());
}
