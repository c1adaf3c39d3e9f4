use super::*;
use proptest::prelude::*;

const ZSTD: Codec = Codec::Zstd { level: 3 };
const GZIP: Codec = Codec::Gzip { level: 6 };

/// Text that compresses well: a sentence repeated with a counter.
fn text(len: usize) -> String {
    let mut s = String::with_capacity(len + 64);
    let mut i = 0u64;
    while s.len() < len {
        s.push_str(&format!(
            "line {i}: the quick brown fox jumps over the lazy dog. "
        ));
        i += 1;
    }
    s.truncate(len);
    s
}

/// Bytes that do not compress (xorshift noise).
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

fn tag_of(codec: Codec) -> u8 {
    match codec {
        Codec::Zstd { .. } => TAG_ZSTD,
        Codec::Gzip { .. } => TAG_GZIP,
    }
}

#[test]
fn threshold_edges_decide_the_tag() {
    for codec in [ZSTD, GZIP] {
        let threshold = 300;
        for (len, compressed) in [
            (0, false),
            (1, false),
            (threshold - 1, false),
            (threshold, true),
            (threshold + 1, true),
        ] {
            let value = text(len);
            let stored = encode(codec, threshold, value.as_bytes());
            let expected = if compressed { tag_of(codec) } else { TAG_RAW };
            assert_eq!(stored[0], expected, "{codec:?}, {len} bytes");
            if !compressed {
                assert_eq!(&stored[1..], value.as_bytes());
            }
            assert_eq!(decode(&stored, DEFAULT_MAX_SIZE).unwrap(), value.as_bytes());
        }
        // Threshold 0: even the empty value is tried, and stays raw (not smaller).
        assert_eq!(encode(codec, 0, b""), vec![TAG_RAW]);
    }
}

#[test]
fn incompressible_values_are_stored_as_they_are() {
    for codec in [ZSTD, GZIP] {
        let value = noise(400 * 1024, 7);
        let stored = encode(codec, 0, &value);
        assert_eq!(stored[0], TAG_RAW, "{codec:?}");
        assert_eq!(stored.len(), value.len() + 1);
        assert_eq!(decode(&stored, DEFAULT_MAX_SIZE).unwrap(), &value[..]);
    }
}

#[test]
fn a_compressible_400_kb_value_shrinks_and_reads_back() {
    for codec in [ZSTD, GZIP] {
        let value = text(400 * 1024);
        let stored = encode(codec, DEFAULT_THRESHOLD, value.as_bytes());
        assert_eq!(stored[0], tag_of(codec));
        assert!(
            stored.len() < value.len() / 4,
            "{codec:?}: {}",
            stored.len()
        );
        assert_eq!(decode(&stored, DEFAULT_MAX_SIZE).unwrap(), value.as_bytes());
    }
}

#[test]
fn every_tag_is_read_whatever_codec_writes() {
    let value = text(10_000);
    let by_zstd = encode(ZSTD, 0, value.as_bytes());
    let by_gzip = encode(GZIP, 0, value.as_bytes());
    let c = Compression::new(ZSTD);
    // A field now on zstd reads what gzip wrote, and the other way round.
    for stored in [by_zstd, by_gzip] {
        let av = AttributeValue::B(Blob::new(stored));
        assert_eq!(from_attr::<String>(av.clone(), &c).unwrap(), value);
        let gzip = Compression::new(GZIP);
        assert_eq!(from_attr::<String>(av, &gzip).unwrap(), value);
    }
}

#[test]
fn hostile_values_are_typed_errors() {
    let max = 1 << 20;
    assert_eq!(decode(&[], max), Err(DecompressError::Empty));
    assert_eq!(decode(&[3, 1, 2], max), Err(DecompressError::UnknownTag(3)));
    assert_eq!(decode(&[255], max), Err(DecompressError::UnknownTag(255)));
    for codec in [ZSTD, GZIP] {
        let stored = encode(codec, 0, text(50_000).as_bytes());
        // Truncated anywhere after the tag.
        for cut in [1, 2, stored.len() / 2, stored.len() - 1] {
            assert!(
                matches!(
                    decode(&stored[..cut], max),
                    Err(DecompressError::Corrupt { .. })
                ),
                "{codec:?} cut at {cut}: {:?}",
                decode(&stored[..cut], max).map(|v| v.len())
            );
        }
        // A flipped byte in the middle.
        let mut flipped = stored.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x55;
        assert!(decode(&flipped, max).is_err(), "{codec:?}");
        // Garbage after the payload.
        let mut trailing = stored.clone();
        trailing.extend_from_slice(b"junk");
        assert!(
            matches!(decode(&trailing, max), Err(DecompressError::Corrupt { .. })),
            "{codec:?}"
        );
    }
}

