use super::*;
use proptest::prelude::*;

fn enc<T, F: KeyFormat<T>>(v: T) -> Result<String, KeyError> {
    let mut out = String::new();
    Formatted::<T, F>::new(v).encode_key(&mut out)?;
    Ok(out)
}

/// Asserts that format `F` refuses every text of `bad` as a `T`.
fn refuses<T, F: KeyFormat<T>>(bad: &[&str]) {
    for text in bad {
        assert!(F::decode(text).is_err(), "{text:?} must be refused");
    }
}

#[test]
fn unpadded_integers_are_canonical_decimal() {
    assert_eq!(enc::<u64, Unpadded>(12345).unwrap(), "12345");
    assert_eq!(enc::<i32, Unpadded>(-12).unwrap(), "-12");
    assert_eq!(enc::<u8, Unpadded>(0).unwrap(), "0");
    refuses::<u8, Unpadded>(&["", "-", "007", "-0", "+7", "1e3", " 7", "7 ", "256"]);
    assert_eq!(<Unpadded as KeyFormat<i64>>::decode("-9").unwrap(), -9);
    assert!(
        enc::<u128, Unpadded>(u128::MAX).is_err(),
        "39 significant digits"
    );
}

#[test]
fn padded_integers_have_the_declared_width() {
    assert_eq!(enc::<u32, Padded<8>>(7).unwrap(), "00000007");
    assert!(enc::<u32, Padded<2>>(100).is_err());
    assert!(enc::<i32, Padded<4>>(-1).is_err());
    assert_eq!(<Padded<4> as KeyFormat<u16>>::decode("0042").unwrap(), 42);
    refuses::<u16, Padded<4>>(&["042", "00042", "-042", "00a2"]);
}

#[test]
fn verbatim_strings_refuse_the_delimiter() {
    assert_eq!(
        enc::<String, Verbatim>("WARNING 1".into()).unwrap(),
        "WARNING 1"
    );
    assert!(enc::<String, Verbatim>("a#b".into()).is_err());
    assert!(Formatted::<String, Verbatim>::decode_key("a#b").is_err());
    let mut dotted = String::new();
    Formatted::<String, Verbatim>::new("2014-07-09".into())
        .encode_key_with(Delimiter::UNDERSCORE, &mut dotted)
        .unwrap();
    assert_eq!(
        dotted, "2014-07-09",
        "written as it is under every delimiter"
    );
    assert!(
        Formatted::<String, Verbatim>::new("a_b".into())
            .encode_key_with(Delimiter::UNDERSCORE, &mut String::new())
            .is_err()
    );
}

#[cfg(feature = "time")]
#[test]
fn rfc3339_writes_exactly_the_declared_form() {
    use time::macros::datetime;
    let t = datetime!(2020-04-24 14:40:00 UTC);
    let ms = datetime!(2020-04-24 14:40:00.25 UTC);
    let other_offset = datetime!(2020-04-24 16:40:00 +02:00);
    for (encoded, expected) in [
        (enc::<_, Rfc3339<0, false>>(t), "2020-04-24T14:40:00"),
        (enc::<_, Rfc3339<0, true>>(t), "2020-04-24T14:40:00Z"),
        (enc::<_, Rfc3339<3, true>>(t), "2020-04-24T14:40:00.000Z"),
        (enc::<_, Rfc3339<3, true>>(ms), "2020-04-24T14:40:00.250Z"),
        (
            enc::<_, Rfc3339<6, false>>(ms),
            "2020-04-24T14:40:00.250000",
        ),
        (
            enc::<_, Rfc3339<0, true>>(other_offset),
            "2020-04-24T14:40:00Z",
        ),
    ] {
        assert_eq!(encoded.unwrap(), expected);
    }
    assert!(
        enc::<_, Rfc3339<0, true>>(ms).is_err(),
        "precision is never dropped"
    );
    type Plain = Rfc3339<0, false>;
    assert_eq!(
        <Plain as KeyFormat<time::OffsetDateTime>>::decode("2020-04-24T14:40:00").unwrap(),
        t
    );
    refuses::<time::OffsetDateTime, Plain>(&[
        "2020-04-24T14:40:00Z",
        "2020-04-24T14:40:00.000",
        "2020-04-24 14:40:00",
        "2020-04-24T14:40",
        "2020-02-30T14:40:00",
        "2020-04-24T24:00:00",
    ]);
    assert!(
        <Rfc3339<3, true> as KeyFormat<time::OffsetDateTime>>::decode("2020-04-24T14:40:00,250Z")
            .is_err()
    );
}

