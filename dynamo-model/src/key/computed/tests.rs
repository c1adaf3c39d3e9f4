use super::__private::*;
use super::*;
use crate::key::Delimiter;
use crate::key::render::{RenderPart, Shard, arg, field, present};

/// `{field:shard(N)}` of a field of the item, as the derive renders it.
fn push_shard<T: KeyPart>(value: &T, count: u16, out: &mut String) -> Result<(), KeyError> {
    Shard(&field(value), count)
        .render_part(Delimiter::PIPE, out)
        .map(drop)
}

/// Every time type buckets like the instant it stands for (a value without an
/// offset as UTC).
#[test]
fn every_time_type_buckets_as_its_utc_instant() {
    use time::macros::{date, datetime};
    let instant = datetime!(2014-07-09 10:11:12 UTC);
    let hour = HourBucket::of(&instant).unwrap();
    assert_eq!(
        HourBucket::of(&datetime!(2014-07-09 10:11:12)).unwrap(),
        hour
    );
    assert_eq!(
        DayBucket::of(&date!(2014 - 07 - 09)).unwrap(),
        DayBucket::of(&instant).unwrap()
    );
    let naive = chrono::NaiveDate::from_ymd_opt(2014, 7, 9)
        .and_then(|d| d.and_hms_opt(10, 11, 12))
        .unwrap();
    assert_eq!(HourBucket::of(&naive).unwrap(), hour);
    assert_eq!(HourBucket::of(&naive.and_utc()).unwrap(), hour);
    assert_eq!(
        MonthBucket::of(&naive.date()).unwrap(),
        MonthBucket::of(&instant).unwrap()
    );
}
use proptest::prelude::*;

fn enc<T: KeyPart>(value: &T) -> String {
    let mut out = String::new();
    value.encode_key(&mut out).unwrap();
    out
}

/// The stored format: these vectors must never change (every item would move to
/// another shard). CRC-32 check value and zlib-compatible values, then shards.
#[test]
fn shard_vectors_are_pinned() {
    assert_eq!(shard_hash(""), 0);
    assert_eq!(shard_hash("123456789"), 0xCBF4_3926);
    assert_eq!(shard_hash("o-1"), 0xCD3E_0FDA);
    assert_eq!(
        shard_hash("The quick brown fox jumps over the lazy dog"),
        0x414F_A339
    );
    let vectors: &[(&str, u16, u16)] = &[
        ("o-1", 16, 10),
        ("o-2", 16, 0),
        ("o-3", 16, 6),
        ("order-0001", 16, 12),
        ("order-0002", 16, 6),
        ("123456789", 10, 2),
        ("123456789", 200, 62),
        ("123456789", 1000, 262),
        ("a%23b", 8, 6),
        ("00000000000000000042", 16, 11),
        ("", 16, 0),
        ("anything", 1, 0),
    ];
    for &(encoded, count, shard) in vectors {
        assert_eq!(shard_of(encoded, count), shard, "{encoded:?} % {count}");
    }
}

/// A rendered shard is the hash of the field's key-part encoding, not of its raw
/// value: `a#b` is hashed as `a%23b`, 42u64 as its 20 digits.
#[test]
fn shards_hash_the_key_part_encoding() {
    let render = |f: &dyn Fn(&mut String) -> Result<(), KeyError>| {
        let mut out = String::from("P#");
        f(&mut out).unwrap();
        out
    };
    assert_eq!(
        render(&|out| push_shard(&"a#b".to_string(), 8, out)),
        format!("P#{}", shard_of("a%23b", 8))
    );
    assert_eq!(render(&|out| push_shard(&42u64, 16, out)), "P#11");
    assert_eq!(
        render(&|out| Shard(&arg::<String, _>(&"o-1"), 16)
            .render_part(Delimiter::HASH, out)
            .map(drop)),
        "P#10"
    );
    assert_eq!(
        render(&|out| push_shard(&"o-1".to_string(), 16, out)),
        "P#10"
    );
    let mut out = String::from("P#");
    let absent = None::<String>;
    assert!(
        !Shard(&present(&absent), 16)
            .render_part(Delimiter::HASH, &mut out)
            .unwrap()
    );
    assert_eq!(out, "P#");
    let present_value = Some("o-1".to_string());
    assert!(
        Shard(&present(&present_value), 16)
            .render_part(Delimiter::HASH, &mut out)
            .unwrap()
    );
    assert_eq!(out, "P#10");
}

