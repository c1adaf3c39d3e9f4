use super::*;
use crate::ValidationReason;

/// `sk = "ORDER#{placed}#{id}"` on the table; index `GSI1` with
/// `pk = "REGION#{region}"`, `sk = "{placed}#{id}#{status}"`: `region` and `status`
/// stored (`region` optional), `placed` and `id` read back from the sort key.
const SK: &[Option<&str>] = &[Some("ORDER#"), None, Some("#"), None];
const GSI1: IndexTemplate = gsi1!("REGION#", "#", Delimiter::HASH);

/// GSI1 with the literal `$region` before the region and `$sep` between the fields
/// of its sort key, under `$delimiter`.
macro_rules! gsi1 {
    ($region:literal, $sep:literal, $delimiter:expr) => {
        IndexTemplate {
            pk: Some(&KeyTemplate::of(
                false,
                "",
                &[Some($region), None],
                &[Placeholder::field("region")],
                $delimiter,
            )),
            sk: Some(&KeyTemplate::of(
                true,
                "",
                &[None, Some($sep), None, Some($sep), None],
                &[
                    Placeholder::field("placed"),
                    Placeholder::field("id"),
                    Placeholder::field("status"),
                ],
                $delimiter,
            )),
            ..GSI1_FIELDS
        }
    };
}
use gsi1;

/// GSI1's fields, for [`gsi1!`].
const GSI1_FIELDS: IndexTemplate = IndexTemplate {
    keys: IndexKeyAttributes::new("GSI1", Some("GSI1PK"), Some("GSI1SK")),
    pk: None,
    sk: None,
    fields: &[
        TemplateField::Stored {
            attribute: "region",
            encode: encode_touch::<Option<String>>,
        },
        TemplateField::Key {
            name: "placed",
            sort: true,
            segments: SK,
            delimiter: Delimiter::HASH,
            ordinal: 0,
            reencode: reencode::<u32>,
        },
        TemplateField::Key {
            name: "id",
            sort: true,
            segments: SK,
            delimiter: Delimiter::HASH,
            ordinal: 1,
            reencode: reencode::<String>,
        },
        TemplateField::Stored {
            attribute: "status",
            encode: encode_touch::<String>,
        },
    ],
};

fn key() -> RawKey {
    RawKey {
        pk: "USER#u".into(),
        sk: Some("ORDER#0000000042#o%231".into()),
    }
}

