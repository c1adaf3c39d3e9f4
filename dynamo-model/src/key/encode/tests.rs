use super::*;
use crate::key::testing::*;
use crate::key::testing::{integer_values, signed_values};
use proptest::prelude::*;
use std::cmp::Ordering;
use std::fmt::Debug;

fn enc<T: KeyPart>(value: &T) -> String {
    let mut out = String::new();
    value.encode_key(&mut out).expect("encodable value");
    out
}

fn key_error(error: KeyError) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}

/// The encoding of `value` under delimiter `d`.
fn enc_with<T: KeyPart>(value: &T, d: Delimiter) -> String {
    let mut out = String::new();
    value.encode_key_with(d, &mut out).expect("encodable value");
    out
}

/// Every delimiter, `#` (the default) more often than the others.
fn delimiters() -> impl Strategy<Value = Delimiter> {
    prop_oneof![
        2 => Just(Delimiter::HASH),
        3 => prop::sample::select(&Delimiter::ALL[..]),
    ]
}

/// Rule 1 and 2's decoding half: the encoding holds no delimiter and decodes back.
fn check_roundtrip<T: KeyPart + PartialEq + Debug>(
    value: &T,
    d: Delimiter,
) -> Result<(), TestCaseError> {
    let encoded = enc_with(value, d);
    prop_assert!(
        !encoded.contains(d.as_char()),
        "{:?} contains `{}`",
        encoded,
        d
    );
    // No encoding contains `#`, whatever the delimiter: the crate's own keys
    // (`_CHUNK#...`) cannot be forged by a value.
    prop_assert!(!encoded.contains('#'), "{:?} contains `#`", encoded);
    let decoded = T::decode_key_with(&encoded, d).map_err(key_error)?;
    prop_assert_eq!(&decoded, value);
    if d == Delimiter::HASH {
        prop_assert_eq!(encoded, enc(value));
    }
    Ok(())
}

fn check_order<T: KeyPart + Debug>(
    a: &T,
    b: &T,
    d: Delimiter,
    logical: Ordering,
) -> Result<(), TestCaseError> {
    let (ea, eb) = (enc_with(a, d), enc_with(b, d));
    prop_assert_eq!(
        ea.as_bytes().cmp(eb.as_bytes()),
        logical,
        "{:?} -> {:?}, {:?} -> {:?} ({})",
        a,
        ea,
        b,
        eb,
        d
    );
    Ok(())
}

fn check_injective<T: KeyPart + PartialEq + Debug>(
    a: &T,
    b: &T,
    d: Delimiter,
) -> Result<(), TestCaseError> {
    if a != b {
        prop_assert_ne!(enc_with(a, d), enc_with(b, d));
    }
    Ok(())
}

/// `enc(a) + d` is never a prefix of `enc(b) + d + tail` for `a != b`.
fn check_prefix<T: KeyPart + PartialEq + Debug>(
    a: &T,
    b: &T,
    d: Delimiter,
    tail: &str,
) -> Result<(), TestCaseError> {
    if a != b {
        let prefix = format!("{}{d}", enc_with(a, d));
        let key = format!("{}{d}{tail}", enc_with(b, d));
        prop_assert!(
            !key.starts_with(&prefix),
            "{prefix:?} is a prefix of {key:?}"
        );
    }
    Ok(())
}

/// Distinct values keep their order when each is followed by a delimiter and any
/// rest (`KeyPart`'s composite-key rule): `enc(a) + d + x` sorts like `a` against
/// `enc(b) + d + y`.
fn check_composite_order<T: KeyPart + Debug>(
    a: &T,
    b: &T,
    d: Delimiter,
    x: &str,
    y: &str,
    logical: Ordering,
) -> Result<(), TestCaseError> {
    if logical != Ordering::Equal {
        let ka = format!("{}{d}{x}", enc_with(a, d));
        let kb = format!("{}{d}{y}", enc_with(b, d));
        prop_assert_eq!(
            ka.as_bytes().cmp(kb.as_bytes()),
            logical,
            "{:?} -> {:?}, {:?} -> {:?}",
            a,
            ka,
            b,
            kb
        );
    }
    Ok(())
}

/// Decoding never panics, and whatever it accepts is canonical: it
/// re-encodes to exactly the input.
fn check_decode<T: KeyPart + Debug>(input: &str, d: Delimiter) -> Result<(), TestCaseError> {
    match T::decode_key_with(input, d) {
        Ok(value) => prop_assert_eq!(enc_with(&value, d), input),
        Err(error) => prop_assert!(
            matches!(error, KeyError::Malformed { .. }),
            "unexpected error {error:?}"
        ),
    }
    Ok(())
}

fn mutate(input: &str, index: usize, op: u8, ch: char) -> String {
    let mut chars: Vec<char> = input.chars().collect();
    let len = chars.len();
    match op {
        0 if len > 0 => chars[index % len] = ch,
        1 => chars.insert(index % (len + 1), ch),
        2 if len > 0 => {
            chars.remove(index % len);
        }
        _ => chars.truncate(index % (len + 1)),
    }
    chars.into_iter().collect()
}

/// Edits that make near misses: digits and hex digits, signs, the delimiters and
/// their escape characters, separators of the date forms, controls and UTF-8.
fn mutation() -> impl Strategy<Value = (usize, u8, char)> {
    let chars = vec![
        '0', '1', '2', '3', '5', '6', '9', 'a', 'f', 'g', 'A', 'E', 'F', '-', '+', '#', '"', '$',
        '%', ':', ';', '.', '/', '_', '`', '|', '}', '~', 'T', 'Z', ' ', '\u{0}', '\u{1}', 'é',
        '€',
    ];
    (any::<usize>(), 0u8..4, prop::sample::select(chars))
}

/// Generates the seven property tests for one type, each under a random delimiter.
macro_rules! properties {
        ($module:ident, $t:ty, $values:expr, $cmp:expr) => {
            mod $module {
                use super::*;

                fn logical(a: &$t, b: &$t) -> Ordering {
                    let cmp: fn(&$t, &$t) -> Ordering = $cmp;
                    cmp(a, b)
                }

                proptest! {
                    #[test]
                    fn roundtrip(v in $values, d in delimiters()) {
                        check_roundtrip::<$t>(&v, d)?;
                    }

                    #[test]
                    fn order(a in $values, b in $values, d in delimiters()) {
                        check_order::<$t>(&a, &b, d, logical(&a, &b))?;
                    }

                    #[test]
                    fn injective(a in $values, b in $values, d in delimiters()) {
                        check_injective::<$t>(&a, &b, d)?;
                    }

                    #[test]
                    fn prefix(a in $values, b in $values, d in delimiters(), tail in "[a0#\"$./_`|};:-]{0,6}") {
                        check_prefix::<$t>(&a, &b, d, &tail)?;
                    }

                    #[test]
                    fn composite_order(a in $values, b in $values, d in delimiters(), x in strings(), y in strings()) {
                        check_composite_order::<$t>(&a, &b, d, &x, &y, logical(&a, &b))?;
                    }

                    #[test]
                    fn decode_arbitrary(input in "\\PC{0,64}|.{0,64}", d in delimiters()) {
                        check_decode::<$t>(&input, d)?;
                    }

                    #[test]
                    fn decode_mutated(v in $values, d in delimiters(), (index, op, ch) in mutation()) {
                        check_decode::<$t>(&mutate(&enc_with(&v, d), index, op, ch), d)?;
                    }
                }
            }
        };
    }