#[test]
fn any_bound_is_accepted_even_the_largest() {
    // `usize::MAX` as the bound (no limit): the zstd window must not overflow.
    for codec in [Codec::Zstd { level: 3 }, Codec::Gzip { level: 6 }] {
        let stored = encode(codec, 0, &[7u8; 5000]);
        if stored[0] != TAG_RAW {
            assert_eq!(decode(&stored, usize::MAX).map(|v| v.len()), Ok(5000));
        }
    }
    assert!(decode(&[TAG_ZSTD, 1, 2, 3], usize::MAX).is_err());
    assert!(decode(&[TAG_GZIP, 1, 2, 3], usize::MAX).is_err());
}

#[test]
fn a_bomb_over_the_bound_is_refused_without_inflating_it() {
    for codec in [ZSTD, GZIP] {
        // 200 MB of zeros: a few hundred KB stored.
        let zeros = vec![0u8; 200 * 1024 * 1024];
        let stored = encode(codec, 0, &zeros);
        drop(zeros);
        assert!(stored.len() < 1024 * 1024, "{codec:?}: {}", stored.len());
        assert_eq!(
            decode(&stored, DEFAULT_MAX_SIZE),
            Err(DecompressError::TooLarge {
                max: DEFAULT_MAX_SIZE
            }),
            "{codec:?}"
        );
    }
    // The bound is exact: max bytes read, max + 1 refused, compressed or not.
    for codec in [ZSTD, GZIP] {
        let stored = encode(codec, 0, &[7u8; 4096]);
        assert_ne!(stored[0], TAG_RAW);
        assert_eq!(decode(&stored, 4096).unwrap().len(), 4096);
        assert_eq!(
            decode(&stored, 4095),
            Err(DecompressError::TooLarge { max: 4095 })
        );
    }
    let raw = encode(ZSTD, 1000, &[1, 2, 3]);
    assert_eq!(decode(&raw, 3).unwrap(), &[1, 2, 3][..]);
    assert_eq!(decode(&raw, 2), Err(DecompressError::TooLarge { max: 2 }));
    assert_eq!(
        decode_owned(raw, 2),
        Err(DecompressError::TooLarge { max: 2 })
    );
}

/// A value over the field's `max_size` is refused when written (reads would refuse
/// it); one at the bound is written and reads back.
#[test]
fn values_over_max_size_are_refused_when_written() {
    for codec in [ZSTD, GZIP, Codec::Zstd { level: 1 }] {
        let c = Compression {
            codec,
            threshold: 0,
            max_size: 4096,
        };
        let at = "a".repeat(4096);
        let av = to_attr(&at, &c).unwrap().unwrap();
        assert_eq!(from_attr::<String>(av, &c).unwrap(), at);
        let err = to_attr(&"a".repeat(4097), &c).unwrap_err();
        assert!(err.to_string().contains("max_size"), "{err}");
        assert!(serde_to_attr(&vec![0u8; 4096], &c).is_err());
    }
}

/// A few bytes declaring a huge size never make a huge first allocation.
#[test]
fn a_declared_size_bounds_only_a_proportionate_first_allocation() {
    assert_eq!(first_allocation(10, 5), 10);
    assert_eq!(first_allocation(usize::MAX, 20), 20 * 64 + 64 * 1024);
    assert_eq!(first_allocation(usize::MAX, usize::MAX), usize::MAX);
    // 8 MiB of zeros is a few KB of zstd: decoding it still works.
    let zeros = vec![0u8; 8 * 1024 * 1024];
    let stored = encode(ZSTD, 0, &zeros);
    assert!(stored.len() < 64 * 1024, "{}", stored.len());
    assert_eq!(
        decode(&stored, DEFAULT_MAX_SIZE).unwrap().len(),
        zeros.len()
    );
}

#[test]
fn a_string_field_refuses_bytes_that_are_not_utf8() {
    let c = Compression::new(GZIP);
    for threshold in [0, 1000] {
        let stored = encode(GZIP, threshold, &[b'a', 0xff, b'b']);
        let err = from_attr::<String>(AttributeValue::B(Blob::new(stored)), &c).unwrap_err();
        assert_eq!(
            err,
            DecodeErrorKind::Decompress(DecompressError::NotUtf8 { valid_up_to: 1 })
        );
    }
}