#[cfg(feature = "time")]
#[test]
fn epoch_formats_count_from_1970() {
    use time::macros::datetime;
    let t = datetime!(2020-04-24 14:40:00 UTC);
    assert_eq!(enc::<_, EpochSeconds>(t).unwrap(), "1587739200");
    assert_eq!(
        enc::<_, EpochMillis>(datetime!(2020-04-24 14:40:00.25 UTC)).unwrap(),
        "1587739200250"
    );
    assert!(enc::<_, EpochSeconds>(datetime!(2020-04-24 14:40:00.25 UTC)).is_err());
    assert_eq!(
        enc::<_, EpochSeconds>(datetime!(1969-12-31 23:59:59 UTC)).unwrap(),
        "-1"
    );
    assert_eq!(
        <EpochSeconds as KeyFormat<time::OffsetDateTime>>::decode("-1").unwrap(),
        datetime!(1969-12-31 23:59:59 UTC)
    );
    assert!(<EpochSeconds as KeyFormat<time::OffsetDateTime>>::decode("01").is_err());
    assert!(
        <EpochSeconds as KeyFormat<time::OffsetDateTime>>::decode("99999999999999999999999")
            .is_err()
    );
}

#[cfg(feature = "chrono")]
#[test]
fn chrono_types_take_the_same_formats() {
    let t = chrono::NaiveDate::from_ymd_opt(2020, 4, 24)
        .and_then(|d| d.and_hms_milli_opt(14, 40, 0, 250))
        .unwrap();
    assert_eq!(
        enc::<_, Rfc3339<3, false>>(t).unwrap(),
        "2020-04-24T14:40:00.250"
    );
    let utc = t.and_utc();
    assert_eq!(enc::<_, EpochMillis>(utc).unwrap(), "1587739200250");
    assert_eq!(
        <EpochMillis as KeyFormat<chrono::DateTime<chrono::Utc>>>::decode("1587739200250").unwrap(),
        utc
    );
}

proptest! {
    #[test]
    fn every_format_round_trips_under_every_delimiter(v in any::<i64>(), w in 0u32..100_000_000, d in 0usize..5) {
        let delimiter = Delimiter::ALL[d];
        let mut out = String::new();
        Formatted::<i64, Unpadded>::new(v).encode_key_with(delimiter, &mut out).unwrap();
        prop_assert_eq!(Formatted::<i64, Unpadded>::decode_key_with(&out, delimiter).unwrap().into_inner(), v);
        let mut out = String::new();
        Formatted::<u32, Padded<9>>::new(w).encode_key_with(delimiter, &mut out).unwrap();
        prop_assert_eq!(out.len(), 9);
        prop_assert_eq!(Formatted::<u32, Padded<9>>::decode_key_with(&out, delimiter).unwrap().into_inner(), w);
    }

    #[test]
    fn padded_keys_sort_like_the_numbers(a in 0u32..100_000_000, b in 0u32..100_000_000) {
        let (ea, eb) = (enc::<u32, Padded<8>>(a).unwrap(), enc::<u32, Padded<8>>(b).unwrap());
        prop_assert_eq!(a.cmp(&b), ea.cmp(&eb));
    }

    #[test]
    fn decoding_arbitrary_text_never_panics(s in ".{0,40}") {
        let _ = <Unpadded as KeyFormat<i64>>::decode(&s);
        let _ = <Padded<6> as KeyFormat<u64>>::decode(&s);
        let _ = <Verbatim as KeyFormat<String>>::decode(&s);
        #[cfg(feature = "time")]
        {
            let _ = <Rfc3339<3, true> as KeyFormat<time::OffsetDateTime>>::decode(&s);
            let _ = <EpochMillis as KeyFormat<time::OffsetDateTime>>::decode(&s);
        }
    }
}

// ---------------------------------------------------------------- review (attack)

/// Renders `v` under `delimiter`.
fn enc_with<T, F: KeyFormat<T>>(v: T, delimiter: Delimiter) -> Result<String, KeyError> {
    let mut out = String::new();
    Formatted::<T, F>::new(v).encode_key_with(delimiter, &mut out)?;
    Ok(out)
}