/// Strings are ordered by the bytes of their raw UTF-8.
fn raw_byte_order(a: &String, b: &String) -> Ordering {
    a.as_bytes().cmp(b.as_bytes())
}

properties!(prop_string, String, strings(), raw_byte_order);
properties!(prop_u8, u8, integer_values!(u8), Ord::cmp);
properties!(prop_u16, u16, integer_values!(u16), Ord::cmp);
properties!(prop_u32, u32, integer_values!(u32), Ord::cmp);
properties!(prop_u64, u64, integer_values!(u64), Ord::cmp);
properties!(prop_u128, u128, integer_values!(u128), Ord::cmp);
properties!(prop_usize, usize, integer_values!(usize), Ord::cmp);
properties!(prop_i8, i8, signed_values!(i8), Ord::cmp);
properties!(prop_i16, i16, signed_values!(i16), Ord::cmp);
properties!(prop_i32, i32, signed_values!(i32), Ord::cmp);
properties!(prop_i64, i64, signed_values!(i64), Ord::cmp);
properties!(prop_i128, i128, signed_values!(i128), Ord::cmp);
properties!(prop_isize, isize, signed_values!(isize), Ord::cmp);
properties!(prop_bool, bool, any::<bool>(), Ord::cmp);

#[cfg(feature = "time")]
properties!(
    prop_datetime,
    time::OffsetDateTime,
    datetime_values::datetimes(),
    |a, b| a.unix_timestamp_nanos().cmp(&b.unix_timestamp_nanos())
);

#[cfg(feature = "time")]
properties!(prop_date, time::Date, time_values::dates(), Ord::cmp);

#[cfg(feature = "time")]
properties!(
    prop_primitive_datetime,
    time::PrimitiveDateTime,
    time_values::date_times(),
    Ord::cmp
);

#[cfg(feature = "chrono")]
properties!(
    prop_naive_date,
    chrono::NaiveDate,
    chrono_values::dates(),
    Ord::cmp
);

#[cfg(feature = "chrono")]
properties!(
    prop_naive_datetime,
    chrono::NaiveDateTime,
    chrono_values::date_times(),
    Ord::cmp
);

#[cfg(feature = "chrono")]
properties!(
    prop_chrono_utc,
    chrono::DateTime<chrono::Utc>,
    chrono_values::instants(),
    Ord::cmp
);

#[cfg(feature = "uuid")]
properties!(prop_uuid, uuid::Uuid, uuids(), |a, b| a
    .as_bytes()
    .cmp(b.as_bytes()));

// A ULID's order is its timestamp's, then its randomness's: its value as a `u128`.
#[cfg(feature = "ulid")]
properties!(prop_ulid, ulid::Ulid, ulids(), Ord::cmp);

/// A type implementing only the `#` methods, as a user's string-like type would (it
/// delegates to `escape_str`): the default `_with` methods must keep every rule under
/// every delimiter.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Text(String);

impl KeyPart for Text {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        escape_str(&self.0, out)
    }
    fn decode_key(component: &str) -> Result<Self, KeyError> {
        String::decode_key(component).map(Text)
    }
}

/// A user's fixed-width type whose encoding holds every delimiter but `#` as
/// separators (`12.34:56|78_`), with only the `#` methods: the defaults escape it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Separated(u32);

impl KeyPart for Separated {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        let d = format!("{:08}", self.0 % 100_000_000);
        out.push_str(&format!(
            "{}.{}:{}|{}_",
            &d[0..2],
            &d[2..4],
            &d[4..6],
            &d[6..8]
        ));
        Ok(())
    }
    fn decode_key(component: &str) -> Result<Self, KeyError> {
        let b = component.as_bytes();
        let well_formed = b.len() == 12
            && [(2, b'.'), (5, b':'), (8, b'|'), (11, b'_')]
                .iter()
                .all(|&(i, c)| b[i] == c)
            && [0, 1, 3, 4, 6, 7, 9, 10]
                .iter()
                .all(|&i| b[i].is_ascii_digit());
        if !well_formed {
            return Err(malformed("Separated", component, "expected `dd.dd:dd|dd_`"));
        }
        let digits: String = [0, 1, 3, 4, 6, 7, 9, 10]
            .iter()
            .map(|&i| char::from(b[i]))
            .collect();
        digits
            .parse()
            .map(Separated)
            .map_err(|_| malformed("Separated", component, "expected `dd.dd:dd|dd_`"))
    }
}

properties!(prop_custom_text, Text, strings().prop_map(Text), |a, b| a
    .0
    .as_bytes()
    .cmp(b.0.as_bytes()));
properties!(
    prop_custom_separated,
    Separated,
    prop_oneof![0u32..100_000_000, 0u32..200, Just(99_999_999)].prop_map(Separated),
    Ord::cmp
);

/// The built-in fixed-width encodings escape only the delimiter and its escape
/// character: every value of a type keeps one width under each delimiter, and the
/// text changes only where it held the delimiter.
#[test]
fn fixed_width_types_escape_only_the_delimiter() {
    for d in Delimiter::ALL {
        assert_eq!(enc_with(&42u16, d), "00042");
        assert_eq!(enc_with(&-1i8, d), "-127");
        assert_eq!(enc_with(&true, d), "true");
    }
    #[cfg(feature = "time")]
    {
        use time::macros::{date, datetime};
        let t = datetime!(2014-07-09 10:11:12.5 UTC);
        assert_eq!(
            enc_with(&t, Delimiter::HASH),
            "2014-07-09T10:11:12.500000000Z"
        );
        assert_eq!(
            enc_with(&t, Delimiter::DOT),
            "2014-07-09T10:11:12/2E500000000Z"
        );
        assert_eq!(
            enc_with(&t, Delimiter::COLON),
            "2014-07-09T10;3A11;3A12.500000000Z"
        );
        assert_eq!(enc_with(&t, Delimiter::UNDERSCORE), enc(&t));
        assert_eq!(enc_with(&t, Delimiter::PIPE), enc(&t));
        for d in Delimiter::ALL {
            assert_eq!(enc_with(&date!(2014 - 07 - 09), d), "2014-07-09");
            let widths: Vec<usize> = [t, datetime!(0000-01-01 0:00 UTC)]
                .iter()
                .map(|v| enc_with(v, d).len())
                .collect();
            assert_eq!(widths[0], widths[1], "{d}");
            let round = time::OffsetDateTime::decode_key_with(&enc_with(&t, d), d);
            assert_eq!(round, Ok(t));
        }
        // What the escape does not write is refused.
        for bad in [
            "2014-07-09T10:11:12/2E500000000Z",
            "2014-07-09T10/3A11:12.500000000Z",
            "2014-07-09T10:11:12/2F500000000Z",
            "2014-07-09T10:11:12/2e500000000Z",
            "2014-07-09T10:11:12/500000000Z",
            "2014-07-09T10:11:12.500000000Z",
        ] {
            let decoded = time::OffsetDateTime::decode_key_with(bad, Delimiter::DOT);
            if bad == "2014-07-09T10:11:12/2E500000000Z" {
                assert_eq!(decoded, Ok(t));
            } else {
                assert!(matches!(decoded, Err(KeyError::Malformed { .. })), "{bad}");
            }
        }
    }
    // A custom type keeps the default: its `#`-encoding escaped as a string.
    assert_eq!(
        enc_with(&Separated(12_345_678), Delimiter::DOT),
        "12/2E34:56|78_"
    );
    assert_eq!(
        enc_with(&Separated(12_345_678), Delimiter::COLON),
        ";31;32;2E;33;34;3A;35;36|;37;38_"
    );
    assert_eq!(
        enc_with(&Separated(12_345_678), Delimiter::HASH),
        "12.34:56|78_"
    );
}

