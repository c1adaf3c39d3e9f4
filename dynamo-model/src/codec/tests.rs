use super::*;
use proptest::prelude::*;

#[test]
fn the_same_number_in_any_spelling() {
    for (a, b) in [
        ("1.5", "1.50"),
        ("1.5", "15E-1"),
        ("1500", "1.5E+3"),
        ("-0.001", "-1e-3"),
        ("0", "-0.000"),
        ("0.0", "0E5"),
    ] {
        assert!(same_number(a, b), "{a} {b}");
    }
    for (a, b) in [
        ("1.5", "1.6"),
        ("1.5", "-1.5"),
        ("15", "1.5"),
        ("1", "x"),
        ("1", ""),
    ] {
        assert!(!same_number(a, b), "{a} {b}");
    }
}

/// A date attribute holds the text of the value's key encoding (so it sorts like the
/// values, and an index on it agrees with the key) and reads back as the value.
#[cfg(any(feature = "time", feature = "chrono"))]
fn check_date_attr<T: AttrValue + crate::KeyPart + PartialEq + std::fmt::Debug>(
    value: &T,
) -> Result<(), TestCaseError> {
    let mut key = String::new();
    value
        .encode_key(&mut key)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let attr = value
        .to_attr()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&attr, &AttributeValue::S(key));
    let back = T::from_attr(attr).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, value);
    prop_assert!(T::from_attr(AttributeValue::N("1".into())).is_err());
    Ok(())
}

#[cfg(feature = "time")]
proptest! {
    #[test]
    fn time_dates_are_stored_as_their_key_text(
        d in crate::key::testing::time_values::dates(),
        t in crate::key::testing::time_values::date_times(),
    ) {
        check_date_attr(&d)?;
        check_date_attr(&t)?;
    }
}

#[cfg(feature = "chrono")]
proptest! {
    #[test]
    fn chrono_dates_are_stored_as_their_key_text(
        d in crate::key::testing::chrono_values::dates(),
        t in crate::key::testing::chrono_values::date_times(),
    ) {
        check_date_attr(&d)?;
        check_date_attr(&t)?;
        check_date_attr(&t.and_utc())?;
    }
}

#[cfg(feature = "time")]
#[test]
fn time_dates_outside_the_key_years_are_refused() {
    use time::macros::{date, datetime};
    assert!(date!(-0001 - 01 - 01).to_attr().is_err());
    assert!(datetime!(-0001-01-01 0:00).to_attr().is_err());
    assert!(time::Date::from_attr(AttributeValue::S("2024-02-30".into())).is_err());
    assert!(time::Date::from_attr(AttributeValue::S("2024-2-3".into())).is_err());
    assert!(time::PrimitiveDateTime::from_attr(AttributeValue::S("2024-02-03".into())).is_err());
}

#[cfg(feature = "chrono")]
#[test]
fn chrono_instants_read_any_rfc_3339() {
    use chrono::{DateTime, NaiveDate, Utc};
    let at = NaiveDate::from_ymd_opt(2024, 1, 2)
        .and_then(|d| d.and_hms_opt(3, 4, 5))
        .map(|t| t.and_utc())
        .expect("valid");
    for text in [
        "2024-01-02T03:04:05Z",
        "2024-01-02T03:04:05.000Z",
        "2024-01-02T04:04:05+01:00",
    ] {
        assert_eq!(
            DateTime::<Utc>::from_attr(AttributeValue::S(text.into())),
            Ok(at)
        );
    }
    assert!(DateTime::<Utc>::from_attr(AttributeValue::S("2024-01-02".into())).is_err());
    let far = NaiveDate::from_ymd_opt(10_000, 1, 1).expect("valid");
    assert!(far.to_attr().is_err());
    assert!(far.and_hms_opt(0, 0, 0).expect("valid").to_attr().is_err());
    assert!(
        far.and_hms_opt(0, 0, 0)
            .expect("valid")
            .and_utc()
            .to_attr()
            .is_err()
    );
}

#[test]
fn numbers_dynamodb_refuses_are_refused_before_sending() {
    for bad in [
        "1e126",
        "-1e126",
        "10e125",
        "1.7976931348623157e308",
        "5e-324",
        "9e-131",
        "0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000009",
        "123456789012345678901234567890123456789",
        "NaN",
        "inf",
        "-",
        "1e",
        "1.2.3",
        "",
        "0x10",
    ] {
        assert!(check_number(bad).is_err(), "{bad:?} accepted");
        assert!(check_number(bad).err().is_some_and(|e| e.is_number()));
    }
    for good in [
        "0",
        "-0",
        "0.0",
        "0e500",
        "1e-130",
        "-1e-130",
        "9.9999999999999999999999999999999999999e125",
        "99999999999999999999999999999999999999",
        "100000000000000000000000000000000000000000",
        "1.5",
        "-42",
        "0.001",
        "12345678901234567890123456789012345678e-100",
    ] {
        assert_eq!(check_number(good), Ok(()), "{good:?} refused");
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Point {
    x: f64,
    tags: Vec<f64>,
}

#[test]
fn serde_values_are_checked_at_every_depth() {
    let ok = Serde(Point {
        x: 1.5,
        tags: vec![2.0, -1e-100],
    });
    assert!(ok.to_attr().is_ok());
    for bad in [
        Point {
            x: f64::MAX,
            tags: vec![],
        },
        Point {
            x: 0.0,
            tags: vec![1.0, 1e200],
        },
        Point {
            x: f64::NAN,
            tags: vec![],
        },
    ] {
        let err = Serde(bad).to_attr().unwrap_err();
        assert!(err.is_number(), "{err}");
    }
}

proptest! {
    /// A float the crate stores directly is refused exactly when the same value
    /// inside a serde-encoded structure is.
    #[test]
    fn direct_and_nested_floats_agree(bits in any::<u64>()) {
        let v = f64::from_bits(bits);
        let nested = Serde(Point { x: v, tags: vec![] }).to_attr();
        prop_assert_eq!(v.to_attr().is_ok(), nested.is_ok(), "{:e}", v);
    }
}

#[cfg(feature = "ulid")]
proptest! {
    #[test]
    fn ulids_are_stored_as_their_key_text(u in crate::key::testing::ulids()) {
        check_date_attr(&u)?;
        // Another program's lowercase ULID reads as the same value.
        let lower = AttributeValue::S(u.to_string().to_lowercase());
        prop_assert_eq!(ulid::Ulid::from_attr(lower).ok(), Some(u));
    }
}
