//! The descriptors derived from a [`KeyTemplate`] (defined with the text of keys, in
//! `keytext::template`): where a field is read back from a rendered key.

use crate::entity::__private::{IndexKeySource, KeySource};
use crate::key::template::{Reencode, TemplateField};
pub use crate::keytext::template::KeyTemplate;

impl KeyTemplate {
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

    /// How an update re-renders an index key field that placeholder `ordinal` of this
    /// (primary-key) template holds: read back from the item's key, decoded and encoded
    /// again by `reencode`.
    pub const fn template_field(self, ordinal: usize, reencode: Reencode) -> TemplateField {
        TemplateField::Key {
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

    const SK: KeyTemplate = KeyTemplate::new(
        true,
        &[Some("ORDER#"), None, Some("#"), None],
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
                sort,
                segments,
                delimiter,
                ordinal,
                ..
            } => {
                assert!(sort);
                assert_eq!(segments, SK.parts);
                assert_eq!(delimiter, Delimiter::HASH);
                assert_eq!(ordinal, 1);
            }
            TemplateField::Stored { .. } => panic!("a key field"),
        }
    }
}