#[test]
fn shard_numbers_are_fixed_width() {
    for (count, width) in [
        (1, 1),
        (2, 1),
        (10, 1),
        (11, 2),
        (16, 2),
        (100, 2),
        (101, 3),
        (1000, 3),
    ] {
        assert_eq!(shard_width(count), width, "{count}");
    }
    let render = |shard, count| {
        let mut out = String::new();
        push_shard_number(shard, count, &mut out).map(|()| out)
    };
    assert_eq!(render(3, 16).unwrap(), "03");
    assert_eq!(render(0, 1).unwrap(), "0");
    assert_eq!(render(199, 200).unwrap(), "199");
    assert_eq!(render(7, 200).unwrap(), "007");
    assert!(matches!(render(16, 16), Err(KeyError::OutOfRange { .. })));
    assert_eq!(parse_shard("03", 16), Some(3));
    for bad in ["3", "003", "16", "-1", "0x", "", " 3"] {
        assert_eq!(parse_shard(bad, 16), None, "{bad:?}");
    }
}

#[test]
fn random_shards_stay_in_range_and_reach_every_shard() {
    let mut seen = [false; 10];
    for _ in 0..1000 {
        let shard = random_shard(10);
        seen[usize::from(shard)] = true;
    }
    assert!(seen.iter().all(|s| *s), "{seen:?}");
    assert_eq!(random_shard(1), 0);
    let mut out = String::new();
    push_random_shard(&7u16, 10, &mut out).unwrap();
    assert_eq!(out, "7");
    assert!(push_random_shard(&10u16, 10, &mut out).is_err());
    out.clear();
    random_from_component("00007", 16, &mut out).unwrap();
    assert_eq!(out, "07");
}

/// 10,000 order ids over 16 shards: every shard within 25% of the mean.
#[test]
fn shards_spread_evenly() {
    for ids in [
        (0..10_000)
            .map(|i| format!("order-{i}"))
            .collect::<Vec<_>>(),
        (0..10_000).map(|i| format!("{i:08}")).collect(),
        (0..10_000u64).map(|i| enc(&i)).collect(),
    ] {
        let mut counts = [0u32; 16];
        for id in &ids {
            counts[usize::from(shard_of(id, 16))] += 1;
        }
        let mean = 10_000.0 / 16.0;
        for (shard, &n) in counts.iter().enumerate() {
            let off = (f64::from(n) - mean).abs() / mean;
            assert!(off <= 0.25, "shard {shard}: {n} of 10,000 ({counts:?})");
        }
    }
}

proptest! {
    /// Random keys (UUID-like and arbitrary strings) spread too, for counts that are
    /// and are not powers of two; and a shard is always in range and well-formed.
    #[test]
    fn random_keys_spread_evenly(seed in any::<u64>(), count in prop::sample::select(vec![4u16, 16, 10, 7])) {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut counts = vec![0u32; usize::from(count)];
        let keys = 10_000;
        for _ in 0..keys {
            let key = format!("{:032x}", rng.u128(..));
            let shard = shard_of(&key, count);
            prop_assert!(shard < count);
            counts[usize::from(shard)] += 1;
        }
        let mean = f64::from(keys) / f64::from(count);
        for &n in &counts {
            prop_assert!((f64::from(n) - mean).abs() / mean <= 0.25, "{:?}", counts);
        }
    }

    #[test]
    fn rendered_shards_parse_back(value in "\\PC{0,12}", count in 1u16..=MAX_SHARDS) {
        let mut out = String::new();
        push_shard(&value, count, &mut out).unwrap();
        prop_assert_eq!(parse_shard(&out, count), Some(shard_of(&enc(&value), count)));
        prop_assert!(parse_shard(&out, count).is_some());
        let mut again = String::new();
        shard_from_component(&enc(&value), count, &mut again).unwrap();
        prop_assert_eq!(again, out);
    }
}

fn fields(year: i32, month: u8, day: u8, hour: u8) -> UtcFields {
    UtcFields {
        year,
        month,
        day,
        hour,
    }
}

#[test]
fn buckets_render_fixed_width() {
    let f = fields(2014, 7, 9, 5);
    assert_eq!(enc(&DayBucket::from_utc(f).unwrap()), "2014-07-09");
    assert_eq!(enc(&HourBucket::from_utc(f).unwrap()), "2014-07-09T05");
    assert_eq!(enc(&MonthBucket::from_utc(f).unwrap()), "2014-07");
    assert_eq!(enc(&DayBucket::new(7, 1, 2).unwrap()), "0007-01-02");
    assert_eq!(
        DayBucket::new(2024, 2, 29).unwrap().to_string(),
        "2024-02-29"
    );
    assert_eq!(
        HourBucket::new(2024, 2, 29, 23).unwrap().to_string(),
        "2024-02-29T23"
    );
    assert_eq!(MonthBucket::new(2024, 12).unwrap().to_string(), "2024-12");
    for bad in [
        fields(-1, 1, 1, 0),
        fields(10_000, 1, 1, 0),
        fields(2023, 2, 29, 0),
        fields(1900, 2, 29, 0),
        fields(2024, 13, 1, 0),
        fields(2024, 4, 31, 0),
        fields(2024, 1, 0, 0),
    ] {
        assert!(DayBucket::from_utc(bad).is_err(), "{bad:?}");
    }
    assert!(DayBucket::from_utc(fields(2000, 2, 29, 0)).is_ok());
    assert!(HourBucket::from_utc(fields(2024, 1, 1, 24)).is_err());
    // A month bucket ignores the day and hour.
    assert!(MonthBucket::from_utc(fields(2024, 1, 31, 23)).is_ok());
}

