use super::*;
use crate::insight::key_hash;
use proptest::prelude::*;

fn settings(warn_at: f64) -> Settings {
    Settings {
        warn_at,
        ..Settings::default()
    }
}

/// A tracker keeping `top` partitions, warning at `warn_at` once per `cooldown`.
fn tracker(top: usize, warn_at: f64, cooldown: Duration) -> Tracker {
    Tracker::new(Settings {
        top,
        cooldown,
        ..settings(warn_at)
    })
}

fn partition(key: &str) -> Arc<PartitionId> {
    Arc::new(PartitionId {
        table: Arc::from("t"),
        index: None,
        entity_type: Some(Arc::from("Reading")),
        template: Some("SENSOR#{sensor}"),
        key: PartitionKey::Hashed(key_hash(key)),
    })
}

/// `calls` calls of `units` each, spread evenly over `seconds`, on keys chosen by `pick`.
fn run(
    tracker: &mut Tracker,
    start: Instant,
    seconds: f64,
    calls: usize,
    units: f64,
    pick: impl Fn(usize) -> String,
) -> Vec<HotWarning> {
    let mut warnings = Vec::new();
    for i in 0..calls {
        let at = start + Duration::from_secs_f64(seconds * i as f64 / calls as f64);
        let key = pick(i);
        let label = || partition(&key);
        warnings.extend(tracker.record(at, Units::Write, key_hash(&key), units, label, None));
    }
    warnings
}

#[test]
fn a_skewed_load_warns_with_the_entity_template_and_a_shard_count() {
    let mut tracker = Tracker::new(settings(0.8));
    // 2,000 writes of 1 unit in one second: half on one sensor, the rest over 1,000.
    let warnings = run(&mut tracker, Instant::now(), 1.0, 2_000, 1.0, |i| {
        if i % 2 == 0 {
            "SENSOR#hot".into()
        } else {
            format!("SENSOR#{i}")
        }
    });
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let hot = &warnings[0].hot;
    assert_eq!(
        hot.partition.key,
        PartitionKey::Hashed(key_hash("SENSOR#hot"))
    );
    assert!(hot.rate >= 800.0 && hot.rate < 1_000.0, "{}", hot.rate);
    assert_eq!(hot.shards, 2);
    let text = warnings[0].to_string();
    assert!(text.contains("Reading `SENSOR#{sensor}`"), "{text}");
    assert!(text.contains("over 2 shards"), "{text}");
    let peaks = tracker.peaks();
    assert_eq!(peaks[0].partition.key, hot.partition.key);
    assert!((peaks[0].share - 0.5).abs() < 0.05, "{}", peaks[0].share);
}

#[test]
fn a_uniform_load_of_the_same_volume_never_warns() {
    let mut tracker = Tracker::new(settings(0.8));
    let warnings = run(&mut tracker, Instant::now(), 3.0, 30_000, 1.0, |i| {
        format!("SENSOR#{}", i % 500)
    });
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(tracker.peaks().iter().all(|p| p.rate < 100.0));
}

#[test]
fn a_partition_is_warned_about_once_per_cooldown() {
    let mut tracker = Tracker::new(settings(0.5));
    let start = Instant::now();
    let hot = |_| "SENSOR#hot".to_owned();
    assert_eq!(run(&mut tracker, start, 5.0, 5_000, 1.0, hot).len(), 1);
    let later = start + Duration::from_secs(70);
    assert_eq!(run(&mut tracker, later, 1.0, 1_000, 1.0, hot).len(), 1);
}

#[test]
fn the_window_slides_and_forgets() {
    let mut tracker = Tracker::new(settings(0.8));
    let start = Instant::now();
    run(&mut tracker, start, 0.5, 500, 2.0, |_| "SENSOR#a".into());
    let now = tracker.current(start + Duration::from_millis(600));
    assert!((now[0].rate - 1_000.0).abs() < 5.0, "{}", now[0].rate);
    // Half a second into the next window, half of the previous one still counts.
    let half = tracker.current(start + Duration::from_millis(1_500));
    assert!((half[0].rate - 500.0).abs() < 5.0, "{}", half[0].rate);
    assert!(tracker.current(start + Duration::from_secs(3)).is_empty());
    // The peak stays.
    assert!(tracker.peaks()[0].rate >= 995.0);
}

#[test]
fn read_and_write_units_have_their_own_limits() {
    let mut tracker = Tracker::new(settings(0.8));
    let start = Instant::now();
    let label = || partition("SENSOR#r");
    let mut warned = None;
    for i in 0..2_500 {
        let at = start + Duration::from_micros(i * 300);
        warned = warned.or(tracker.record(at, Units::Read, 1, 1.0, label, None));
    }
    let warned = warned.map(|w| (w.hot.units, w.hot.limit));
    assert_eq!(warned, Some((Units::Read, PARTITION_READ_LIMIT)));
}

