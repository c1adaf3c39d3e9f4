//! Item size as DynamoDB computes it, to refuse oversized items before sending them.
//!
//! Rules (DynamoDB developer guide, "Item sizes and formats"): an item's size is the sum
//! over its attributes of the UTF-8 length of the name plus the size of the value. S: its
//! UTF-8 bytes; B: raw bytes; N: 1 byte per two significant digits on each side of the
//! decimal point, plus 1, plus 1 if negative; BOOL and NULL: 1; L and M: 3 bytes plus 1 per
//! element plus the elements (and, for maps, their names); sets: the sum of the elements.

use crate::{Entity, Error, Item};
use aws_sdk_dynamodb::types::AttributeValue;

/// DynamoDB's maximum item size: 400 KB, with 1 KB = 1024 bytes.
pub const MAX_ITEM_BYTES: usize = 400 * 1024;

/// The size of an item in bytes, as DynamoDB counts it against the 400 KB limit.
///
/// This counts the attributes given. A put sends more than its entity's
/// [`to_item`](crate::Entity::to_item): the write token (19 bytes with the default
/// attribute name) and the next version of a versioned entity. To size an item against
/// the limit, measure the put itself: [`Put::size`](dynamo_model::item::Put::size).
///
/// ```
/// use aws_sdk_dynamodb::types::AttributeValue;
/// use std::collections::HashMap;
///
/// let item = HashMap::from([
///     ("shirt-color".to_string(), AttributeValue::S("R".into())),
///     ("shirt-size".to_string(), AttributeValue::S("M".into())),
/// ]);
/// assert_eq!(dynamo_model::item_size(&item), 23);
/// ```
pub fn item_size(item: &Item) -> usize {
    item.iter().map(|(k, v)| k.len() + value_size(v)).sum()
}

/// The size of one attribute value.
pub fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::N(n) => number_size(n),
        AttributeValue::B(b) => b.as_ref().len(),
        AttributeValue::Bool(_) | AttributeValue::Null(_) => 1,
        AttributeValue::L(list) => 3 + list.iter().map(|v| 1 + value_size(v)).sum::<usize>(),
        AttributeValue::M(map) => {
            3 + map
                .iter()
                .map(|(k, v)| k.len() + 1 + value_size(v))
                .sum::<usize>()
        }
        AttributeValue::Ss(set) => set.iter().map(String::len).sum(),
        AttributeValue::Ns(set) => set.iter().map(|n| number_size(n)).sum(),
        AttributeValue::Bs(set) => set.iter().map(|b| b.as_ref().len()).sum(),
        _ => 0,
    }
}

