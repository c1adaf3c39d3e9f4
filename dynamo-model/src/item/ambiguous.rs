//! Recognising a call's own write after an ambiguous error.
//!
//! DynamoDB may apply a write and lose its response (an HTTP 500 after the write, a
//! timeout, a broken connection); the SDK then sends the same request again. A
//! conditional write's retry fails its condition against the call's own write. Three
//! pieces tell such a failure from a genuine conflict, or settle a call the SDK gave up on:
//! - [`WriteToken`]: puts and updates store a token unique to the call; the current item
//!   DynamoDB returns with a failed condition (`ReturnValuesOnConditionCheckFailure=ALL_OLD`)
//!   carries it exactly when this call's write was applied.
//! - the send path's watch (`crate::request::exec`) records whether an attempt of the
//!   call ended without a definite answer; a delete leaves no item to carry a token.
//! - [`settle`]: when the SDK gives up after such an attempt, one strongly consistent read
//!   of the item says whether the call's write is there (its token, or for a delete, no
//!   item); otherwise the call fails with [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown).

use crate::expr::{AttrPath, CompareOp, Node, Step};
use crate::{Db, Error, Item, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::BTreeMap;

pub use crate::token::WriteToken;

/// `attribute_not_exists(token) OR token <> :this`: the stored item was not written
/// by this call. DynamoDB evaluates `<>` on a missing attribute as false, hence the
/// first half.
pub(crate) fn not_written(token: &WriteToken, attribute: &'static str) -> Node {
    Node::either(
        Node::absent(attribute),
        Node::compare(attribute, CompareOp::Ne, token.value()),
    )
}

/// What a strongly consistent read of the item says about a write the SDK gave up on
/// after an ambiguous attempt ([`settle`]).
pub(crate) enum Settled {
    /// The item as stored now (`None`: no item under the key).
    Read(Option<Item>),
    /// The read failed too: nothing is known.
    Unread,
}

/// Reads the item under `key` (strongly consistent, the whole item) to settle a write
/// whose attempts all ended without a definite answer. A failed read is
/// [`Settled::Unread`]: the caller reports the outcome unknown.
pub(crate) async fn settle<T: Table>(db: &Db<T>, key: Item) -> Settled {
    match read_consistent(db, key).await {
        Ok(item) => Settled::Read(item),
        Err(_) => Settled::Unread,
    }
}

/// The item under `key` as stored now: a strongly consistent read of the whole item
/// (`None`: no item under the key). What settles a write, and what a migration reads
/// again after its write's condition failed.
pub(crate) async fn read_consistent<T: Table>(
    db: &Db<T>,
    key: Item,
) -> Result<Option<Item>, Error> {
    super::consistent::ConsistentGet::new(db, key).send().await
}

/// Whether the SDK error of a write leaves its outcome open: an attempt of the call ended
/// ambiguously (`ambiguous`), or its last error is one a write may follow (a 5xx, a
/// timeout, a lost connection; see [`crate::retry`]).
pub(crate) fn outcome_open<E: aws_sdk_dynamodb::error::ProvideErrorMetadata>(
    ambiguous: bool,
    error: &aws_sdk_dynamodb::error::SdkError<E, aws_sdk_dynamodb::config::http::HttpResponse>,
) -> bool {
    use aws_sdk_dynamodb::error::SdkError;
    ambiguous
        // Refused while being built: nothing was sent.
        || (!matches!(error, SdkError::ConstructionFailure(_))
            && crate::retry::may_have_applied(error))
}

/// The attributes of `item` at `paths`, nested as in the item: what `ReturnValues=UPDATED_NEW`
/// returns for an update of those paths (a path the update removed is absent; the
/// elements of a list it changed are listed in the list's order, each once, with every
/// changed member of it).
pub(crate) fn project(item: &Item, paths: &[AttrPath]) -> Item {
    let mut tree: BTreeMap<String, Projected> = BTreeMap::new();
    for path in paths {
        let steps = path.steps();
        let Some((Step::Name(first), rest)) = steps.split_first() else {
            continue;
        };
        let mut value = item.get(*first);
        for step in rest {
            value = match (value, step) {
                (Some(AttributeValue::M(map)), Step::Name(name)) => map.get(*name),
                (Some(AttributeValue::L(list)), Step::Index(i)) => list.get(*i),
                _ => None,
            };
        }
        if let Some(value) = value {
            let slot = tree.entry((*first).to_owned()).or_insert(Projected::Empty);
            rest.iter()
                .fold(slot, |slot, step| slot.child(*step))
                .set(value.clone());
        }
    }
    tree.into_iter().map(|(k, v)| (k, v.into_value())).collect()
}

/// A projection under construction: members by name, elements by position.
enum Projected {
    Empty,
    Value(AttributeValue),
    Map(BTreeMap<String, Projected>),
    List(BTreeMap<usize, Projected>),
}

impl Projected {
    /// The place of `step` below this one, which becomes a map or a list if it is not.
    fn child(&mut self, step: Step<'_>) -> &mut Projected {
        match (step, &*self) {
            (Step::Name(_), Projected::Map(_)) | (Step::Index(_), Projected::List(_)) => {}
            (Step::Name(_), _) => *self = Projected::Map(BTreeMap::new()),
            (Step::Index(_), _) => *self = Projected::List(BTreeMap::new()),
        }
        match (self, step) {
            (Projected::Map(map), Step::Name(name)) => {
                map.entry(name.to_owned()).or_insert(Projected::Empty)
            }
            (Projected::List(list), Step::Index(i)) => list.entry(i).or_insert(Projected::Empty),
            (other, _) => other,
        }
    }

    /// Sets the value here, unless paths below it are already placed (a whole value and a
    /// member of it are never both updated: their paths would overlap).
    fn set(&mut self, value: AttributeValue) {
        if matches!(self, Projected::Empty) {
            *self = Projected::Value(value);
        }
    }

    fn into_value(self) -> AttributeValue {
        match self {
            Projected::Empty => AttributeValue::Null(true),
            Projected::Value(v) => v,
            Projected::Map(map) => {
                AttributeValue::M(map.into_iter().map(|(k, v)| (k, v.into_value())).collect())
            }
            Projected::List(list) => {
                AttributeValue::L(list.into_values().map(Projected::into_value).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn tokens_are_short_distinct_and_recognised() {
        let tokens: HashSet<String> = (0..10_000)
            .map(|_| WriteToken::new().as_str().to_owned())
            .collect();
        assert_eq!(tokens.len(), 10_000);
        assert!(tokens.iter().all(|t| {
            t.len() == 16
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        }));

        let token = WriteToken::new();
        let mine = Item::from([("_wt".to_owned(), token.value())]);
        let other = Item::from([("_wt".to_owned(), WriteToken::new().value())]);
        assert!(token.written_in(Some(&mine), "_wt"));
        assert!(!token.written_in(Some(&mine), "other"));
        assert!(!token.written_in(Some(&other), "_wt"));
        assert!(!token.written_in(Some(&Item::new()), "_wt"));
        assert!(!token.written_in(None, "_wt"));
    }

    #[test]
    fn a_token_kept_as_text_reads_back_and_nothing_else_does() {
        let token = WriteToken::new();
        assert_eq!(WriteToken::parse(token.as_str()), Some(token.clone()));
        assert_eq!(token.to_string(), token.as_str());
        for bad in [
            "",
            "short",
            "abcdefghijklmno",
            "abcdefghijklmnopq",
            "abcdefghijklmn+/",
            "abcdefghijklmnö",
        ] {
            assert_eq!(WriteToken::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn projection_lists_the_updated_elements_of_a_list() {
        use crate::expr::Segment;
        let line = |qty: &str| {
            let mut m = crate::item_map::strings(&[("sku", "a")]);
            m.insert("qty".into(), AttributeValue::N(qty.into()));
            AttributeValue::M(m)
        };
        let mut item = Item::new();
        item.insert(
            "lines".into(),
            AttributeValue::L(vec![line("1"), line("2"), line("3")]),
        );
        let qty = |i| {
            AttrPath::Top("lines")
                .child(Segment::Index(i))
                .child(Segment::Member("qty".into()))
        };
        let sku = |i| {
            AttrPath::Top("lines")
                .child(Segment::Index(i))
                .child(Segment::Member("sku".into()))
        };
        let got = project(&item, &[qty(2), qty(0), qty(7), sku(0)]);
        let only_qty = |n: &str| {
            let mut m = Item::new();
            m.insert("qty".into(), AttributeValue::N(n.into()));
            AttributeValue::M(m)
        };
        // In the list's order, one element per position with all its changed members.
        let mut expected = Item::new();
        expected.insert(
            "lines".into(),
            AttributeValue::L(vec![line("1"), only_qty("3")]),
        );
        assert_eq!(got, expected);
    }

    #[test]
    fn projection_keeps_exactly_the_updated_paths() {
        let mut item = crate::item_map::strings(&[("a", "1"), ("b", "2")]);
        let map = crate::item_map::strings(&[("x", "3"), ("y", "4")]);
        item.insert("m".to_owned(), AttributeValue::M(map));
        let nested = |parts: &[&'static str]| {
            let (top, rest) = parts.split_first().expect("a top-level name");
            rest.iter().fold(AttrPath::Top(top), |path, part| {
                path.child(crate::expr::Segment::Member((*part).into()))
            })
        };
        let got = project(
            &item,
            &[
                AttrPath::Top("a"),
                nested(&["m", "y"]),
                AttrPath::Top("gone"),
                nested(&["m", "missing"]),
                nested(&["a", "not-a-map"]),
            ],
        );
        let mut expected = crate::item_map::strings(&[("a", "1")]);
        let map = crate::item_map::strings(&[("y", "4")]);
        expected.insert("m".to_owned(), AttributeValue::M(map));
        assert_eq!(got, expected);
    }
}