/// A million distinct partitions leave the tracker at a fixed size.
#[test]
fn a_million_distinct_partitions_stay_within_the_bound() {
    let mut tracker = Tracker::new(Settings::default());
    let start = Instant::now();
    let mut sizes = Vec::new();
    let label = partition("SENSOR#any");
    for i in 0..1_000_000u64 {
        let at = start + Duration::from_micros(i * 7);
        let units = [Units::Read, Units::Write][(i % 2) as usize];
        let key = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        tracker.record(at, units, key, 1.0 + (i % 5) as f64, || label.clone(), None);
        if [200_000, 600_000, 999_999].contains(&i) {
            sizes.push(tracker.footprint());
        }
    }
    assert!(sizes.iter().all(|&s| s == sizes[0]), "grew: {sizes:?}");
    // Four sketches of 64 slots, 64 peaks, 256 warning times, the template totals: about
    // 105 KB at the default `top`, whatever the number of keys.
    assert!(sizes[0] < 112 * 1024, "{sizes:?}");
    assert!(tracker.peaks().len() <= 64);
}

// Attacks on the tracker: which partitions `hot_partitions` keeps, the cooldown, odd
// unit values.

/// Records `consumed` units of `units` on `key` at `at`: whether it warned.
fn record(t: &mut Tracker, at: Instant, units: Units, key: &str, consumed: f64) -> bool {
    t.record(at, units, key_hash(key), consumed, || partition(key), None)
        .is_some()
}

/// A tracker keeping `top` partitions after `calls` (units, key, units consumed), all
/// made at the same instant.
fn after_calls_at_once(top: usize, calls: &[(Units, &str, f64)]) -> Tracker {
    let mut t = tracker(top, 0.8, Duration::from_secs(60));
    let now = Instant::now();
    for &(units, key, consumed) in calls {
        record(&mut t, now, units, key, consumed);
    }
    t
}

/// With `top(2)`, a third partition far lighter than the two kept must not push out the
/// busier of them: `hot_partitions` is "the busiest partitions seen".
#[test]
fn a_light_partition_does_not_evict_a_busier_peak() {
    let calls = [
        (Units::Write, "A", 100.0),
        (Units::Write, "B", 50.0),
        (Units::Write, "C", 1.0),
    ];
    let peaks = after_calls_at_once(2, &calls).peaks();
    let keys: Vec<&PartitionKey> = peaks.iter().map(|h| &h.partition.key).collect();
    assert_eq!(
        keys,
        [
            &PartitionKey::Hashed(key_hash("A")),
            &PartitionKey::Hashed(key_hash("B"))
        ],
        "{peaks:?}"
    );
}

/// Peaks are ranked by share of their limit (the doc: "highest share of its limit
/// first"), so a write partition at 6 % of its limit outranks a read one at 3 %.
#[test]
fn peaks_compare_shares_of_the_limit_not_raw_units() {
    let calls = [(Units::Write, "W", 60.0), (Units::Read, "R", 100.0)];
    let peaks = after_calls_at_once(1, &calls).peaks();
    assert_eq!(peaks.len(), 1);
    assert_eq!(peaks[0].units, Units::Write, "{peaks:?}");
}

/// The cooldown holds whatever the number of hot partitions.
#[test]
fn the_cooldown_holds_with_more_hot_partitions_than_top() {
    let mut t = tracker(2, 0.001, Duration::from_secs(3_600));
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
    let mut t = tracker(64, 0.001, Duration::from_millis(500));
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
    let mut t = tracker(4, 0.8, Duration::from_secs(60));
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Under any mix of one hot key and background keys within one second, the hot key is
    /// warned about exactly when its true units reach the warning level (the background
    /// stays far below it), and the suggested shards bring it under.
    #[test]
    fn warns_exactly_when_a_key_reaches_the_level(
        hot_calls in 0usize..1_200,
        background in 0usize..2_000,
        spread in 50usize..5_000,
    ) {
        let mut tracker = Tracker::new(settings(0.8));
        let start = Instant::now();
        let calls = hot_calls + background;
        let mut warned = Vec::new();
        for i in 0..calls {
            let at = start + Duration::from_secs_f64(0.9 * i as f64 / calls.max(1) as f64);
            let key = if i < hot_calls { "hot".to_owned() } else { format!("k{}", i % spread) };
            let label = || partition(&key);
            warned.extend(tracker.record(at, Units::Write, key_hash(&key), 1.0, label, None));
        }
        let background_max = background.div_ceil(spread);
        prop_assume!(background_max < 800);
        prop_assert_eq!(warned.len(), usize::from(hot_calls >= 800));
        if let Some(w) = warned.first() {
            prop_assert!(w.hot.rate / f64::from(w.hot.shards) < 800.0);
        }
    }
}