proptest! {
    /// Two-component keys identify their components, and split back into them.
    #[test]
    fn full_key_is_injective_and_splits(
        s1 in strings(), s2 in strings(), t1 in strings(), t2 in strings(), d in delimiters()
    ) {
        let key = |a: &String, b: &String| format!("{}{d}{}", enc_with(a, d), enc_with(b, d));
        let (ks, kt) = (key(&s1, &s2), key(&t1, &t2));
        if ks == kt {
            prop_assert_eq!((&s1, &s2), (&t1, &t2));
        }
        for (key, (a, b)) in [(&ks, (&s1, &s2)), (&kt, (&t1, &t2))] {
            let parts: Vec<&str> = d.split(key).collect();
            prop_assert_eq!(parts.len(), 2, "{:?}", key);
            prop_assert_eq!(&String::decode_key_with(parts[0], d).map_err(key_error)?, a);
            prop_assert_eq!(&String::decode_key_with(parts[1], d).map_err(key_error)?, b);
        }
    }

    /// Full keys built from components that share prefixes (delimiter-heavy).
    #[test]
    fn full_key_with_shared_prefixes(
        base in "[a#\"$._`|:;]{0,4}", x in "[a#\"$._`|:;]{0,3}", y in "[a#\"$._`|:;]{0,3}",
        u in "[a#\"$._`|:;]{0,3}", w in "[a#\"$._`|:;]{0,3}", d in delimiters()
    ) {
        let (s1, s2, t1, t2) = (base.clone() + &x, y, base + &u, w);
        let key = |a: &String, b: &String| format!("{}{d}{}", enc_with(a, d), enc_with(b, d));
        if key(&s1, &s2) == key(&t1, &t2) {
            prop_assert_eq!((&s1, &s2), (&t1, &t2));
        }
    }

    /// A string value is never matched by the whole-component prefix of a
    /// different value that it extends.
    #[test]
    fn string_prefix_of_extension(
        a in strings(), suffix in "[a#!\"$% \x00./_`|}:;A9]{1,4}", tail in "\\PC{0,8}", rest in strings(),
        d in delimiters()
    ) {
        let b = a.clone() + &suffix;
        check_prefix(&a, &b, d, &tail)?;
        // ... and sorts above it, whatever follows either.
        check_composite_order(&a, &b, d, &tail, &rest, Ordering::Less)?;
    }

    /// `begins_with` on an escaped partial value is exact: the escape of `p` is a
    /// prefix of the escape of `v` exactly when `p` is a prefix of `v`.
    #[test]
    fn escaped_prefixes_match_raw_prefixes(
        v in strings(), p in strings(), cut in any::<prop::sample::Index>(), d in delimiters()
    ) {
        let chars: Vec<char> = v.chars().collect();
        let own: String = chars[..cut.index(chars.len() + 1)].iter().collect();
        for p in [p, own] {
            let (mut ev, mut ep) = (String::new(), String::new());
            d.escape_str(&v, &mut ev).map_err(key_error)?;
            String::escape_partial_with(&p, d, &mut ep).map_err(key_error)?;
            prop_assert_eq!(ev.starts_with(&ep), v.starts_with(&p), "{:?} / {:?}", v, p);
        }
    }

    /// An encoded string is made of escapes (the escape character and two uppercase
    /// hex digits) and bytes above the escape character: every byte that can follow a
    /// proper prefix sorts above the delimiter, and none is the delimiter.
    #[test]
    fn encoded_strings_stay_above_the_delimiter(v in strings(), d in delimiters()) {
        let e = enc_with(&v, d);
        let escape = d.escape_char() as u8;
        prop_assert!(!e.contains(d.as_char()), "{:?} -> {:?}", v, e);
        let bytes = e.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == escape {
                let hex = bytes.get(i + 1..i + 3).unwrap_or_default();
                prop_assert!(
                    hex.len() == 2 && hex.iter().all(|b| b"0123456789ABCDEF".contains(b)),
                    "{:?} -> {:?}", v, e
                );
                i += 3;
            } else {
                prop_assert!(bytes[i] > escape, "{:?} -> {:?}", v, e);
                i += 1;
            }
        }
        if d == Delimiter::HASH {
            prop_assert!(e.bytes().all(|b| b > b'#' && b != b'$'), "{:?} -> {:?}", v, e);
        }
        prop_assert_eq!(
            e.bytes().filter(|&b| b == escape).count(),
            v.bytes().filter(|&b| b <= escape).count()
        );
    }

    /// Whatever mix of types, a template key splits into its components.
    #[test]
    fn mixed_template_roundtrip(
        id in any::<u64>(), name in strings(), n in any::<i32>(), flag in any::<bool>(),
        d in delimiters()
    ) {
        let mut key = String::from("USER");
        key.push(d.as_char());
        id.encode_key_with(d, &mut key).map_err(key_error)?;
        key.push(d.as_char());
        name.encode_key_with(d, &mut key).map_err(key_error)?;
        key.push(d.as_char());
        n.encode_key_with(d, &mut key).map_err(key_error)?;
        key.push(d.as_char());
        flag.encode_key_with(d, &mut key).map_err(key_error)?;
        let parts: Vec<&str> = d.split(&key).collect();
        prop_assert_eq!(parts.len(), 5);
        prop_assert_eq!(parts[0], "USER");
        prop_assert_eq!(u64::decode_key_with(parts[1], d).map_err(key_error)?, id);
        prop_assert_eq!(String::decode_key_with(parts[2], d).map_err(key_error)?, name);
        prop_assert_eq!(i32::decode_key_with(parts[3], d).map_err(key_error)?, n);
        prop_assert_eq!(bool::decode_key_with(parts[4], d).map_err(key_error)?, flag);
    }
}