#[test]
fn buckets_decode_strictly() {
    assert_eq!(
        DayBucket::decode_key("2014-07-09").unwrap(),
        DayBucket::new(2014, 7, 9).unwrap()
    );
    assert_eq!(
        HourBucket::decode_key("2014-07-09T23").unwrap(),
        HourBucket::new(2014, 7, 9, 23).unwrap()
    );
    assert_eq!(
        MonthBucket::decode_key("2014-07").unwrap(),
        MonthBucket::new(2014, 7).unwrap()
    );
    for bad in [
        "2014-7-09",
        "2014-07-9",
        "2014-07-09T",
        "2014-02-30",
        "2014/07/09",
        "+014-07-09",
        "2014-07-0a",
        "",
    ] {
        assert!(DayBucket::decode_key(bad).is_err(), "{bad:?}");
        assert!(DayBucket::decode_key(bad).is_err());
    }
    for bad in [
        "2014-07-09T24",
        "2014-07-09 10",
        "2014-07-09T1",
        "2014-07-09",
    ] {
        assert!(HourBucket::decode_key(bad).is_err(), "{bad:?}");
    }
    for bad in ["2014-13", "2014-00", "2014-7", "2014-07-01"] {
        assert!(MonthBucket::decode_key(bad).is_err(), "{bad:?}");
    }
}

fn calendar_fields() -> impl Strategy<Value = UtcFields> {
    (0i32..=9999, 1u8..=12, 1u8..=31, 0u8..=23).prop_map(|(year, month, day, hour)| {
        let day = day.min(days_in_month(year as u16, month));
        fields(year, month, day, hour)
    })
}

proptest! {
    /// Buckets sort (as key strings) exactly as the instants they hold, coarser than
    /// the instant: a <= b implies bucket(a) <= bucket(b); and they round-trip.
    #[test]
    fn buckets_keep_the_order_of_time(a in calendar_fields(), b in calendar_fields()) {
        fn check<B: TimeBucket>(a: UtcFields, b: UtcFields) -> Result<(), TestCaseError> {
            let (x, y) = (B::from_utc(a).unwrap(), B::from_utc(b).unwrap());
            let (ex, ey) = (enc(&x), enc(&y));
            prop_assert_eq!(ex.cmp(&ey), x.cmp(&y));
            if a <= b {
                prop_assert!(ex <= ey, "{:?} {:?}", ex, ey);
            }
            prop_assert_eq!(B::decode_key(&ex).unwrap(), x);
            prop_assert!(!ex.contains('#'));
            Ok(())
        }
        check::<DayBucket>(a, b)?;
        check::<HourBucket>(a, b)?;
        check::<MonthBucket>(a, b)?;
    }
}

#[cfg(feature = "time")]
#[test]
fn offset_date_times_are_bucketed_in_utc() {
    use time::macros::datetime;
    let t = datetime!(2014-07-09 23:30 -02:00); // 2014-07-10T01:30Z
    let render = |f: fn(&time::OffsetDateTime, &mut String) -> Result<(), KeyError>| {
        let mut out = String::new();
        f(&t, &mut out).unwrap();
        out
    };
    assert_eq!(render(push_bucket::<DayBucket, _>), "2014-07-10");
    assert_eq!(render(push_bucket::<HourBucket, _>), "2014-07-10T01");
    assert_eq!(render(push_bucket::<MonthBucket, _>), "2014-07");
    let mut out = String::new();
    push_bucket_arg::<DayBucket, _>(&t, &mut out).unwrap();
    push_bucket_arg::<DayBucket, _>(&DayBucket::new(2014, 7, 10).unwrap(), &mut out).unwrap();
    assert_eq!(out, "2014-07-102014-07-10");
    out.clear();
    assert!(
        !push_bucket_optional::<DayBucket, _>(&None::<time::OffsetDateTime>, &mut out).unwrap()
    );
    assert!(push_bucket_optional::<DayBucket, _>(&Some(t), &mut out).unwrap());
    assert_eq!(out, "2014-07-10");
    out.clear();
    bucket_from_component::<time::OffsetDateTime, HourBucket>(&enc(&t), &mut out).unwrap();
    assert_eq!(out, "2014-07-10T01");
    // The year outside what a key can hold is refused, not wrapped.
    let far = datetime!(9999-12-31 23:00 -02:00);
    assert!(DayBucket::of(&far).is_err());
}