fn run(touches: &[(&str, Touch<'_>)]) -> Result<IndexUpdates, Error> {
    run_on(touches, &GSI1)
}

fn run_on(touches: &[(&str, Touch<'_>)], index: &IndexTemplate) -> Result<IndexUpdates, Error> {
    let lookup = |attribute: &str| {
        touches
            .iter()
            .find(|(a, _)| *a == attribute)
            .map_or(Touch::Untouched, |(_, t)| *t)
    };
    index_updates(
        "Order",
        &key(),
        &IndexChanges { lookup: &lookup },
        std::slice::from_ref(index),
    )
}

/// GSI1 with `.` for its templates (`REGION.{region}`, `{placed}.{id}.{status}`),
/// over the same `#`-delimited table key.
const DOTTED: IndexTemplate = gsi1!("REGION.", ".", Delimiter::DOT);

/// Key fields are read back with the table key's delimiter and written with the
/// index's: `o#1` is `o%231` in the table key and `o/231` in the index key.
#[test]
fn index_keys_are_written_with_the_index_delimiter() {
    let (eu, open) = (s("EU.1"), s("open"));
    let out = run_on(
        &[("region", Touch::Set(&eu)), ("status", Touch::Set(&open))],
        &DOTTED,
    )
    .unwrap();
    assert_eq!(
        out,
        vec![
            ("GSI1PK", Some(s("REGION.EU/2E1"))),
            ("GSI1SK", Some(s("0000000042.o/231.open"))),
        ]
    );
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn reason(e: Error) -> ValidationReason {
    match e {
        Error::Validation { reason, .. } => reason,
        other => panic!("{other:?}"),
    }
}

#[test]
fn untouched_templates_change_nothing() {
    assert_eq!(run(&[]).unwrap(), vec![]);
    assert_eq!(run(&[("total", Touch::Set(&s("1")))]).unwrap(), vec![]);
}

/// Both stored fields set: both key attributes are rendered again, the primary-key
/// fields read back from the sort key (escaped components stay as stored).
#[test]
fn every_stored_field_set_renders_both_attributes() {
    let (eu, open) = (s("EU#1"), s("open"));
    let out = run(&[("region", Touch::Set(&eu)), ("status", Touch::Set(&open))]).unwrap();
    assert_eq!(
        out,
        vec![
            ("GSI1PK", Some(s("REGION#EU%231"))),
            ("GSI1SK", Some(s("0000000042#o%231#open"))),
        ]
    );
}

#[test]
fn a_removed_field_takes_the_item_out_of_the_index() {
    let open = s("open");
    for touches in [
        vec![("region", Touch::Removed)],
        vec![("region", Touch::Removed), ("status", Touch::Set(&open))],
    ] {
        assert_eq!(
            run(&touches).unwrap(),
            vec![("GSI1PK", None), ("GSI1SK", None)]
        );
    }
    // An explicit NULL decodes as `None` for an optional field: out of the index too.
    let null = AttributeValue::Null(true);
    assert_eq!(
        run(&[("region", Touch::Set(&null)), ("status", Touch::Set(&open))]).unwrap(),
        vec![("GSI1PK", None), ("GSI1SK", None)]
    );
}

#[test]
fn a_partial_or_computed_change_is_refused() {
    let eu = s("EU");
    let partial = run(&[("region", Touch::Set(&eu))]).unwrap_err();
    assert!(
        partial.to_string().contains("without `status`"),
        "{partial}"
    );
    assert_eq!(reason(partial), ValidationReason::IncompleteIndexTemplate);
    let added = run(&[("region", Touch::Set(&eu)), ("status", Touch::Added)]).unwrap_err();
    assert!(
        added.to_string().contains("computed by DynamoDB"),
        "{added}"
    );
    assert_eq!(reason(added), ValidationReason::IncompleteIndexTemplate);
}

#[test]
fn unusable_values_are_refused_before_sending() {
    let (number, open) = (AttributeValue::N("1".into()), s("open"));
    let wrong = run(&[
        ("region", Touch::Set(&number)),
        ("status", Touch::Set(&open)),
    ]);
    assert_eq!(
        reason(wrong.unwrap_err()),
        ValidationReason::IncompleteIndexTemplate
    );
    // Removing a field always takes the item out, whatever else the update sets.
    let eu = s("EU");
    assert_eq!(
        run(&[("region", Touch::Set(&eu)), ("status", Touch::Removed)]).unwrap(),
        vec![("GSI1PK", None), ("GSI1SK", None)]
    );
    // An over-long key is refused like any index key.
    let long = s(&"x".repeat(2100));
    let too_long = run(&[("region", Touch::Set(&long)), ("status", Touch::Set(&open))]);
    assert_eq!(reason(too_long.unwrap_err()), ValidationReason::KeyTooLong);
}

#[test]
fn key_components_are_read_back_exactly() {
    let sk = Some("ORDER#0000000042#o%231");
    let hash = Delimiter::HASH;
    assert_eq!(key_component("E", sk, SK, hash, 0).unwrap(), "0000000042");
    assert_eq!(key_component("E", sk, SK, hash, 1).unwrap(), "o%231");
    assert!(key_component("E", Some("OTHER#1#2"), SK, hash, 0).is_err());
    assert!(key_component("E", None, SK, hash, 0).is_err());
    let dotted: &[Option<&str>] = &[Some("ORDER."), None, Some("."), None];
    let sk = Some("ORDER.0000000042.o/231");
    let dot = Delimiter::DOT;
    assert_eq!(key_component("E", sk, dotted, dot, 1).unwrap(), "o/231");
}