#[test]
fn values_written_before_compress_read_back() {
    let c = Compression::new(ZSTD);
    let s = from_attr::<String>(AttributeValue::S("plain".into()), &c).unwrap();
    assert_eq!(s, "plain");
    let list = vec![1u8, 2, 255].to_attr().unwrap();
    assert_eq!(from_attr::<Vec<u8>>(list, &c).unwrap(), vec![1, 2, 255]);
    let none = from_attr::<Option<String>>(AttributeValue::Null(true), &c).unwrap();
    assert_eq!(none, None);
    assert_eq!(from_attr_opt::<Option<Vec<u8>>>(None, &c).unwrap(), None);
    assert_eq!(
        from_attr_opt::<String>(None, &c),
        Err(DecodeErrorKind::Missing)
    );
    // A Binary stored plain cannot be told apart: B is always the stored format.
    assert!(from_attr::<Binary>(AttributeValue::B(Blob::new(vec![9, 1])), &c).is_err());
    // Other types are refused with the type a compressed field stores.
    assert_eq!(
        from_attr::<String>(AttributeValue::N("1".into()), &c),
        Err(DecodeErrorKind::WrongType {
            expected: "B",
            found: "N"
        })
    );
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Doc {
        n: u32,
    }
    let old = crate::codec::to_checked_attribute(&Doc { n: 4 }).unwrap();
    assert_eq!(
        serde_from_attr_opt::<Doc>(Some(old), &c).unwrap(),
        Doc { n: 4 }
    );
    assert_eq!(serde_from_attr_opt::<Option<Doc>>(None, &c).unwrap(), None);
}

#[test]
fn absent_options_are_not_stored() {
    let c = Compression::new(ZSTD);
    assert_eq!(to_attr(&None::<String>, &c).unwrap(), None);
    let stored = to_attr(&Some(text(1000)), &c).unwrap().unwrap();
    assert!(matches!(&stored, AttributeValue::B(b) if b.as_ref()[0] == TAG_ZSTD));
}

fn codec() -> impl Strategy<Value = Codec> {
    prop_oneof![
        (1i32..=22).prop_map(|level| Codec::Zstd { level }),
        (1u32..=9).prop_map(|level| Codec::Gzip { level }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any bytes, any codec and level, any threshold: the stored form reads back,
    /// and is never more than one byte longer than the value.
    #[test]
    fn bytes_round_trip(
        bytes in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..2048),
            (0usize..4096, any::<u8>()).prop_map(|(n, b)| vec![b; n]),
        ],
        codec in codec(),
        threshold in 0usize..1024,
    ) {
        let stored = encode(codec, threshold, &bytes);
        prop_assert!(stored.len() <= bytes.len() + 1);
        if bytes.len() < threshold {
            prop_assert_eq!(stored[0], TAG_RAW);
        }
        prop_assert_eq!(decode(&stored, bytes.len()).unwrap(), &bytes[..]);
        let c = Compression { codec, threshold, max_size: bytes.len() };
        let av = to_attr(&bytes, &c).unwrap().unwrap();
        prop_assert_eq!(from_attr::<Vec<u8>>(av, &c).unwrap(), bytes);
    }

    /// Any string round-trips through every codec.
    #[test]
    fn strings_round_trip(s in ".{0,600}", repeat in 1usize..8, codec in codec(), threshold in 0usize..512) {
        let s = s.repeat(repeat);
        let c = Compression { codec, threshold, max_size: DEFAULT_MAX_SIZE };
        let av = to_attr(&s, &c).unwrap().unwrap();
        prop_assert_eq!(from_attr::<String>(av, &c).unwrap(), s);
    }

    /// Arbitrary stored bytes never panic the reader: they decode or give a typed error.
    #[test]
    fn arbitrary_stored_bytes_never_panic(
        tag in 0u8..4,
        payload in proptest::collection::vec(any::<u8>(), 0..512),
    ) {
        let mut stored = vec![tag];
        stored.extend_from_slice(&payload);
        let c = Compression { codec: ZSTD, threshold: 0, max_size: 4096 };
        let _ = from_attr::<String>(AttributeValue::B(Blob::new(stored.clone())), &c);
        if let Ok(v) = decode(&stored, 4096) {
            prop_assert!(v.len() <= 4096);
        }
    }

    /// A serde value round-trips as compressed JSON.
    #[test]
    fn serde_values_round_trip(words in proptest::collection::vec(".{0,20}", 0..40), n in any::<i64>()) {
        let value = (words, n);
        let c = Compression { codec: GZIP, threshold: 64, max_size: DEFAULT_MAX_SIZE };
        let av = serde_to_attr(&value, &c).unwrap();
        prop_assert_eq!(serde_from_attr_opt::<(Vec<String>, i64)>(Some(av), &c).unwrap(), value);
    }
}
