//! Errors encoding a value into a key or decoding it from one.

/// An error while encoding a value into a key or decoding it from a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The value contains a character that cannot be represented in a key.
    ///
    /// The built-in encodings accept every character (delimiters are escaped);
    /// this variant is available to custom [`KeyPart`](crate::KeyPart) implementations.
    #[error(
        "character {ch:?} is not allowed in a key value{}",
        super::shown::suffix(" in ", format_args!("{value:?}"))
    )]
    ForbiddenChar {
        /// The rejected character.
        ch: char,
        /// The value that contains it.
        value: String,
    },
    /// The value is valid for its type but outside the range keys can encode.
    #[error(
        "{type_name} value{} cannot be encoded in a key: {reason}",
        super::shown::suffix(" ", value)
    )]
    OutOfRange {
        /// The Rust type of the value.
        type_name: &'static str,
        /// The value, formatted for display.
        value: String,
        /// Why it is out of range.
        reason: &'static str,
    },
    /// A key of an entity identified by its keys (`#[dynamo(identify = "keys")]`) that
    /// the key templates of another such entity of the table render too: an item stored
    /// there without the entity-type attribute could be either, so the crate neither
    /// writes nor reads it as one of them.
    #[error(
        "the key {} matches the key templates of {entity} and of {other}, which are both identified by their keys",
        super::key_text(&format_args!("{key:?}"))
    )]
    AmbiguousEntity {
        /// The entity the key was built for.
        entity: &'static str,
        /// Another entity whose templates render it.
        other: &'static str,
        /// The rendered key (partition and sort key).
        key: String,
    },
    /// A range (`lt`, `le`, `gt`, `ge`, `between`) or `starts_with` on a sort-key part
    /// whose encoding does not keep the values' order
    /// ([`KeyPart::KEEPS_ORDER`](crate::KeyPart::KEEPS_ORDER), e.g.
    /// `key_format = "unpadded"`): DynamoDB would
    /// compare the text (`10` before `9`) and leave items out. Equality is allowed.
    #[error(
        "a {operator} condition on a {type_name} key part compares text, not values (its encoding does not keep order, e.g. 10 sorts before 9); only equality is allowed on it"
    )]
    Unordered {
        /// The key part's type or format.
        type_name: &'static str,
        /// The refused operator.
        operator: &'static str,
    },
    /// A key component is not a valid encoding of the expected type.
    #[error(
        "malformed {type_name} key component{}: {reason}",
        super::shown::suffix(" ", format_args!("{input:?}"))
    )]
    Malformed {
        /// The Rust type that was expected.
        type_name: &'static str,
        /// The component that failed to decode.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}
