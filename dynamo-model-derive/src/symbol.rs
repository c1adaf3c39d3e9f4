//! Every option name the derives read, named once (as serde_derive's `symbol.rs` does):
//! a typo in a name is then a compile error here, not an option silently never matched.

use std::fmt::{self, Display};
use syn::{Ident, Path};

/// An option name of `#[dynamo(..)]` or `#[serde(..)]`, or an attribute's own name.
#[derive(Copy, Clone)]
pub struct Symbol(&'static str);

pub const ALIAS: Symbol = Symbol("alias");
pub const BILLING: Symbol = Symbol("billing");
pub const CAPACITY: Symbol = Symbol("capacity");
pub const CHUNK_SIZE: Symbol = Symbol("chunk_size");
pub const CHUNKED: Symbol = Symbol("chunked");
pub const CODEC: Symbol = Symbol("codec");
pub const COMPRESS: Symbol = Symbol("compress");
pub const CONTENT: Symbol = Symbol("content");
pub const COUNTER_ON_LATEST: Symbol = Symbol("counter_on_latest");
pub const CREATED: Symbol = Symbol("created");
pub const DEFAULT: Symbol = Symbol("default");
pub const DELIMITER: Symbol = Symbol("delimiter");
pub const DESERIALIZE_WITH: Symbol = Symbol("deserialize_with");
pub const DYNAMO: Symbol = Symbol("dynamo");
pub const ENCRYPT: Symbol = Symbol("encrypt");
pub const ENTITY_TYPE: Symbol = Symbol("entity_type");
pub const FLATTEN: Symbol = Symbol("flatten");
pub const FROM: Symbol = Symbol("from");
pub const GENERATE: Symbol = Symbol("generate");
pub const GETTER: Symbol = Symbol("getter");
pub const GSI: Symbol = Symbol("gsi");
pub const HISTORY: Symbol = Symbol("history");
pub const IDENTIFY: Symbol = Symbol("identify");
pub const INCLUDE: Symbol = Symbol("include");
pub const INDEX: Symbol = Symbol("index");
pub const INLINE: Symbol = Symbol("inline");
pub const INTO: Symbol = Symbol("into");
pub const KEY_FORMAT: Symbol = Symbol("key_format");
pub const KEY_ONLY: Symbol = Symbol("key_only");
pub const KEY_STRUCT: Symbol = Symbol("key_struct");
pub const LENGTH: Symbol = Symbol("length");
pub const LEVEL: Symbol = Symbol("level");
pub const LSI: Symbol = Symbol("lsi");
pub const MAX: Symbol = Symbol("max");
pub const MAX_SIZE: Symbol = Symbol("max_size");
pub const MIN: Symbol = Symbol("min");
pub const NAME: Symbol = Symbol("name");
pub const NUMERIC_ORDER: Symbol = Symbol("numeric_order");
pub const LAYOUT: Symbol = Symbol("layout");
pub const ONE_OF: Symbol = Symbol("one_of");
pub const OTHER: Symbol = Symbol("other");
pub const PATTERN: Symbol = Symbol("pattern");
pub const PK: Symbol = Symbol("pk");
pub const PREFIX: Symbol = Symbol("prefix");
pub const PROJECTION: Symbol = Symbol("projection");
pub const RANGE: Symbol = Symbol("range");
pub const READ: Symbol = Symbol("read");
pub const REMOTE: Symbol = Symbol("remote");
pub const RENAME: Symbol = Symbol("rename");
pub const RENAME_ALL: Symbol = Symbol("rename_all");
pub const RENAME_ALL_FIELDS: Symbol = Symbol("rename_all_fields");
pub const REVISIONS_IN: Symbol = Symbol("revisions_in");
pub const SEPARATOR: Symbol = Symbol("separator");
pub const SERDE: Symbol = Symbol("serde");
pub const SERIALIZE_WITH: Symbol = Symbol("serialize_with");
pub const SK: Symbol = Symbol("sk");
pub const SKIP: Symbol = Symbol("skip");
pub const SKIP_DESERIALIZING: Symbol = Symbol("skip_deserializing");
pub const SKIP_SERIALIZING: Symbol = Symbol("skip_serializing");
pub const SKIP_SERIALIZING_IF: Symbol = Symbol("skip_serializing_if");
pub const STORE_KEY_FIELDS: Symbol = Symbol("store_key_fields");
pub const STREAM: Symbol = Symbol("stream");
pub const TABLE: Symbol = Symbol("table");
pub const TAG: Symbol = Symbol("tag");
pub const THRESHOLD: Symbol = Symbol("threshold");
pub const TIME_ATTRIBUTE: Symbol = Symbol("time_attribute");
pub const TRANSPARENT: Symbol = Symbol("transparent");
pub const TRY_FROM: Symbol = Symbol("try_from");
pub const TTL: Symbol = Symbol("ttl");
pub const UNTAGGED: Symbol = Symbol("untagged");
pub const UPDATED: Symbol = Symbol("updated");
pub const UNIQUE: Symbol = Symbol("unique");
pub const VALIDATE: Symbol = Symbol("validate");
pub const VERSION: Symbol = Symbol("version");
pub const WIDTH: Symbol = Symbol("width");
pub const WITH: Symbol = Symbol("with");
pub const WRITE: Symbol = Symbol("write");
pub const WRITE_TOKEN: Symbol = Symbol("write_token");
pub const WRITE_TYPE: Symbol = Symbol("write_type");

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        self == word.0
    }
}

impl PartialEq<Symbol> for &Ident {
    fn eq(&self, word: &Symbol) -> bool {
        *self == word.0
    }
}

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl PartialEq<Symbol> for &Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl Display for Symbol {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_matches_its_word_only() {
        let path: Path = syn::parse_quote!(rename_all);
        assert!(path == RENAME_ALL);
        assert!(path != RENAME);
        let qualified: Path = syn::parse_quote!(serde::rename_all);
        assert!(qualified != RENAME_ALL);
        let ident: Ident = syn::parse_quote!(pk);
        assert!(ident == PK);
        assert_eq!(WRITE_TOKEN.to_string(), "write_token");
    }
}
