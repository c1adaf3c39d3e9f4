use super::*;
use proptest::prelude::*;

/// `set` through its attribute and back.
fn round_trip<C: AttrValue>(set: &C) -> Result<C, TestCaseError> {
    let attr = set
        .to_attr()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    C::from_attr(attr).map_err(|e| TestCaseError::fail(e.to_string()))
}

fn numbers(texts: &[&str]) -> AttributeValue {
    AttributeValue::Ns(texts.iter().map(|n| n.to_string()).collect())
}

fn blob(bytes: &[u8]) -> aws_sdk_dynamodb::primitives::Blob {
    aws_sdk_dynamodb::primitives::Blob::new(bytes)
}

proptest! {
    /// Number and binary sets of any members read back as the same sets, stored as
    /// `NS` and `BS` (an empty set as no attribute).
    #[test]
    fn number_and_binary_sets_round_trip(
        unsigned in proptest::collection::btree_set(any::<u64>(), 0..8),
        signed in proptest::collection::hash_set(any::<i32>(), 0..8),
        // Every i128 of at most 38 digits (a DynamoDB number's precision).
        wide in proptest::collection::btree_set(-(10i128.pow(38) - 1)..10i128.pow(38), 0..4),
        bytes in proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 0..16), 0..6),
    ) {
        let binary: BTreeSet<Binary> = bytes.into_iter().map(Binary).collect();
        for (empty, attr) in [
            (unsigned.is_empty(), unsigned.to_attr_opt()),
            (signed.is_empty(), signed.to_attr_opt()),
            (binary.is_empty(), binary.to_attr_opt()),
        ] {
            let attr = attr.map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(attr.is_none(), empty);
        }
        if !unsigned.is_empty() {
            prop_assert_eq!(&round_trip(&unsigned)?, &unsigned);
            let members = unsigned.iter().map(u64::to_string).collect::<Vec<_>>();
            prop_assert_eq!(unsigned.to_attr().ok(), Some(AttributeValue::Ns(members)));
        }
        if !signed.is_empty() {
            prop_assert_eq!(&round_trip(&signed)?, &signed);
        }
        if !wide.is_empty() {
            prop_assert_eq!(&round_trip(&wide)?, &wide);
        }
        if !binary.is_empty() {
            prop_assert_eq!(&round_trip(&binary)?, &binary);
            prop_assert!(matches!(binary.to_attr(), Ok(AttributeValue::Bs(_))));
        }
    }

    /// A set serde_dynamo wrote (a list of its members) reads back as the same set.
    #[test]
    fn sets_serde_dynamo_wrote_read_back(
        strings in proptest::collection::btree_set(".{0,8}", 0..6),
        numbers in proptest::collection::btree_set(any::<i64>(), 0..6),
    ) {
        let written = serde_dynamo::to_attribute_value::<_, AttributeValue>(&strings).expect("serde_dynamo");
        prop_assert_eq!(BTreeSet::<String>::from_attr(written.clone()).expect("read"), strings.clone());
        let hashed: HashSet<String> = HashSet::from_attr(written).expect("read");
        prop_assert_eq!(hashed.into_iter().collect::<BTreeSet<_>>(), strings);
        let written = serde_dynamo::to_attribute_value::<_, AttributeValue>(&numbers).expect("serde_dynamo");
        prop_assert_eq!(BTreeSet::<i64>::from_attr(written).expect("read"), numbers);
    }
}

#[test]
fn sets_are_stored_as_their_set_type_and_a_missing_one_reads_empty() {
    assert_eq!(<BTreeSet<String>>::__DYNAMO_TYPE, Some("SS"));
    assert_eq!(<HashSet<u8>>::__DYNAMO_TYPE, Some("NS"));
    assert_eq!(<BTreeSet<isize>>::__DYNAMO_TYPE, Some("NS"));
    assert_eq!(<HashSet<Binary>>::__DYNAMO_TYPE, Some("BS"));
    assert_eq!(<Option<BTreeSet<Binary>>>::__DYNAMO_TYPE, Some("BS"));
    assert_eq!(BTreeSet::<u64>::from_missing(), Ok(BTreeSet::new()));
    assert_eq!(HashSet::<Binary>::from_missing(), Ok(HashSet::new()));
    assert!(BTreeSet::<u64>::new().to_attr().is_err());
    assert_eq!(BTreeSet::<Binary>::new().to_attr_opt(), Ok(None));
}