/// `key_component` (how an update reads key fields back to rebuild an index key)
/// splits a rendered key exactly, whatever the string values hold.
mod key_component_split {
    use super::*;
    use crate::key::template::key_component;
    use crate::{Entity, Table};

    #[derive(Table)]
    #[dynamo(pk = "PK", sk = "SK")]
    struct App;

    /// A table whose keys use `:` unless an entity says otherwise.
    #[derive(Table)]
    #[dynamo(pk = "PK", sk = "SK", delimiter = ":")]
    struct Colons;

    #[derive(Entity)]
    #[dynamo(table = App, pk = "P#{a}", sk = "N#{a}#{b}#X#{c}")]
    struct Row {
        a: String,
        b: String,
        c: u32,
    }

    #[derive(Entity)]
    #[dynamo(table = App, delimiter = ".", pk = "P.{a}", sk = "N.{a}.{b}.X.{c}")]
    struct DotRow {
        a: String,
        b: String,
        c: u32,
    }

    #[derive(Entity)]
    #[dynamo(table = App, delimiter = "_", pk = "P_{a}", sk = "N_{a}_{b}_X_{c}")]
    struct UnderscoreRow {
        a: String,
        b: String,
        c: u32,
    }

    #[derive(Entity)]
    #[dynamo(table = App, delimiter = "|", pk = "P|{a}", sk = "N|{a}|{b}|X|{c}")]
    struct PipeRow {
        a: String,
        b: String,
        c: u32,
    }

    /// Takes the table's `:`.
    #[derive(Entity)]
    #[dynamo(table = Colons, pk = "P:{a}", sk = "N:{a}:{b}:X:{c}")]
    struct ColonRow {
        a: String,
        b: String,
        c: u32,
    }

    fn component<T: KeyPart>(
        rendered: Option<&str>,
        segments: &[Option<&str>],
        d: Delimiter,
        field: usize,
    ) -> Option<T> {
        key_component("Row", rendered, segments, d, field)
            .ok()
            .and_then(|c| T::decode_key_with(c, d).ok())
    }

    /// Every field of `key` (rendered from `sk = "N{d}{a}{d}{b}{d}X{d}{c}"`) reads back.
    fn check(
        key: crate::RawKey,
        d: Delimiter,
        a: &str,
        b: &str,
        c: u32,
    ) -> Result<(), TestCaseError> {
        let sk = key.sk.as_deref();
        let (n, x, p) = (format!("N{d}"), format!("{d}X{d}"), format!("P{d}"));
        let delimiter = d.to_string();
        let segments = [
            Some(n.as_str()),
            None,
            Some(&delimiter),
            None,
            Some(&x),
            None,
        ];
        let read = |field| component::<String>(sk, &segments, d, field);
        prop_assert_eq!(read(0), Some(a.to_owned()));
        prop_assert_eq!(read(1), Some(b.to_owned()));
        prop_assert_eq!(component::<u32>(sk, &segments, d, 2), Some(c));
        let pk = component::<String>(Some(&key.pk), &[Some(&p), None], d, 0);
        prop_assert_eq!(pk, Some(a.to_owned()));
        Ok(())
    }

    proptest! {
        #[test]
        fn key_component_reads_back_every_field(a in strings(), b in strings(), c in any::<u32>()) {
            let fail = |e: crate::Error| TestCaseError::fail(e.to_string());
            let (x, y) = (a.clone(), b.clone());
            let row = Row { a: x.clone(), b: y.clone(), c }.primary_key();
            check(row.into_raw().map_err(fail)?, Delimiter::HASH, &a, &b, c)?;
            let row = DotRow { a: x.clone(), b: y.clone(), c }.primary_key();
            check(row.into_raw().map_err(fail)?, Delimiter::DOT, &a, &b, c)?;
            let row = UnderscoreRow { a: x.clone(), b: y.clone(), c }.primary_key();
            check(row.into_raw().map_err(fail)?, Delimiter::UNDERSCORE, &a, &b, c)?;
            let row = PipeRow { a: x.clone(), b: y.clone(), c }.primary_key();
            check(row.into_raw().map_err(fail)?, Delimiter::PIPE, &a, &b, c)?;
            let row = ColonRow { a: x, b: y, c }.primary_key();
            check(row.into_raw().map_err(fail)?, Delimiter::COLON, &a, &b, c)?;
        }
    }

    #[test]
    fn templates_render_with_their_delimiter() {
        let key = |k: crate::Key<DotRow>| k.into_raw().unwrap();
        let raw = key(DotRow::key(DotRowKey {
            a: "x y",
            b: "v1.2",
            c: 7u32,
        }));
        assert_eq!(raw.pk, "P.x/20y");
        assert_eq!(raw.sk.as_deref(), Some("N.x/20y.v1/2E2.X.0000000007"));
        let raw = ColonRow {
            a: "a:b".into(),
            b: "B".into(),
            c: 1,
        }
        .primary_key()
        .into_raw()
        .unwrap();
        assert_eq!(raw.sk.as_deref(), Some("N:a;3Ab:B:X:0000000001"));
    }
}

#[cfg(feature = "time")]
proptest! {
    /// Any local date-time either encodes (and round-trips) or is
    /// `OutOfRange` exactly when its UTC year is outside 0000..=9999.
    #[test]
    fn datetime_local_years(v in datetime_values::local_datetimes()) {
        let in_range = (datetime_values::MIN..=datetime_values::MAX).contains(&v);
        let mut out = String::new();
        match v.encode_key(&mut out) {
            Ok(()) => {
                prop_assert!(in_range);
                prop_assert_eq!(time::OffsetDateTime::decode_key(&out).map_err(key_error)?, v);
            }
            Err(error) => {
                prop_assert!(!in_range, "{:?}", v);
                prop_assert!(matches!(error, KeyError::OutOfRange { .. }), "{:?}", error);
            }
        }
    }
}

/// A date type's values either encode (and round-trip) or are refused as
/// `OutOfRange` exactly when their year is outside 0000..=9999.
#[cfg(any(feature = "time", feature = "chrono"))]
fn check_year_range<T: KeyPart + PartialEq + Debug>(
    value: &T,
    in_range: bool,
) -> Result<(), TestCaseError> {
    let mut out = String::new();
    match value.encode_key(&mut out) {
        Ok(()) => {
            prop_assert!(in_range, "{:?} encoded to {:?}", value, out);
            prop_assert_eq!(&T::decode_key(&out).map_err(key_error)?, value);
        }
        Err(error) => {
            prop_assert!(!in_range, "{:?}: {:?}", value, error);
            prop_assert!(matches!(error, KeyError::OutOfRange { .. }), "{:?}", error);
            prop_assert!(out.is_empty(), "a refused value wrote {:?}", out);
        }
    }
    Ok(())
}

