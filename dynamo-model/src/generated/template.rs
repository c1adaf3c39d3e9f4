//! The descriptors derived from a [`KeyTemplate`] (defined with the text of keys, in
//! `key::template`): where a field is read back from a rendered key, and the key
//! fields read back through the template's placeholders, which name them.

use crate::entity::__private::{
    FieldError, IndexKeySource, KeyAttribute, KeySource, StoredKeyField, take_key_field,
};
use crate::key::KeyPart;
pub use crate::key::template::KeyTemplate;
use crate::key::template::{EncodeTouch, Reencode, TemplateField};
use crate::{AttrValue, DecodeError, Entity, Item};

impl KeyTemplate {
    /// The attribute of the field placeholder `ordinal` names.
    #[inline]
    fn name(self, ordinal: usize) -> &'static str {
        self.placeholders.get(ordinal).map_or("", |p| p.name)
    }

    /// Takes the key field of placeholder `ordinal` of this (primary-key) template out of
    /// `item`: its plain attribute when the item has one, else its component of the key,
    /// decoded as key part `T` (see `take_key_field`).
    #[inline]
    pub fn take<E: Entity, T: AttrValue + KeyPart>(
        self,
        item: &mut Item,
        ordinal: usize,
    ) -> Result<T, FieldError<DecodeError>> {
        let source = self.key_source(ordinal);
        take_key_field::<E, T>(item, self.name(ordinal), &[], source, T::decode_key_with)
    }

    /// The key field of placeholder `ordinal` of this (primary-key) template, stored in
    /// its own attribute as `attribute` encodes it (its key part's `__key_attribute`):
    /// what an update that creates its item writes.
    pub const fn key_field(self, ordinal: usize, attribute: KeyAttribute) -> StoredKeyField {
        StoredKeyField {
            name: self.placeholders[ordinal].name,
            source: self.key_source(ordinal),
            attribute,
        }
    }

    /// Where a primary-key field is read back from: the component of placeholder
    /// `ordinal` of this (primary-key) template.
    pub const fn key_source(self, ordinal: usize) -> KeySource {
        KeySource {
            sort: self.sort,
            segments: self.parts,
            delimiter: self.delimiter,
            ordinal,
        }
    }

    /// Where a field an index key holds is read back from: placeholder `ordinal` of this
    /// (index) template, rendered into `attribute` (`None`: the index writes none).
    pub const fn index_source(
        self,
        attribute: Option<&'static str>,
        ordinal: usize,
    ) -> IndexKeySource {
        IndexKeySource {
            attribute,
            segments: self.parts,
            delimiter: self.delimiter,
            ordinal,
        }
    }

    /// How an update takes a stored index key field that placeholder `ordinal` of this
    /// (index) template names: from the value the update gives its attribute, encoded by
    /// `encode`.
    pub const fn stored_field(self, ordinal: usize, encode: EncodeTouch) -> TemplateField {
        TemplateField::Stored {
            attribute: self.placeholders[ordinal].name,
            encode,
        }
    }

    /// How an update re-renders an index key field that placeholder `ordinal` of this
    /// (primary-key) template holds: read back from the item's key, decoded and encoded
    /// again by `reencode`. The field is the one the placeholder names.
    pub const fn template_field(self, ordinal: usize, reencode: Reencode) -> TemplateField {
        TemplateField::Key {
            name: self.placeholders[ordinal].name,
            sort: self.sort,
            segments: self.parts,
            delimiter: self.delimiter,
            ordinal,
            reencode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Delimiter;
    use crate::key::template::Placeholder;

    fn accepts(_: &str, _: Delimiter) -> bool {
        true
    }

    const SK: KeyTemplate = KeyTemplate::of(
        true,
        "ORDER#{at}#{id}",
        &[Some("ORDER#"), None, Some("#"), None],
        &[
            Placeholder::key("at", accepts),
            Placeholder::key("id", accepts),
        ],
        Delimiter::HASH,
    );

    #[test]
    fn counts_placeholders() {
        assert_eq!(SK.placeholders(), 2);
        assert_eq!(
            KeyTemplate::new(false, &[Some("PROFILE")], Delimiter::DOT).placeholders(),
            0
        );
    }

    #[test]
    fn key_and_index_sources_carry_the_template() {
        let source = SK.key_source(1);
        assert!(source.sort);
        assert_eq!(source.segments, SK.parts);
        assert_eq!(source.delimiter, Delimiter::HASH);
        assert_eq!(source.ordinal, 1);
        let index = SK.index_source(Some("GSI1SK"), 0);
        assert_eq!(index.attribute, Some("GSI1SK"));
        assert_eq!(index.segments, SK.parts);
        assert_eq!(index.ordinal, 0);
    }

    #[test]
    fn a_template_field_reads_the_key_back() {
        fn reencode(
            _: &'static str,
            _: &str,
            _: Delimiter,
            _: Delimiter,
            _: &mut String,
        ) -> Result<(), crate::Error> {
            Ok(())
        }
        match SK.template_field(1, reencode) {
            TemplateField::Key {
                name,
                sort,
                segments,
                delimiter,
                ordinal,
                ..
            } => {
                assert_eq!(name, "id");
                assert!(sort);
                assert_eq!(segments, SK.parts);
                assert_eq!(delimiter, Delimiter::HASH);
                assert_eq!(ordinal, 1);
            }
            TemplateField::Stored { .. } => panic!("a key field"),
        }
    }
}