proptest! {
    /// The module's table promises `7` and `-12` in a key; an adopted table that uses
    /// `_`, `.`, `|` or `:` between components has the same plain decimal text.
    #[test]
    fn unpadded_text_is_plain_decimal_under_every_delimiter(v in any::<i64>(), d in 0usize..5) {
        let delimiter = Delimiter::ALL[d];
        let text = enc_with::<i64, Unpadded>(v, delimiter).unwrap();
        prop_assert_eq!(&text, &v.to_string(), "under {:?}", delimiter);
        // And the plain text another program wrote decodes.
        let back = Formatted::<i64, Unpadded>::decode_key_with(&v.to_string(), delimiter);
        prop_assert_eq!(back.map(Formatted::into_inner).ok(), Some(v));
    }

    /// The text of a padded number holds only digits: the same under every delimiter.
    #[test]
    fn padded_text_is_the_same_under_every_delimiter(v in any::<u32>(), d in 0usize..5) {
        let delimiter = Delimiter::ALL[d];
        prop_assert_eq!(enc_with::<u32, Padded<10>>(v, delimiter).unwrap(), format!("{v:010}"));
    }

    /// Decoding accepts exactly what encoding writes: any text that decodes encodes
    /// back to itself (no second spelling of a value), under every delimiter.
    #[test]
    fn a_decoded_component_renders_back_to_itself(s in "-?[0-9%/`};]{0,24}", d in 0usize..5) {
        let delimiter = Delimiter::ALL[d];
        if let Ok(v) = Formatted::<i64, Unpadded>::decode_key_with(&s, delimiter) {
            prop_assert_eq!(enc_with::<i64, Unpadded>(v.into_inner(), delimiter).unwrap(), s.clone());
        }
        if let Ok(v) = Formatted::<u64, Padded<6>>::decode_key_with(&s, delimiter) {
            prop_assert_eq!(enc_with::<u64, Padded<6>>(v.into_inner(), delimiter).unwrap(), s.clone());
        }
    }

    /// A verbatim string round-trips under every delimiter it does not contain, and
    /// one containing it is refused both ways.
    #[test]
    fn verbatim_round_trips_or_is_refused(s in "[ -~\\u{80}-\\u{10FFFF}]{0,12}", d in 0usize..5) {
        let delimiter = Delimiter::ALL[d];
        let out = enc_with::<String, Verbatim>(s.clone(), delimiter);
        if s.contains(delimiter.as_char()) {
            prop_assert!(out.is_err());
            prop_assert!(Formatted::<String, Verbatim>::decode_key_with(&s, delimiter).is_err());
        } else {
            prop_assert_eq!(out.unwrap(), s.clone());
            prop_assert_eq!(Formatted::<String, Verbatim>::decode_key_with(&s, delimiter).unwrap().into_inner(), s);
        }
    }

    /// A partial value for `starts_with` must stay inside its component: a partial
    /// containing the delimiter would match the next components (`OK#2020` matches
    /// state `OK` of 2020), so it is refused like a whole value.
    #[test]
    fn a_partial_containing_the_delimiter_is_refused(d in 0usize..5) {
        let delimiter = Delimiter::ALL[d];
        let partial = format!("OK{}2020", delimiter.as_char());
        let mut out = String::new();
        let r = <Formatted<String, Verbatim> as KeyPart>::escape_partial_with(&partial, delimiter, &mut out);
        prop_assert!(r.is_err(), "wrote {:?}", out);
    }
}

