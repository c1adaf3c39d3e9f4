//! The compile-time assertions of an entity against its table's declaration: `const fn`s
//! the generated code calls in a `const` item, one call per attribute the user would change.
//!
//! Each is `#[track_caller]`: a failing assertion's error points at the call, which the
//! derive spans on the attribute to change, and reads as the message built here.

use crate::key::Delimiter;
use crate::schema::{IndexKind, IndexSchema, ScalarType, TableSchema, const_str_eq};

/// Room for the longest message (the templates and names in it are the user's).
const CAPACITY: usize = 1024;

/// A message assembled at compile time from its parts.
struct Message {
    buf: [u8; CAPACITY],
    len: usize,
}

impl Message {
    /// The parts one after the other, cut at `CAPACITY` bytes (on a character boundary).
    const fn new(parts: &[&str]) -> Self {
        let mut m = Message {
            buf: [0; CAPACITY],
            len: 0,
        };
        let mut p = 0;
        while p < parts.len() {
            let bytes = parts[p].as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                if m.len == CAPACITY {
                    // Cut before the character `bytes[i]` continues, if it does.
                    while i > 0 && (bytes[i] & 0xC0) == 0x80 {
                        i -= 1;
                        m.len -= 1;
                    }
                    return m;
                }
                m.buf[m.len] = bytes[i];
                m.len += 1;
                i += 1;
            }
            p += 1;
        }
        m
    }

    /// The text (valid UTF-8: whole `str`s, cut on a character boundary).
    const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(s) => s,
            Err(_) => "invalid entity declaration",
        }
    }
}

/// Fails the compilation with the parts of the message.
#[track_caller]
const fn fail(parts: &[&str]) -> ! {
    panic!("{}", Message::new(parts).as_str())
}

/// A one-character `str` of an ASCII delimiter.
const fn ascii(c: &[u8; 1]) -> &str {
    match core::str::from_utf8(c) {
        Ok(s) => s,
        Err(_) => "?",
    }
}

/// The entity has a sort-key template (`has_sk`) exactly when `table` has a sort key; a
/// `versioned` entity needs one.
#[track_caller]
pub const fn sort_key(schema: &TableSchema, table: &str, has_sk: bool, versioned: bool) {
    match (has_sk, schema.sk.is_none()) {
        (true, true) if versioned => fail(&[
            "table `",
            table,
            "` has no sort key, and a #[dynamo(history)] entity needs one: the revision number is part of it (declare the table with `sk = \"..\"`)",
        ]),
        (true, true) => fail(&["table `", table, "` has no sort key: remove `sk`"]),
        (false, false) => fail(&[
            "table `",
            table,
            "` has a sort key: add an `sk` template (a literal like \"PROFILE\" is fine)",
        ]),
        _ => {}
    }
}

/// A template that declares no delimiter, and so takes the table's (`delimiter`), follows
/// its placeholders with `follower`: they must be the same. `which` names the template
/// (`pk`, `sk`, `index pk`, `index sk`), `template` is its text.
#[track_caller]
pub const fn delimiter(
    delimiter: Delimiter,
    follower: u8,
    which: &str,
    template: &str,
    table: &str,
) {
    if delimiter.as_char() as u32 == follower as u32 {
        return;
    }
    let follower = [follower];
    let f = ascii(&follower);
    let index = which.len() > 5 && const_str_eq(which.split_at(5).0, "index");
    let message = [
        "the ",
        which,
        " template \"",
        template,
        "\" separates its fields with `",
        f,
        "`, which is not the delimiter of table `",
        table,
        "`: ",
    ];
    if index {
        fail(&[
            Message::new(&message).as_str(),
            "declare `delimiter = \"",
            f,
            "\"` in the index (or #[dynamo(delimiter = \"",
            f,
            "\")] on the entity or the table)",
        ])
    } else {
        fail(&[
            Message::new(&message).as_str(),
            "declare #[dynamo(delimiter = \"",
            f,
            "\")] on the entity (or on the table)",
        ])
    }
}

/// Field `field`, stored as `attribute`, takes no attribute the table uses for a key, the
/// entity type or the write token.
#[track_caller]
pub const fn stored_field(schema: &TableSchema, table: &str, field: &str, attribute: &str) {
    let head = [
        "field `",
        field,
        "` would be stored as attribute `",
        attribute,
        "`, which table `",
        table,
    ];
    if schema.is_reserved_attribute(attribute) {
        fail(&[
            Message::new(&head).as_str(),
            "` uses for a key or the entity type; store it under another name with #[dynamo(rename = \"...\")]",
        ])
    }
    if const_str_eq(schema.write_token, attribute) {
        fail(&[
            Message::new(&head).as_str(),
            "` uses for the write token; store the field under another name with #[dynamo(rename = \"...\")] or rename the token with #[dynamo(write_token = \"...\")] on the table",
        ])
    }
}