#[cfg(feature = "time")]
proptest! {
    #[test]
    fn date_years(v in time_values::any_dates()) {
        check_year_range(&v, (0..=9999).contains(&v.year()))?;
    }

    #[test]
    fn primitive_datetime_years(v in time_values::any_date_times()) {
        check_year_range(&v, (0..=9999).contains(&v.year()))?;
    }
}

#[cfg(feature = "chrono")]
proptest! {
    #[test]
    fn chrono_years(d in chrono_values::any_dates(), t in chrono_values::times()) {
        use chrono::Datelike;
        let in_range = (0..=9999).contains(&d.year());
        let v = chrono::NaiveDateTime::new(d, t);
        check_year_range(&d, in_range)?;
        check_year_range(&v, in_range)?;
        check_year_range(&v.and_utc(), in_range)?;
    }
}

#[cfg(feature = "time")]
#[test]
fn date_examples() {
    use time::macros::{date, datetime};
    use time::{Date, PrimitiveDateTime};
    assert_eq!(enc(&date!(2014 - 07 - 09)), "2014-07-09");
    assert_eq!(enc(&time_values::MIN_DATE), "0000-01-01");
    assert_eq!(enc(&time_values::MAX_DATE), "9999-12-31");
    assert_eq!(Date::decode_key("2024-02-29"), Ok(date!(2024 - 02 - 29)));
    let v = datetime!(2024-01-02 03:04:05.000_000_006);
    assert_eq!(enc(&v), "2024-01-02T03:04:05.000000006");
    assert_eq!(
        PrimitiveDateTime::decode_key("2024-01-02T03:04:05.000000006"),
        Ok(v)
    );
    assert_eq!(
        enc(&PrimitiveDateTime::new(
            time_values::MAX_DATE,
            time::Time::MAX
        )),
        "9999-12-31T23:59:59.999999999"
    );
    for v in [date!(-0001 - 12 - 31), date!(-9999 - 01 - 01)] {
        match enc_err(&v) {
            KeyError::OutOfRange {
                type_name, reason, ..
            } => {
                assert_eq!(type_name, "Date");
                assert!(reason.contains("between 0000 and 9999"), "{reason}");
            }
            other => panic!("{v}: {other:?}"),
        }
    }
    assert!(matches!(
        enc_err(&datetime!(-0001-12-31 23:59:59)),
        KeyError::OutOfRange {
            type_name: "PrimitiveDateTime",
            ..
        }
    ));
    for input in [
        "",
        "2024-02-30",
        "2023-02-29",
        "2024-13-01",
        "2024-00-01",
        "2024-01-00",
        "2024-1-02",
        "2024-01-2",
        "+024-01-02",
        "-024-01-02",
        "2024/01/02",
        "2024-01-02T",
        "2024-01-02 ",
        "20240102",
        "２０２4-01-02",
    ] {
        assert_malformed::<Date>(input);
    }
    for input in [
        "2024-01-02T03:04:05.000000006Z",
        "2024-01-02T03:04:05",
        "2024-01-02T03:04:05.00000006",
        "2024-01-02 03:04:05.000000006",
        "2024-01-02t03:04:05.000000006",
        "2024-01-02T24:00:00.000000000",
        "2024-01-02T23:60:00.000000000",
        "2024-01-02T23:59:60.000000000",
        "2024-02-30T00:00:00.000000000",
        "2024-01-02",
    ] {
        // `time` names the type `PlainDateTime` (`PrimitiveDateTime` is its alias).
        assert_malformed_as::<PrimitiveDateTime>(input, "PrimitiveDateTime");
    }
}

#[cfg(feature = "chrono")]
#[test]
fn chrono_examples() {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
    let day = NaiveDate::from_ymd_opt(2014, 7, 9).unwrap();
    assert_eq!(enc(&day), "2014-07-09");
    assert_eq!(NaiveDate::decode_key("2014-07-09"), Ok(day));
    assert_eq!(enc(&chrono_values::min_date()), "0000-01-01");
    assert_eq!(enc(&chrono_values::max_date()), "9999-12-31");
    let t = NaiveTime::from_hms_nano_opt(3, 4, 5, 6).unwrap();
    let v = NaiveDateTime::new(day, t);
    assert_eq!(enc(&v), "2014-07-09T03:04:05.000000006");
    assert_eq!(
        NaiveDateTime::decode_key("2014-07-09T03:04:05.000000006"),
        Ok(v)
    );
    assert_eq!(enc(&v.and_utc()), "2014-07-09T03:04:05.000000006Z");
    assert_eq!(
        DateTime::<Utc>::decode_key("2014-07-09T03:04:05.000000006Z"),
        Ok(v.and_utc())
    );
    // A leap second is second 60: after second 59, before the next minute.
    let leap = NaiveDateTime::new(
        day,
        NaiveTime::from_hms_nano_opt(23, 59, 59, 1_500_000_000).unwrap(),
    );
    assert_eq!(enc(&leap), "2014-07-09T23:59:60.500000000");
    assert_eq!(
        NaiveDateTime::decode_key("2014-07-09T23:59:60.500000000"),
        Ok(leap)
    );
    let before = NaiveDateTime::new(
        day,
        NaiveTime::from_hms_nano_opt(23, 59, 59, 999_999_999).unwrap(),
    );
    let after = NaiveDate::from_ymd_opt(2014, 7, 10)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap();
    assert!(before < leap && leap < after);
    assert!(enc(&before) < enc(&leap) && enc(&leap) < enc(&after));
    assert_eq!(enc(&leap.and_utc()), "2014-07-09T23:59:60.500000000Z");
    for v in [
        NaiveDate::from_ymd_opt(-1, 12, 31).unwrap(),
        NaiveDate::from_ymd_opt(10_000, 1, 1).unwrap(),
        NaiveDate::MIN,
        NaiveDate::MAX,
    ] {
        match enc_err(&v) {
            KeyError::OutOfRange { type_name, .. } => assert_eq!(type_name, "NaiveDate"),
            other => panic!("{v}: {other:?}"),
        }
        let at = v.and_hms_opt(0, 0, 0).unwrap();
        assert!(matches!(
            enc_err(&at),
            KeyError::OutOfRange {
                type_name: "NaiveDateTime",
                ..
            }
        ));
        assert!(matches!(
            enc_err(&at.and_utc()),
            KeyError::OutOfRange {
                type_name: "DateTime<Utc>",
                ..
            }
        ));
    }
    for input in [
        "",
        "2024-02-30",
        "2024-13-01",
        "2024-1-02",
        "+024-01-02",
        "2024-01-02T",
    ] {
        assert_malformed::<NaiveDate>(input);
    }
    for input in [
        "2024-01-02T03:04:05.000000006Z",
        "2024-01-02T24:00:00.000000000",
        "2024-01-02T23:61:00.000000000",
        "2024-01-02T23:59:61.000000000",
        "2024-01-02T23:59:6.0000000000",
    ] {
        assert_malformed::<NaiveDateTime>(input);
    }
    for input in [
        "2024-01-02T03:04:05.000000006",
        "2024-01-02T03:04:05.000000006+00:00",
        "2024-01-02T03:04:05Z",
        "2024-01-02T03:04:05.000000006z",
    ] {
        assert_malformed_as::<DateTime<Utc>>(input, "DateTime<Utc>");
    }
}