proptest! {
    /// Decoding any text under any delimiter, and escaping any partial value, never
    /// panics (escape characters followed by anything, multi-byte characters at the
    /// positions the timestamp parser slices).
    #[test]
    fn decoding_any_text_under_any_delimiter_never_panics(
        s in "([#%./_`|};:0-9A-FTZ-]|\\PC){0,32}",
        d in 0usize..5,
    ) {
        let delimiter = Delimiter::ALL[d];
        let _ = Formatted::<i64, Unpadded>::decode_key_with(&s, delimiter);
        let _ = Formatted::<u128, Unpadded>::decode_key_with(&s, delimiter);
        let _ = Formatted::<u8, Padded<3>>::decode_key_with(&s, delimiter);
        let _ = Formatted::<String, Verbatim>::decode_key_with(&s, delimiter);
        let mut out = String::new();
        let _ = <Formatted<i64, Unpadded> as KeyPart>::escape_partial_with(&s, delimiter, &mut out);
        let _ = <Formatted<u8, Padded<3>> as KeyPart>::escape_partial_with(&s, delimiter, &mut out);
        #[cfg(feature = "time")]
        {
            let _ = Formatted::<time::OffsetDateTime, Rfc3339<9, true>>::decode_key_with(&s, delimiter);
            let _ = Formatted::<time::PrimitiveDateTime, Rfc3339<0, false>>::decode_key_with(&s, delimiter);
            let _ = Formatted::<time::OffsetDateTime, EpochSeconds>::decode_key_with(&s, delimiter);
            let _ = Formatted::<time::OffsetDateTime, EpochMillis>::decode_key_with(&s, delimiter);
        }
        #[cfg(feature = "chrono")]
        {
            let _ = Formatted::<chrono::DateTime<chrono::Utc>, Rfc3339<3, false>>::decode_key_with(&s, delimiter);
            let _ = Formatted::<chrono::DateTime<chrono::Utc>, EpochMillis>::decode_key_with(&s, delimiter);
            let _ = Formatted::<chrono::NaiveDateTime, Rfc3339<6, true>>::decode_key_with(&s, delimiter);
        }
    }

    /// A timestamp text whose 20th byte starts a multi-byte character (the parser
    /// slices at byte 19): refused, never a panic.
    #[test]
    fn rfc3339_with_multibyte_characters_is_refused(c in "\\PC", digits in 0usize..3) {
        let base = "2020-04-24T14:40:00";
        let text = match digits {
            0 => format!("{base}{c}"),
            1 => format!("{base}{c}25"),
            _ => format!("{}{c}{}", &base[..10], &base[11..]),
        };
        #[cfg(feature = "time")]
        {
            let r = <Rfc3339<3, false> as KeyFormat<time::OffsetDateTime>>::decode(&text);
            prop_assert!(r.is_err() || text.is_ascii());
        }
    }
}

#[cfg(all(feature = "time", feature = "chrono"))]
proptest! {
    /// Decoding accepts exactly what encoding writes, for the timestamp formats: any
    /// text of the right shape that decodes renders back to itself, for every type.
    #[test]
    fn timestamp_texts_that_decode_render_back_to_themselves(
        s in "[0-9]{4}-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3}Z",
        e in "-?[0-9]{1,15}",
    ) {
        type F = Rfc3339<3, true>;
        fn back<T: 'static>(s: &str) -> Option<String>
        where
            F: KeyFormat<T>,
        {
            let v = <F as KeyFormat<T>>::decode(s).ok()?;
            let mut out = String::new();
            <F as KeyFormat<T>>::encode(&v, &mut out).ok()?;
            Some(out)
        }
        for got in [
            back::<time::OffsetDateTime>(&s),
            back::<time::PrimitiveDateTime>(&s),
            back::<chrono::DateTime<chrono::Utc>>(&s),
            back::<chrono::NaiveDateTime>(&s),
        ].into_iter().flatten() {
            prop_assert_eq!(&got, &s);
        }
        if let Ok(v) = <EpochMillis as KeyFormat<time::OffsetDateTime>>::decode(&e) {
            let mut out = String::new();
            <EpochMillis as KeyFormat<time::OffsetDateTime>>::encode(&v, &mut out).unwrap();
            prop_assert_eq!(&out, &e);
        }
        if let Ok(v) = <EpochSeconds as KeyFormat<chrono::DateTime<chrono::Utc>>>::decode(&e) {
            let mut out = String::new();
            <EpochSeconds as KeyFormat<chrono::DateTime<chrono::Utc>>>::encode(&v, &mut out).unwrap();
            prop_assert_eq!(&out, &e);
        }
    }
}

#[test]
fn padded_edges() {
    assert_eq!(enc::<u8, Padded<3>>(u8::MAX).unwrap(), "255");
    assert_eq!(enc::<u8, Padded<3>>(0).unwrap(), "000");
    assert!(<Padded<3> as KeyFormat<u8>>::decode("256").is_err());
    assert_eq!(enc::<i8, Padded<3>>(i8::MAX).unwrap(), "127");
    assert!(enc::<i8, Padded<3>>(i8::MIN).is_err());
    assert!(<Padded<3> as KeyFormat<i8>>::decode("128").is_err());
    // u64::MAX has 20 digits; a 40-wide padding is all leading zeros (not significant).
    let wide = enc::<u64, Padded<40>>(u64::MAX).unwrap();
    assert_eq!(wide.len(), 40);
    assert_eq!(
        <Padded<40> as KeyFormat<u64>>::decode(&wide).unwrap(),
        u64::MAX
    );
    // Unicode digits are not ASCII digits.
    assert!(<Padded<3> as KeyFormat<u16>>::decode("\u{663}\u{663}").is_err());
    assert!(<Unpadded as KeyFormat<u16>>::decode("\u{663}").is_err());
    // Unpadded edges: the extremes of every width that fits 38 digits round-trip.
    for v in [i64::MIN, i64::MAX, 0, -1] {
        let t = enc::<i64, Unpadded>(v).unwrap();
        assert_eq!(<Unpadded as KeyFormat<i64>>::decode(&t).unwrap(), v);
    }
    assert!(enc::<i128, Unpadded>(i128::MIN).is_err(), "39 digits");
    let max38: u128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;
    let t = enc::<u128, Unpadded>(max38).unwrap();
    assert_eq!(<Unpadded as KeyFormat<u128>>::decode(&t).unwrap(), max38);
}