/// What an index with key templates needs of its declaration on the table: an entity's
/// template index `index` (`has_pk`, `has_sk`: which templates it has; `repeats_pk`,
/// `repeats_sk`: the template repeats the table's own key template, so it may write the
/// table's key attribute) and the attributes of the entity's stored fields (`stored`).
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub const fn template_index(
    schema: &TableSchema,
    index: &IndexSchema,
    table: &str,
    entity: &str,
    (has_pk, has_sk): (bool, bool),
    (repeats_pk, repeats_sk): (bool, bool),
    stored: &[&str],
) {
    let name = index.name;
    match index.kind {
        IndexKind::Local if has_pk => fail(&[
            "index `",
            name,
            "` is an LSI: it uses the table's partition key, so give only `sk`",
        ]),
        IndexKind::Global if !has_pk => {
            fail(&["index `", name, "` is a GSI: its template needs `pk`"])
        }
        _ => {}
    }
    if (has_pk && index.pk.len() != 1) || index.sk.len() > 1 {
        fail(&[
            "index `",
            name,
            "` has a multi-attribute key: its key attributes are the entity's own fields, not a template",
        ])
    }
    if has_sk != (index.sk.len() == 1) {
        fail(&[
            "the `sk` template of index `",
            name,
            "` does not match its declaration (a template exactly when the index has one sort key attribute)",
        ])
    }
    // Each key attribute a template writes (the index's declaration is asserted above:
    // one attribute exactly where there is a template).
    let pk_own = has_pk && repeats_pk && const_str_eq(index.pk[0].name, schema.pk.name);
    let sk_own = has_sk
        && repeats_sk
        && match schema.sk {
            Some(sk) => const_str_eq(index.sk[0].name, sk.name),
            None => false,
        };
    let sides = [
        (has_pk, index.pk, pk_own, "pk"),
        (has_sk, index.sk, sk_own, "sk"),
    ];
    let mut i = 0;
    while i < sides.len() {
        let (templated, attributes, own, which) = sides[i];
        if templated {
            let attribute = &attributes[0];
            written(
                schema,
                attribute.name,
                attribute.ty,
                own,
                which,
                name,
                table,
                entity,
                stored,
            );
        }
        i += 1;
    }
}

/// The `which` key attribute `attribute` of index `index`, which a template writes: never
/// the table's own keys (that would move the item) unless the template repeats the
/// table's (`own`), always a string, never a field's attribute.
#[track_caller]
#[allow(clippy::too_many_arguments)]
const fn written(
    schema: &TableSchema,
    attribute: &str,
    ty: ScalarType,
    own: bool,
    which: &str,
    index: &str,
    table: &str,
    entity: &str,
    stored: &[&str],
) {
    if schema.is_reserved_attribute(attribute) && !own {
        fail(&[
            "the `",
            which,
            "` key attribute of index `",
            index,
            "` is a key or the entity-type attribute of table `",
            table,
            "`: a template cannot write it",
        ])
    }
    if !matches!(ty, ScalarType::S) {
        fail(&[
            "the `",
            which,
            "` key attribute of index `",
            index,
            "` is not a string (S), so it cannot hold a rendered template",
        ])
    }
    let mut i = 0;
    while i < stored.len() {
        if const_str_eq(attribute, stored[i]) {
            fail(&[
                "the `",
                which,
                "` key attribute of index `",
                index,
                "` is also the attribute of a field of `",
                entity,
                "`",
            ])
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_joins_its_parts_and_stops_at_its_capacity() {
        assert_eq!(Message::new(&["a `", "b", "`"]).as_str(), "a `b`");
        let long = "é".repeat(CAPACITY);
        let cut = Message::new(&["x", &long]);
        assert!(cut.as_str().len() <= CAPACITY);
        assert!(cut.as_str().starts_with("xé"));
    }

    #[test]
    fn a_delimiter_names_its_ascii_text() {
        assert_eq!(ascii(b"#"), "#");
        delimiter(Delimiter::HASH, b'#', "sk", "A#{a}", "App");
    }

    #[test]
    #[should_panic(
        expected = "the index sk template \"{a}.{b}\" separates its fields with `.`, which is not the delimiter of table `App`: declare `delimiter = \".\"` in the index (or #[dynamo(delimiter = \".\")] on the entity or the table)"
    )]
    fn an_index_template_with_another_delimiter_fails() {
        delimiter(Delimiter::HASH, b'.', "index sk", "{a}.{b}", "App");
    }

    #[test]
    #[should_panic(
        expected = "the sk template \"{a}.{b}\" separates its fields with `.`, which is not the delimiter of table `App`: declare #[dynamo(delimiter = \".\")] on the entity (or on the table)"
    )]
    fn a_key_template_with_another_delimiter_fails() {
        delimiter(Delimiter::HASH, b'.', "sk", "{a}.{b}", "App");
    }
}