/// Size of a number: `ceil(int_digits/2) + ceil(frac_digits/2) + 1 (+1 if negative)`, on
/// significant digits (leading and trailing zeros trimmed), with exponent notation
/// expanded. Measured byte-exact against the service (see the project's reference notes).
fn number_size(n: &str) -> usize {
    let negative = n.starts_with('-');
    let unsigned = n.trim_start_matches(['-', '+']);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (
            &unsigned[..i],
            unsigned[i + 1..].parse::<i64>().unwrap_or(0),
        ),
        None => (unsigned, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = int_part.chars().chain(frac_part.chars()).collect();
    // Position of the decimal point within `digits`, after applying the exponent.
    let point = int_part.len() as i64 + exponent;
    let first = digits.find(|c| c != '0');
    let Some(first) = first else {
        return 1; // zero
    };
    let last = digits.rfind(|c| c != '0').unwrap_or(first);
    let (first, last) = (first as i64, last as i64);
    let int_digits = (point - first).clamp(0, last - first + 1);
    let frac_digits = (last + 1 - point).clamp(0, last - first + 1);
    let size = (int_digits as usize).div_ceil(2) + (frac_digits as usize).div_ceil(2) + 1;
    size + usize::from(negative)
}

pub(crate) fn check_item_size<E: Entity>(item: &Item) -> Result<(), Error> {
    let size = item_size(item);
    let local = local_index_bytes(&<E::Table as crate::Table>::SCHEMA, item);
    if size + local > MAX_ITEM_BYTES {
        let message = if local == 0 {
            format!("the item is {size} bytes; DynamoDB allows at most {MAX_ITEM_BYTES}")
        } else {
            format!(
                "the item is {size} bytes and its entries in the table's local secondary indexes {local} bytes; DynamoDB allows at most {MAX_ITEM_BYTES} for the two together"
            )
        };
        return Err(Error::invalid(
            E::ENTITY_TYPE,
            crate::ValidationReason::ItemTooLarge,
            message,
        ));
    }
    Ok(())
}

/// The bytes `item`'s entries in the local secondary indexes of `schema` take: DynamoDB
/// applies its 400 KB limit to an item's table data plus these ("for each local secondary
/// index on a table, there is a 400 KB limit on the total of the size of an item's data in
/// the table and the size of corresponding entries, including key values and projected
/// attributes, in all of the local secondary indexes"). An item is in an LSI when it has
/// the index's sort-key attribute; its entry holds the table's keys, the index key and
/// the projected attributes (all of them for `ALL`).
pub fn local_index_bytes(schema: &crate::TableSchema, item: &Item) -> usize {
    let size_of = |name: &str| item.get(name).map_or(0, |v| name.len() + value_size(v));
    schema
        .indexes
        .iter()
        .filter(|index| index.kind == crate::schema::IndexKind::Local)
        .filter(|index| index.sk.iter().all(|a| item.contains_key(a.name)))
        .map(|index| match index.projection {
            crate::schema::Projection::All => item_size(item),
            projection => {
                let mut names: Vec<&str> = vec![schema.pk.name];
                names.extend(schema.sk.map(|a| a.name));
                names.extend(index.sk.iter().map(|a| a.name));
                if let crate::schema::Projection::Include(attrs) = projection {
                    names.extend(attrs.iter().copied());
                }
                names.sort_unstable();
                names.dedup();
                names.into_iter().map(size_of).sum()
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(crate::Table)]
    #[dynamo(
        pk = "PK",
        sk = "SK",
        gsi(name = "GSI1", pk = "G1PK", sk = "G1SK"),
        lsi(name = "ByAll", sk = "ASK"),
        lsi(name = "ByKeys", sk = "KSK", projection = keys_only),
        lsi(name = "ByInc", sk = "ISK", projection(include = ["title", "absent"]))
    )]
    struct Lsi;

    fn s(v: &str) -> AttributeValue {
        AttributeValue::S(v.into())
    }

    /// An item's entries in the local secondary indexes it is in count towards its 400 KB:
    /// the whole item for `ALL`, the table and index keys (and included attributes)
    /// otherwise; global indexes never count.
    #[test]
    fn local_index_entries_count_by_projection() {
        use crate::Table;
        let schema = &Lsi::SCHEMA;
        let mut item: Item = [
            ("PK", s("p")),
            ("SK", s("s")),
            ("G1PK", s("g")),
            ("G1SK", s("g")),
            ("title", s("hello")),
            ("body", s(&"b".repeat(1000))),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(local_index_bytes(schema, &item), 0, "in no LSI");
        let keys = ("PK".len() + 1) + ("SK".len() + 1);
        item.insert("KSK".into(), s("k"));
        assert_eq!(local_index_bytes(schema, &item), keys + 4);
        item.insert("ISK".into(), s("i"));
        assert_eq!(
            local_index_bytes(schema, &item),
            (keys + 4) + (keys + 4 + "title".len() + 5)
        );
        item.insert("ASK".into(), s("a"));
        let whole = item_size(&item);
        assert_eq!(
            local_index_bytes(schema, &item),
            whole + (keys + 4) + (keys + 4 + 10)
        );
        // An item at half the limit fits a table without LSIs, not one with an ALL LSI.
        item.insert("body".into(), s(&"b".repeat(MAX_ITEM_BYTES / 2)));
        assert!(item_size(&item) < MAX_ITEM_BYTES);
        assert!(item_size(&item) + local_index_bytes(schema, &item) > MAX_ITEM_BYTES);
    }

    #[test]
    fn number_sizes_match_the_service() {
        // Golden vectors measured against the service.
        for (n, size) in [
            ("1", 2),
            ("12", 2),
            ("123", 3),
            ("12345", 4),
            ("0042", 2),
            ("100", 2),
            ("1.5", 3),
            ("3.14159", 5),
            ("0.15", 2),
            ("-42", 3),
            ("1E125", 2),
            ("0", 1),
            ("12345678901234567890123456789012345678", 20),
        ] {
            assert_eq!(number_size(n), size, "{n}");
        }
    }

    #[test]
    fn containers_count_their_overhead() {
        let list = AttributeValue::L(vec![
            AttributeValue::S("ab".into()),
            AttributeValue::Bool(true),
        ]);
        assert_eq!(value_size(&list), 3 + (1 + 2) + (1 + 1));
        let map = AttributeValue::M([("k".to_string(), AttributeValue::S("v".into()))].into());
        assert_eq!(value_size(&map), 3 + 1 + 1 + 1);
        assert_eq!(value_size(&AttributeValue::L(vec![])), 3);
    }
}