#[cfg(feature = "time")]
#[test]
fn rfc3339_edge_dates() {
    use time::macros::datetime;
    type Nine = Rfc3339<9, true>;
    for t in [
        datetime!(0000-01-01 00:00:00 UTC),
        datetime!(9999-12-31 23:59:59.999_999_999 UTC),
        datetime!(2000-02-29 12:00:00 UTC),
        datetime!(1969-12-31 23:59:59.000_000_001 UTC),
    ] {
        let text = enc::<_, Nine>(t).unwrap();
        assert_eq!(text.len(), 30, "{text}");
        assert_eq!(
            <Nine as KeyFormat<time::OffsetDateTime>>::decode(&text).unwrap(),
            t
        );
    }
    // Outside 0000-9999 (an offset that moves the instant past a year boundary too).
    assert!(enc::<_, Nine>(datetime!(-0001-12-31 23:00:00 UTC)).is_err());
    assert!(enc::<_, Nine>(datetime!(0000-01-01 00:30:00 +01:00)).is_err());
    assert!(enc::<_, Nine>(datetime!(9999-12-31 23:30:00 -01:00)).is_err());
    // What RFC 3339 allows but the format does not write is refused, never panics.
    type Plain = Rfc3339<0, true>;
    let bad = [
        "2016-12-31T23:59:60Z", // a leap second: `time` has none
        "2019-02-29T00:00:00Z",
        "2020-04-24t14:40:00Z",
        "2020-04-24T14:40:00z",
        "2020-04-24T14:40:00+00:00",
        "+020-04-24T14:40:00Z",
        "-001-04-24T14:40:00Z",
        "2020-4-24T14:40:00ZZ",
        "2020-04-24T14:40:0\u{e9}Z",
        "",
        "Z",
    ];
    refuses::<time::OffsetDateTime, Plain>(&bad);
    refuses::<time::PrimitiveDateTime, Plain>(&bad);
    // Fraction digits: exactly the declared count.
    type Three = Rfc3339<3, false>;
    refuses::<time::OffsetDateTime, Three>(&[
        "2020-04-24T14:40:00.25",
        "2020-04-24T14:40:00.2500",
        "2020-04-24T14:40:00.-25",
    ]);
}

#[cfg(feature = "time")]
proptest! {
    /// Epoch formats round-trip every whole unit from year 0000 to 9999, before 1970
    /// included, and refuse what they cannot hold.
    #[test]
    fn epoch_formats_round_trip_before_and_after_1970(secs in -62_135_596_800i64..253_402_300_799, ms in 0i64..1000, d in 0usize..5) {
        let delimiter = Delimiter::ALL[d];
        let t = time::OffsetDateTime::from_unix_timestamp(secs).unwrap();
        let text = enc_with::<_, EpochSeconds>(t, delimiter).unwrap();
        prop_assert_eq!(Formatted::<time::OffsetDateTime, EpochSeconds>::decode_key_with(&text, delimiter).unwrap().into_inner(), t);
        let t = t + time::Duration::milliseconds(ms);
        let text = enc_with::<_, EpochMillis>(t, delimiter).unwrap();
        prop_assert_eq!(Formatted::<time::OffsetDateTime, EpochMillis>::decode_key_with(&text, delimiter).unwrap().into_inner(), t);
        if ms != 0 {
            prop_assert!(enc_with::<_, EpochSeconds>(t, delimiter).is_err());
        }
    }
}