#[cfg(any(feature = "time", feature = "chrono"))]
fn enc_err<T: KeyPart>(value: &T) -> KeyError {
    let mut out = String::new();
    value.encode_key(&mut out).expect_err("encoding must fail")
}

fn assert_malformed<T: KeyPart + Debug>(input: &str) {
    assert_malformed_as::<T>(
        input,
        std::any::type_name::<T>().rsplit("::").next().unwrap(),
    );
}

/// `input` is refused as a malformed component of `type_name`.
fn assert_malformed_as<T: KeyPart + Debug>(input: &str, expected: &str) {
    match T::decode_key(input) {
        Err(KeyError::Malformed {
            input: got,
            type_name,
            ..
        }) => {
            assert_eq!(got, input);
            assert_eq!(type_name, expected);
        }
        other => panic!("{input:?} decoded to {other:?}"),
    }
}

proptest! {
    /// A 128-bit key field is stored as a number attribute too: the key accepts a
    /// value exactly when the attribute can hold it, so no entity is keyable but
    /// unstorable.
    #[test]
    fn wide_integers_key_exactly_what_the_attribute_stores(
        u in any::<u128>(), shift in 0..128u32, i in any::<i128>(), e in 0..39u32,
    ) {
        use crate::codec::AttrValue;
        let round = 10u128.pow(e).saturating_mul(u % 100); // few significant digits, any length
        for v in [u, u >> shift, round] {
            prop_assert_eq!(v.encode_key(&mut String::new()).is_ok(), v.to_attr().is_ok(), "{}", v);
        }
        for v in [i, i >> shift, -i.saturating_abs() / 3] {
            prop_assert_eq!(v.encode_key(&mut String::new()).is_ok(), v.to_attr().is_ok(), "{}", v);
        }
    }
}

#[test]
fn widths_match_max() {
    assert_eq!(width::U8, u8::MAX.to_string().len());
    assert_eq!(width::U16, u16::MAX.to_string().len());
    assert_eq!(width::U32, u32::MAX.to_string().len());
    assert_eq!(width::U64, u64::MAX.to_string().len());
    assert_eq!(width::U128, u128::MAX.to_string().len());
    assert_eq!(width::I8, i8::MAX.to_string().len());
    assert_eq!(width::I16, i16::MAX.to_string().len());
    assert_eq!(width::I32, i32::MAX.to_string().len());
    assert_eq!(width::I64, i64::MAX.to_string().len());
    assert_eq!(width::I128, i128::MAX.to_string().len());
}

#[test]
fn integer_examples() {
    assert_eq!(enc(&5i64), "0000000000000000005");
    assert_eq!(enc(&-1i64), "-9223372036854775807");
    assert_eq!(enc(&i64::MIN), "-0000000000000000000");
    assert_eq!(enc(&i64::MAX), "9223372036854775807");
    assert_eq!(enc(&0i8), "000");
    assert_eq!(enc(&127i8), "127");
    assert_eq!(enc(&-1i8), "-127");
    assert_eq!(enc(&-128i8), "-000");
    assert_eq!(enc(&-2i16), "-32766");
    assert_eq!(enc(&i32::MIN), "-0000000000");
    // 128-bit values are limited to what a DynamoDB number holds: 38 significant digits.
    let nines = 10i128.pow(38) - 1;
    assert_eq!(enc(&nines), format!("0{}", "9".repeat(38)));
    assert_eq!(enc(&-nines), "-070141183460469231731687303715884105729");
    // 10^38 is 39 digits long but has one significant digit: storable.
    assert_eq!(enc(&10i128.pow(38)), format!("1{}", "0".repeat(38)));
    assert_eq!(enc(&(34 * 10u128.pow(37))), format!("34{}", "0".repeat(37)));
    let refused = |r: Result<(), KeyError>| matches!(r, Err(KeyError::OutOfRange { .. }));
    assert!(refused(i128::MIN.encode_key(&mut String::new())));
    assert!(refused(i128::MAX.encode_key(&mut String::new())));
    assert!(refused(u128::MAX.encode_key(&mut String::new())));
    assert!(refused((10u128.pow(38) + 1).encode_key(&mut String::new())));
    // Decoding accepts exactly what encoding produces.
    assert_malformed::<i128>(&format!("-{}", "0".repeat(39)));
    assert_malformed::<u128>("100000000000000000000000000000000000001");
    assert_eq!(enc(&-1i128), "-170141183460469231731687303715884105727");
    assert_eq!(enc(&-1isize), "-9223372036854775807");
    assert_eq!(enc(&7u8), "007");
    assert_eq!(enc(&u8::MAX), "255");
    assert_eq!(enc(&42u16), "00042");
    assert_eq!(enc(&42u32), "0000000042");
    assert_eq!(enc(&42u64), "00000000000000000042");
    assert_eq!(enc(&42usize), "00000000000000000042");
    assert_eq!(enc(&u64::MAX), "18446744073709551615");
    assert_eq!(enc(&1u128), format!("{}1", "0".repeat(38)));
    assert_eq!(i64::decode_key("-0000000000000000000"), Ok(i64::MIN));
    assert_eq!(i8::decode_key("-127"), Ok(-1));
    assert_eq!(
        u128::decode_key("100000000000000000000000000000000000000"),
        Ok(10u128.pow(38))
    );
}

#[test]
fn integer_rejects_malformed() {
    assert_malformed::<i64>("5");
    assert_malformed::<i64>("+000000000000000005");
    assert_malformed::<i64>("00000000000000000005");
    assert_malformed::<i64>("9223372036854775808");
    assert_malformed::<i64>("-9223372036854775808");
    assert_malformed::<i64>("-");
    assert_malformed::<i64>("--000000000000000005");
    assert_malformed::<i64>("000000000000000000a");
    assert_malformed::<i64>(" 000000000000000005");
    assert_malformed::<i64>("");
    assert_malformed::<i8>("128");
    assert_malformed::<i8>("-128");
    assert_malformed::<i8>("-1");
    assert_malformed::<u8>("256");
    assert_malformed::<u8>("-001");
    assert_malformed::<u8>("+01");
    assert_malformed::<u8>("１２３"); // full-width digits
    assert_malformed::<u64>("18446744073709551616");
    assert_malformed::<u64>("99999999999999999999");
    assert_malformed::<u128>("340282366920938463463374607431768211456");
    assert_malformed::<i128>("170141183460469231731687303715884105728");
    assert_malformed::<usize>("18446744073709551616");
    assert_malformed::<usize>("042");
    assert_malformed::<isize>("9223372036854775808");
    assert_malformed::<isize>("42");
}