#[test]
fn a_member_out_of_the_element_type_is_refused() {
    for (set, member) in [
        (numbers(&["1", "256"]), "256"),
        (numbers(&["-1"]), "-1"),
        (numbers(&["1.5"]), "1.5"),
        (numbers(&["1e2"]), "1e2"),
        (
            AttributeValue::L(vec![AttributeValue::N("300".into())]),
            "300",
        ),
    ] {
        match BTreeSet::<u8>::from_attr(set) {
            Err(DecodeErrorKind::Invalid(why)) => assert!(why.contains(member), "{why}"),
            other => panic!("{member}: {other:?}"),
        }
    }
    let past_i64 = numbers(&["9223372036854775808"]);
    assert!(matches!(
        HashSet::<i64>::from_attr(past_i64.clone()),
        Err(DecodeErrorKind::Invalid(_))
    ));
    assert_eq!(
        BTreeSet::<u64>::from_attr(past_i64),
        Ok(BTreeSet::from([9_223_372_036_854_775_808]))
    );
}

#[test]
fn a_u128_past_38_digits_is_refused_as_a_number() {
    let set = BTreeSet::from([1, u128::MAX]);
    assert!(set.to_attr().err().is_some_and(|e| e.is_number()));
    assert!(set.to_attr_opt().err().is_some_and(|e| e.is_number()));
}

#[test]
fn another_set_type_or_member_type_is_a_wrong_type() {
    let strings = AttributeValue::Ss(vec!["1".into()]);
    let binaries = AttributeValue::Bs(vec![blob(b"x")]);
    for (found, expected, result) in [
        (
            "SS",
            "NS",
            BTreeSet::<u64>::from_attr(strings.clone()).err(),
        ),
        (
            "BS",
            "NS",
            BTreeSet::<u64>::from_attr(binaries.clone()).err(),
        ),
        (
            "N",
            "NS",
            BTreeSet::<u64>::from_attr(AttributeValue::N("1".into())).err(),
        ),
        (
            "NS",
            "BS",
            BTreeSet::<Binary>::from_attr(numbers(&["1"])).err(),
        ),
        ("SS", "BS", BTreeSet::<Binary>::from_attr(strings).err()),
        ("BS", "SS", BTreeSet::<String>::from_attr(binaries).err()),
    ] {
        assert_eq!(
            result,
            Some(DecodeErrorKind::WrongType { expected, found }),
            "{expected}"
        );
    }
}

#[test]
fn a_list_of_members_is_a_set_and_other_members_are_wrong_types() {
    let list = |members: Vec<AttributeValue>| AttributeValue::L(members);
    let n = |text: &str| AttributeValue::N(text.into());
    assert_eq!(
        HashSet::<i32>::from_attr(list(vec![n("-3"), n("7"), n("-3")])),
        Ok(HashSet::from([-3, 7]))
    );
    assert_eq!(
        BTreeSet::<Binary>::from_attr(list(vec![AttributeValue::B(blob(b"ab"))])),
        Ok(BTreeSet::from([Binary(b"ab".to_vec())]))
    );
    assert_eq!(
        BTreeSet::<u64>::from_attr(list(vec![n("1"), AttributeValue::S("2".into())])),
        Err(DecodeErrorKind::WrongType {
            expected: "N (a member of a number set)",
            found: "S"
        })
    );
    assert_eq!(
        BTreeSet::<Binary>::from_attr(list(vec![n("1")])),
        Err(DecodeErrorKind::WrongType {
            expected: "B (a member of a binary set)",
            found: "N"
        })
    );
    assert_eq!(
        BTreeSet::<String>::from_attr(list(vec![n("1")])),
        Err(DecodeErrorKind::WrongType {
            expected: "S (a member of a string set)",
            found: "N"
        })
    );
}