#[cfg(feature = "chrono")]
#[test]
fn chrono_leap_seconds_keep_their_own_key() {
    use chrono::{NaiveDate, TimeZone, Utc};
    // 2016-12-31T23:59:60.5Z (chrono represents leap seconds) and the next second.
    let leap = NaiveDate::from_ymd_opt(2016, 12, 31)
        .and_then(|d| d.and_hms_milli_opt(23, 59, 59, 1_500))
        .unwrap();
    let next = NaiveDate::from_ymd_opt(2017, 1, 1)
        .and_then(|d| d.and_hms_milli_opt(0, 0, 0, 500))
        .unwrap();
    // RFC 3339: the leap second is written as second 60 and reads back as itself.
    let text = enc::<_, Rfc3339<3, true>>(leap).unwrap();
    assert_eq!(text, "2016-12-31T23:59:60.500Z");
    assert_eq!(
        <Rfc3339<3, true> as KeyFormat<chrono::NaiveDateTime>>::decode(&text).unwrap(),
        leap
    );
    // Epoch counts have no leap seconds: two distinct instants must not share a key.
    let (a, b) = (Utc.from_utc_datetime(&leap), Utc.from_utc_datetime(&next));
    assert_ne!(a, b);
    let (ka, kb) = (enc::<_, EpochMillis>(a), enc::<_, EpochMillis>(b));
    assert!(
        ka.is_err() || ka != kb,
        "leap second and the next second share the key {kb:?}"
    );
}

#[cfg(feature = "time")]
proptest! {
    #[test]
    fn rfc3339_round_trips_and_sorts(secs in -62_135_596_800i64..253_402_300_799, millis in 0i64..1000) {
        let t = time::OffsetDateTime::from_unix_timestamp(secs).unwrap() + time::Duration::milliseconds(millis);
        let text = enc::<_, Rfc3339<3, true>>(t).unwrap();
        prop_assert_eq!(<Rfc3339<3, true> as KeyFormat<time::OffsetDateTime>>::decode(&text).unwrap(), t);
        let later = t + time::Duration::milliseconds(1);
        if let Ok(next) = enc::<_, Rfc3339<3, true>>(later) {
            prop_assert!(text < next);
        }
    }
}

#[cfg(feature = "time")]
proptest! {
    /// A formatted field's attribute holds exactly its key text (`Text`: a string,
    /// `Number`: a number), or the type's own attribute (`Own`), and reads back as the
    /// same value; the type's own encoding (as another program writes it) reads too.
    #[test]
    fn a_formatted_attribute_is_the_key_text_and_reads_back(
        secs in 0i64..253_402_300_799,
        v in any::<i64>(),
    ) {
        use time::OffsetDateTime;
        let at = OffsetDateTime::from_unix_timestamp(secs).unwrap();
        let formatted = Formatted::<OffsetDateTime, Rfc3339<0, false>>::new(at);
        let key = enc::<OffsetDateTime, Rfc3339<0, false>>(at).unwrap();
        let av = formatted.to_attr().unwrap();
        prop_assert_eq!(&av, &AttributeValue::S(key));
        prop_assert_eq!(Formatted::<OffsetDateTime, Rfc3339<0, false>>::from_attr(av).unwrap().into_inner(), at);
        let own = at.to_attr().unwrap();
        prop_assert_eq!(Formatted::<OffsetDateTime, Rfc3339<0, false>>::from_attr(own).unwrap().into_inner(), at);

        let epoch = Formatted::<OffsetDateTime, EpochSeconds>::new(at).to_attr().unwrap();
        prop_assert_eq!(&epoch, &AttributeValue::N(secs.to_string()));
        prop_assert_eq!(Formatted::<OffsetDateTime, EpochSeconds>::from_attr(epoch).unwrap().into_inner(), at);

        let number = Formatted::<i64, Unpadded>::new(v).to_attr().unwrap();
        prop_assert_eq!(&number, &v.to_attr().unwrap());
        prop_assert_eq!(Formatted::<i64, Unpadded>::from_attr(number).unwrap().into_inner(), v);

        let absent = FormattedOption::<OffsetDateTime, Rfc3339<0, false>>::new(None);
        prop_assert_eq!(absent.to_attr_opt().unwrap(), None);
    }
}

#[cfg(feature = "time")]
#[test]
fn a_value_the_format_cannot_hold_is_refused_as_a_key_encoding() {
    let precise = time::macros::datetime!(2020-04-24 14:40:00.5 UTC);
    let err = Formatted::<time::OffsetDateTime, Rfc3339<0, false>>::new(precise)
        .to_attr()
        .unwrap_err();
    assert!(err.is_key(), "{err:?}");
    // Neither the declared form nor the type's own: refused, naming the format.
    let err = Formatted::<time::OffsetDateTime, Rfc3339<0, false>>::from_attr(AttributeValue::S(
        "yesterday".into(),
    ))
    .unwrap_err();
    assert!(err.to_string().contains("RFC 3339"), "{err}");
}