#[test]
fn bool_examples() {
    assert_eq!(enc(&false), "false");
    assert_eq!(enc(&true), "true");
    assert_eq!(bool::decode_key("true"), Ok(true));
    assert_malformed::<bool>("TRUE");
    assert_malformed::<bool>("1");
    assert_malformed::<bool>("");
}

#[test]
fn string_examples() {
    assert_eq!(enc(&String::new()), "");
    assert_eq!(enc(&"plain".to_owned()), "plain");
    assert_eq!(enc(&"a#b".to_owned()), "a%23b");
    assert_eq!(enc(&"John Smith".to_owned()), "John%20Smith");
    assert_eq!(enc(&"say \"hi\"!".to_owned()), "say%20%22hi%22%21");
    assert_eq!(enc(&"100% $5".to_owned()), "100%25%20%245");
    assert_eq!(enc(&"%23".to_owned()), "%2523");
    assert_eq!(enc(&"##".to_owned()), "%23%23");
    assert_eq!(enc(&"\u{0}\u{1}\u{1f}".to_owned()), "%00%01%1F");
    // Characters above `%` are written as is, multi-byte UTF-8 included.
    assert_eq!(
        enc(&"&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~\u{7f}".to_owned()),
        "&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~\u{7f}"
    );
    assert_eq!(enc(&"é#€".to_owned()), "é%23€");
    for value in [
        "", "a#b", "\"", "#", "\"$", "%", "%23", "\u{1}", "#\u{1}", "\0", "é#€",
    ] {
        assert_eq!(
            String::decode_key(&enc(&value.to_owned())).as_deref(),
            Ok(value)
        );
    }
    let mut out = String::from("ORDER#");
    escape_str("x#y", &mut out).unwrap();
    assert_eq!(out, "ORDER#x%23y");
}

/// The examples: a value sorts below its own extensions when both are
/// followed by `#` and more components.
#[test]
fn string_values_sort_below_their_extensions_in_composite_keys() {
    let key = |v: &str| format!("N#{}#00001", enc(&v.to_owned()));
    for (lower, higher) in [
        ("b", "b!"),
        ("b", "b "),
        ("b", "b#"),
        ("b", "b\""),
        ("b", "b$"),
        ("b", "b%"),
        ("John", "John Smith"),
        ("a", "a!"),
        ("a", "a#"),
        ("", "\u{0}"),
        ("a\u{0}", "a\u{1}"),
        ("a%", "a&"),
        ("a~", "aé"),
    ] {
        assert!(key(lower) < key(higher), "{lower:?} vs {higher:?}");
    }
}

#[test]
fn string_accepts_every_character() {
    // With the `%`-escape no character needs to be forbidden, U+0001 included.
    for ch in [
        '\u{0}',
        '\u{1}',
        '\u{2}',
        ' ',
        '"',
        '#',
        '$',
        '%',
        '&',
        '\u{7f}',
        '\u{10ffff}',
    ] {
        let value = format!("a{ch}b{ch}");
        assert_eq!(String::decode_key(&enc(&value)), Ok(value));
    }
}

#[test]
fn string_rejects_malformed() {
    // Raw characters up to `%`: encode never writes them.
    for input in [
        "a#b", "#", "#\u{1}", "\"", "a\"b", "\"\"", "\"$", "a b", " ", "!", "$", "\u{0}", "\u{1f}",
        "a%",
    ] {
        assert_malformed::<String>(input);
    }
    // Escapes that encode never writes: incomplete, lowercase or not hex, or of a
    // character above `%` (written as is).
    for input in [
        "%", "%2", "a%2", "%2x", "%G0", "%-1", "%+1", "%2a", "%2f", "%26", "%41", "%7F", "%FF",
        "%C3%A9", "% 23", "%%23", "%\u{e9}",
    ] {
        assert_malformed::<String>(input);
    }
    assert_eq!(
        String::decode_key("%25%23%20%00"),
        Ok("%# \u{0}".to_owned())
    );
}

/// The escape proposed originally (`#` -> `#` U+0001) leaves a raw `#` in
/// the encoding of `x#`, so `x#` (a whole-component prefix for the value
/// `x`) would match it. The chosen escape must not.
#[test]
fn whole_component_prefix_does_not_match_value_ending_in_delimiter() {
    let original = |s: &str| s.replace('#', "#\u{1}");
    assert!(format!("{}#", original("x#")).starts_with(&format!("{}#", original("x"))));

    let prefix = format!("ORDER#{}#", enc(&"x".to_owned()));
    for other in ["x#", "x#y", "x\"", "x\"$", "x$", "x%", "x%23", "x "] {
        let key = format!("ORDER#{}#rest", enc(&other.to_owned()));
        assert!(!key.starts_with(&prefix), "{prefix:?} matches {key:?}");
    }
    let prefix = format!("ORDER#{}#", enc(&1u64));
    assert!(!format!("ORDER#{}#x", enc(&10u64)).starts_with(&prefix));
}

#[test]
fn split_components_examples() {
    fn parts(key: &str) -> Vec<&str> {
        split_components(key).collect()
    }
    assert_eq!(parts(""), [""]);
    assert_eq!(parts("USER"), ["USER"]);
    assert_eq!(parts("ORDER##x"), ["ORDER", "", "x"]);
    assert_eq!(parts("ORDER#a%23b#c%22d"), ["ORDER", "a%23b", "c%22d"]);
    assert_eq!(parts("a#"), ["a", ""]);
    let dots: Vec<&str> = Delimiter::DOT.split("2014-07-09.001.a/2Eb").collect();
    assert_eq!(dots, ["2014-07-09", "001", "a/2Eb"]);
}

#[test]
fn key_arg_and_optional() {
    fn arg<T, A: KeyArg<T>>(a: A, d: Delimiter) -> String {
        let mut out = String::new();
        a.encode_key_arg(d, &mut out).unwrap();
        out
    }
    let owned = "a#b".to_owned();
    for d in Delimiter::ALL {
        let expected = enc_with(&owned, d);
        assert_eq!(arg::<String, _>(&owned, d), expected);
        assert_eq!(arg::<String, _>("a#b", d), expected);
        assert_eq!(arg::<String, _>(owned.clone(), d), expected);
    }
    assert_eq!(arg::<String, _>("a#b", Delimiter::HASH), "a%23b");
    assert_eq!(arg::<String, _>("a.b", Delimiter::DOT), "a/2Eb");
    assert_eq!(arg::<u32, _>(7u32, Delimiter::HASH), "0000000007");
    assert_eq!(arg::<u32, _>(&7u32, Delimiter::PIPE), "0000000007");

    fn optional<T: OptionalKeyPart>(value: T, d: Delimiter) -> (bool, String) {
        let mut out = String::from("GSI#");
        let present = value.encode_optional_key(d, &mut out).unwrap();
        (present, out)
    }
    let hash = Delimiter::HASH;
    assert_eq!(optional(3u8, hash), (true, "GSI#003".to_owned()));
    assert_eq!(optional(Some(3u8), hash), (true, "GSI#003".to_owned()));
    assert_eq!(optional(None::<u8>, hash), (false, "GSI#".to_owned()));
    assert_eq!(
        optional(Some("#".to_owned()), hash),
        (true, "GSI#%23".to_owned())
    );
    assert_eq!(
        optional(Some("_".to_owned()), Delimiter::UNDERSCORE),
        (true, "GSI#`5F".to_owned())
    );
}

#[test]
fn error_messages() {
    let forbidden = KeyError::ForbiddenChar {
        ch: '\u{1}',
        value: "a\u{1}".to_owned(),
    };
    assert_eq!(
        forbidden.to_string(),
        "character '\\u{1}' is not allowed in a key value"
    );
    assert_eq!(
        u8::decode_key("25").unwrap_err().to_string(),
        "malformed u8 key component: wrong number of digits"
    );
    assert_eq!(
        String::decode_key("a#b").unwrap_err().to_string(),
        "malformed String key component: contains an unescaped `#`"
    );
}

#[cfg(feature = "time")]
#[test]
fn datetime_examples() {
    use time::OffsetDateTime;
    use time::macros::datetime;
    let v = datetime!(2024-01-02 03:04:05.000_000_006 +01:00);
    assert_eq!(enc(&v), "2024-01-02T02:04:05.000000006Z");
    assert_eq!(
        OffsetDateTime::decode_key("2024-01-02T02:04:05.000000006Z"),
        Ok(v)
    );
    assert_eq!(
        OffsetDateTime::decode_key("2024-01-02T02:04:05.000000006Z")
            .unwrap()
            .offset(),
        time::UtcOffset::UTC
    );
    assert_eq!(enc(&datetime_values::MIN), "0000-01-01T00:00:00.000000000Z");
    assert_eq!(enc(&datetime_values::MAX), "9999-12-31T23:59:59.999999999Z");
    assert_eq!(
        enc(&datetime!(1970-01-01 0:00 UTC)),
        "1970-01-01T00:00:00.000000000Z"
    );
}

#[cfg(feature = "time")]
#[test]
fn datetime_rejects_out_of_range_years() {
    use time::macros::datetime;
    for v in [
        datetime!(-0001-12-31 23:59:59.999_999_999 UTC),
        datetime!(-9999-01-01 0:00 UTC),
        // Year 0000 locally, but year -1 in UTC.
        datetime!(0000-01-01 0:00 +01:00),
        // Year 9999 locally, but year 10000 in UTC.
        datetime!(9999-12-31 23:30 -01:00),
    ] {
        match enc_err(&v) {
            KeyError::OutOfRange { type_name, .. } => assert_eq!(type_name, "OffsetDateTime"),
            other => panic!("{v}: {other:?}"),
        }
    }
    let message = enc_err(&datetime!(-0001-01-01 0:00 UTC)).to_string();
    assert!(message.contains("between 0000 and 9999"), "{message}");
}

#[cfg(feature = "time")]
#[test]
fn datetime_rejects_malformed() {
    use time::OffsetDateTime;
    for input in [
        "",
        "2024-01-02T02:04:05Z",
        "2024-01-02T02:04:05.000000006",
        "2024-01-02T02:04:05.000000006+00:00",
        "2024-01-02 02:04:05.000000006Z",
        "2024-01-02t02:04:05.000000006z",
        "2024-01-02T02:04:05.0000000060Z",
        "2024-02-30T02:04:05.000000006Z",
        "2023-02-29T00:00:00.000000000Z",
        "2024-13-01T00:00:00.000000000Z",
        "2024-00-01T00:00:00.000000000Z",
        "2024-01-00T00:00:00.000000000Z",
        "2024-01-02T24:00:00.000000000Z",
        "2024-01-02T23:60:00.000000000Z",
        "2024-12-31T23:59:60.000000000Z",
        "+024-01-02T02:04:05.000000006Z",
        "-024-01-02T02:04:05.000000006Z",
        "2024-1-02T02:04:05.0000000006Z",
        "２０２4-01-02T02:04:05.000000Z",
    ] {
        assert_malformed::<OffsetDateTime>(input);
    }
}

#[cfg(feature = "ulid")]
#[test]
fn ulid_examples() {
    use ulid::Ulid;
    let v = Ulid::from_parts(1_469_918_176_385, 0x0123_4567_89ab_cdef_0123);
    let text = enc(&v);
    assert_eq!(text, v.to_string());
    assert_eq!(text.len(), 26);
    assert_eq!(Ulid::decode_key(&text), Ok(v));
    assert_eq!(enc(&Ulid::nil()), "00000000000000000000000000");
    assert_eq!(enc(&Ulid::max()), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
    // One ULID, one key: the forms the crate never writes are refused, though the `ulid`
    // crate reads them (lowercase, and the letters Crockford reads as digits).
    let lower = text.to_lowercase();
    for input in [
        lower.as_str(),
        "01ARZ3NDEKTSV4RRFFQ69G5FAV ",
        "01ARZ3NDEKTSV4RRFFQ69G5FA",
        "01ARZ3NDEKTSV4RRFFQ69G5FAVV",
        "0IARZ3NDEKTSV4RRFFQ69G5FAV",
        "0LARZ3NDEKTSV4RRFFQ69G5FAV",
        "8ZZZZZZZZZZZZZZZZZZZZZZZZZ",
        "01ARZ3NDEKTSV4RRFFQ69G5FA#",
    ] {
        assert_malformed::<Ulid>(input);
    }
    // Made one after the other, ULIDs of later milliseconds sort after as keys.
    let earlier = Ulid::from_parts(1_000, u128::MAX >> 48);
    let later = Ulid::from_parts(1_001, 0);
    assert!(enc(&earlier) < enc(&later));
}

#[cfg(feature = "uuid")]
#[test]
fn uuid_examples() {
    use uuid::Uuid;
    let v = Uuid::from_u128(0x67e5_5044_10b1_426f_9247_bb68_0e5f_e0c8);
    assert_eq!(enc(&v), "67e55044-10b1-426f-9247-bb680e5fe0c8");
    assert_eq!(
        Uuid::decode_key("67e55044-10b1-426f-9247-bb680e5fe0c8"),
        Ok(v)
    );
    assert_eq!(enc(&Uuid::nil()), "00000000-0000-0000-0000-000000000000");
    for input in [
        "67E55044-10B1-426F-9247-BB680E5FE0C8",
        "67e5504410b1426f9247bb680e5fe0c8",
        "{67e55044-10b1-426f-9247-bb680e5fe0c8}",
        "urn:uuid:67e55044-10b1-426f-9247-bb680e5fe0c8",
        "67e55044-10b1-426f-9247-bb680e5fe0c",
        "67e55044-10b1-426f-9247-bb680e5fe0c8 ",
        "67e5504410b1-426f-9247-bb680e5fe0c8-",
        "g7e55044-10b1-426f-9247-bb680e5fe0c8",
    ] {
        assert_malformed::<Uuid>(input);
    }
}
