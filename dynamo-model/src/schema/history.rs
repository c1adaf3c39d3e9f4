//! Where the revision number sits in an entity with history's sort key.
//!
//! An entity with history's sort key is `{prefix}{slot}{separator}{rest}`: `rest` is what the
//! entity's own sort-key template renders, `slot` is `0` for the latest copy and `k` for
//! revision `k`. With the default layout (`v`, 20 digits, `#`) an item at revision 12 of
//! a document whose template renders `DOC` is stored twice:
//!
//! ```text
//! v00000000000000000000#DOC    the latest copy (its version attribute says 12)
//! v00000000000000000012#DOC    revision 12
//! ```
//!
//! The layout does not depend on the key delimiter of the entity's templates: the slot is
//! read by its digits and the separator is the layout's own, and `rest` is kept whole.
//!
//! Padded to a fixed width, slots sort numerically (`v…09` before `v…10`), so a range over
//! revisions reads them in revision order, and `begins_with` on the latest copy's prefix
//! (all zeros) matches no revision. An unpadded layout (`width = 0`, the layout of
//! tables written as `v0_Audit`, `v1_Audit`, …) is read and written too, but its slots
//! sort as text: `v10` comes before `v2`; with [`numeric_order`](HistoryLayout::numeric_order)
//! the history is read whole and sorted by number.
//!
//! # AWS's number-based version-control layout
//!
//! AWS's version-control samples store an item's latest copy under `v0` and revision `k`
//! under `v{k}`: unpadded, nothing after the number, the counter (`Latest`) on `v0` only,
//! revisions without a number attribute, no time of writing. The layout that reads and
//! writes it as it is:
//!
//! ```text
//! #[dynamo(pk = "EQ#{id}", history(layout = "aws"))]
//! // the same: sk = "", history(width = 0, separator = "", counter_on_latest, numeric_order,
//! //                            time_attribute = false)
//! … #[dynamo(version, rename = "Latest")] latest: u64,
//!
//! v0     Latest=12   the latest copy
//! v1                 revision 1 (its number is its key's)
//! v12                revision 12
//! ```
//!
//! The items the crate writes in this layout equal the sample's byte for byte when the
//! entity also writes neither the entity-type attribute nor the write token
//! (`identify = "keys", write_type = false, write_token = false`; see
//! [`Entity`](crate::Entity) for what each costs).
//!
//! An empty separator is accepted where the slot's end stays unambiguous: the text after
//! the digits (the separator and the template's constant rest) must not start with a
//! digit, which the derive checks.

/// The largest number of digits a slot can have (`u64::MAX` has 20).
pub const MAX_WIDTH: usize = 20;

/// How an entity with history places the revision number in its sort key. Built by
/// `#[derive(Entity)]` from `#[dynamo(history(..))]`; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HistoryLayout {
    /// The text before the slot (`v`).
    pub prefix: &'static str,
    /// Digits of a slot, zero-padded; 0: unpadded (slots sort as text).
    pub width: usize,
    /// The text between the slot and the rest of the sort key (`#`). Empty, or not
    /// starting with a digit; the separator followed by the rest never starts with a
    /// digit, so a slot's end is never ambiguous (the derive checks it).
    pub separator: &'static str,
    /// The attribute holding when a revision was written (epoch milliseconds); `None`
    /// (`history(time_attribute = false)`, and AWS's layout): no time is recorded, and a
    /// revision read back has no `revised_at`.
    pub time_attribute: Option<&'static str>,
    /// The indexes whose key attributes revisions keep (`history(revisions_in(..))`);
    /// revisions carry no other index key attribute the entity renders from a template.
    pub revisions_in: &'static [&'static str],
    /// The version attribute (the counter) is stored on the latest copy only, and the
    /// layout's time attribute on revisions only: a revision's number is its slot
    /// (`history(counter_on_latest)`). A revision that holds the version attribute
    /// anyway (a copy of the latest copy) must hold its own number.
    pub counter_on_latest: bool,
    /// The history of an unpadded layout is read in revision order (`v9` before `v10`):
    /// every revision of the item is read, then sorted (`history(numeric_order)`).
    pub numeric_order: bool,
}

impl HistoryLayout {
    /// The default layout: `v`, 20 digits, `#`, time in `_vt`.
    pub const DEFAULT: HistoryLayout = HistoryLayout {
        prefix: "v",
        width: MAX_WIDTH,
        separator: "#",
        time_attribute: Some("_vt"),
        revisions_in: &[],
        counter_on_latest: false,
        numeric_order: false,
    };

    /// The AWS version-control samples' layout: `v0` (the latest copy, holding the
    /// counter), `v1`, …, `v10`, unpadded, nothing after the number, no number attribute
    /// on revisions, no revision time, the history read in revision order.
    pub const AWS_NUMBER_BASED: HistoryLayout = HistoryLayout {
        prefix: "v",
        width: 0,
        separator: "",
        time_attribute: None,
        revisions_in: &[],
        counter_on_latest: true,
        numeric_order: true,
    };

    /// Whether the history is read whole and sorted by revision number (an unpadded
    /// layout with [`numeric_order`](Self::numeric_order)); a padded layout's key order
    /// is already the revision order.
    pub fn sorts_history(&self) -> bool {
        self.numeric_order && self.width == 0
    }

    /// The highest slot the layout can write: `10^width - 1`, or `u64::MAX` when the
    /// width holds every `u64` (20 digits, or unpadded).
    pub fn max_slot(&self) -> u64 {
        if self.width == 0 || self.width >= MAX_WIDTH {
            return u64::MAX;
        }
        10u64.pow(self.width as u32) - 1
    }

    /// Appends the sort key of `slot` (0: the latest copy) over `rest` to `out`.
    /// `slot` must be at most [`max_slot`](Self::max_slot) (callers check it).
    pub fn render(&self, slot: u64, rest: &str, out: &mut String) {
        out.reserve(self.prefix.len() + MAX_WIDTH + self.separator.len() + rest.len());
        out.push_str(self.prefix);
        self.push_slot(slot, out);
        out.push_str(self.separator);
        out.push_str(rest);
    }

    /// The sort key of `slot` over `rest`.
    pub fn key(&self, slot: u64, rest: &str) -> String {
        let mut out = String::new();
        self.render(slot, rest, &mut out);
        out
    }

    fn push_slot(&self, slot: u64, out: &mut String) {
        if self.width == 0 {
            out.push_str(&slot.to_string());
        } else {
            crate::text::push_padded_u64(out, slot, self.width);
        }
    }

    /// Splits a stored sort key into its slot and the rest, or `None` when it does not
    /// follow the layout (a wrong prefix, a slot of the wrong width or with a leading
    /// zero when unpadded, a missing separator). Every key [`render`](Self::render)
    /// writes parses back to its slot and rest, and no other string parses.
    pub fn parse<'a>(&self, stored: &'a str) -> Option<(u64, &'a str)> {
        let tail = stored.strip_prefix(self.prefix)?;
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let valid = if self.width == 0 {
            // Canonical decimal: `0`, or no leading zero.
            (1..=MAX_WIDTH).contains(&digits) && (digits == 1 || !tail.starts_with('0'))
        } else {
            digits == self.width
        };
        if !valid {
            return None;
        }
        let slot: u64 = tail[..digits].parse().ok()?;
        if slot > self.max_slot() {
            return None;
        }
        let rest = tail[digits..].strip_prefix(self.separator)?;
        Some((slot, rest))
    }

    /// The sort key of the latest copy over `rest`.
    pub fn latest(&self, rest: &str) -> String {
        self.key(0, rest)
    }

    /// Whether the stored sort key `stored` is a revision (slot 1 and above) over `rest`.
    pub fn is_revision_of(&self, stored: &str, rest: &str) -> bool {
        self.parse(stored)
            .is_some_and(|(slot, r)| slot > 0 && r == rest)
    }

    /// The inclusive sort-key bounds that hold every revision (slot 1 and above) over
    /// `rest` and never the latest copy. For a padded layout, the keys of slots 1 and
    /// [`max_slot`](Self::max_slot); unpadded, every key whose slot starts with 1 to 9
    /// (`{prefix}1` to `{prefix}:`, `:` sorting right after `9`). Either way the bounds
    /// also take in revisions of other rests in the partition (`v2#META` lies between
    /// `v1#DOC` and `v9#DOC`): a reader keeps only the keys that
    /// [`is_revision_of`](Self::is_revision_of) `rest`, as `history()` does.
    pub fn revision_bounds(&self, rest: &str) -> (String, String) {
        if self.width == 0 {
            (format!("{}1", self.prefix), format!("{}:", self.prefix))
        } else {
            (self.key(1, rest), self.key(self.max_slot(), rest))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const UNPADDED: HistoryLayout = HistoryLayout {
        prefix: "v",
        width: 0,
        separator: "_",
        time_attribute: Some("_vt"),
        revisions_in: &[],
        counter_on_latest: false,
        numeric_order: false,
    };

    const NARROW: HistoryLayout = HistoryLayout {
        prefix: "rev",
        width: 3,
        separator: "#",
        time_attribute: Some("_vt"),
        revisions_in: &[],
        counter_on_latest: false,
        numeric_order: false,
    };

    const AWS: HistoryLayout = HistoryLayout::AWS_NUMBER_BASED;

    #[test]
    fn the_aws_layout_has_nothing_after_the_number() {
        assert_eq!(AWS.key(0, ""), "v0");
        assert_eq!(AWS.key(9, ""), "v9");
        assert_eq!(AWS.key(10, ""), "v10");
        assert_eq!(AWS.parse("v0"), Some((0, "")));
        assert_eq!(AWS.parse("v10"), Some((10, "")));
        assert_eq!(AWS.parse("v18446744073709551615"), Some((u64::MAX, "")));
        assert_eq!(AWS.parse("v10X"), Some((10, "X")));
        for other in ["v", "v01", "w1", "V1", "v99999999999999999999", ""] {
            assert_eq!(AWS.parse(other), None, "{other}");
        }
        let (low, high) = AWS.revision_bounds("");
        assert!(low.as_str() <= "v1" && "v18446744073709551615" <= high.as_str());
        assert!("v0" < low.as_str());
        assert!(AWS.sorts_history());
        assert!(!HistoryLayout::DEFAULT.sorts_history());
    }

    #[test]
    fn the_default_layout_pads_to_twenty_digits() {
        let l = HistoryLayout::DEFAULT;
        assert_eq!(l.key(0, "DOC"), "v00000000000000000000#DOC");
        assert_eq!(l.key(12, "DOC"), "v00000000000000000012#DOC");
        assert_eq!(l.key(u64::MAX, "DOC"), "v18446744073709551615#DOC");
        assert_eq!(l.parse("v00000000000000000012#DOC"), Some((12, "DOC")));
        assert_eq!(l.max_slot(), u64::MAX);
    }

    #[test]
    fn an_unpadded_layout_reads_existing_tables() {
        assert_eq!(UNPADDED.key(0, "Audit"), "v0_Audit");
        assert_eq!(UNPADDED.key(10, "Audit"), "v10_Audit");
        assert_eq!(UNPADDED.parse("v10_Audit"), Some((10, "Audit")));
        assert_eq!(UNPADDED.parse("v0_Audit"), Some((0, "Audit")));
        // Not canonical, so not a key the layout writes.
        assert_eq!(UNPADDED.parse("v010_Audit"), None);
        assert_eq!(UNPADDED.parse("v_Audit"), None);
        assert_eq!(UNPADDED.parse("v1Audit"), None);
        assert_eq!(UNPADDED.parse("w1_Audit"), None);
        // More than u64 holds.
        assert_eq!(UNPADDED.parse("v99999999999999999999_Audit"), None);
    }

    #[test]
    fn a_narrow_layout_caps_its_slots() {
        assert_eq!(NARROW.max_slot(), 999);
        assert_eq!(NARROW.key(7, "X"), "rev007#X");
        assert_eq!(NARROW.parse("rev0007#X"), None);
        assert_eq!(NARROW.parse("rev07#X"), None);
    }

    fn layouts() -> impl Strategy<Value = HistoryLayout> {
        prop_oneof![
            Just(HistoryLayout::DEFAULT),
            Just(UNPADDED),
            Just(AWS),
            Just(NARROW),
            (1usize..=20).prop_map(|width| HistoryLayout {
                width,
                ..HistoryLayout::DEFAULT
            }),
        ]
    }

    fn slot_for(layout: &HistoryLayout) -> impl Strategy<Value = u64> + use<> {
        let max = layout.max_slot();
        prop_oneof![0..=max.min(200), Just(max), 0..=max]
    }

    /// Rests as an entity's template renders them (escaped values never hold `#`
    /// unescaped, but the layout must not rely on it); empty for a template `""`.
    fn rest() -> impl Strategy<Value = String> {
        "[A-Za-z0-9#_%]{0,12}"
    }

    /// What the derive accepts: the text after the digits does not start with one.
    fn unambiguous(layout: &HistoryLayout, rest: &str) -> bool {
        !format!("{}{rest}", layout.separator).starts_with(|c: char| c.is_ascii_digit())
    }

    proptest! {
        #[test]
        fn every_rendered_key_parses_back(
            (layout, slot) in layouts().prop_flat_map(|l| (Just(l), slot_for(&l))),
            rest in rest(),
        ) {
            prop_assume!(unambiguous(&layout, &rest));
            let key = layout.key(slot, &rest);
            prop_assert_eq!(layout.parse(&key), Some((slot, rest.as_str())));
        }

        /// Padded slots sort as numbers: for any two revisions over one rest, key order
        /// is slot order; the latest sorts before every revision and never lies inside
        /// the revision bounds; `begins_with` on the latest prefix matches no revision.
        #[test]
        fn padded_slots_sort_numerically(
            (layout, a, b) in layouts()
                .prop_filter("padded", |l| l.width > 0)
                .prop_flat_map(|l| (Just(l), slot_for(&l), slot_for(&l))),
            rest in rest(),
        ) {
            let (ka, kb) = (layout.key(a, &rest), layout.key(b, &rest));
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            let (low, high) = layout.revision_bounds(&rest);
            let latest = layout.latest(&rest);
            prop_assert!(latest < low);
            for (slot, key) in [(a, &ka), (b, &kb)] {
                let inside = low <= *key && *key <= high;
                prop_assert_eq!(inside, slot >= 1);
                let prefix = format!("{}{}{}", layout.prefix, "0".repeat(layout.width), layout.separator);
                prop_assert_eq!(key.starts_with(&prefix), slot == 0);
            }
        }

        /// Unpadded: the latest is outside the bounds and its prefix matches no revision;
        /// every revision lies inside.
        #[test]
        fn unpadded_bounds_hold_every_revision_and_never_the_latest(
            slot in 1u64..=u64::MAX,
            rest in rest(),
        ) {
            let (low, high) = UNPADDED.revision_bounds(&rest);
            let key = UNPADDED.key(slot, &rest);
            prop_assert!(low <= key && key <= high);
            let latest = UNPADDED.latest(&rest);
            prop_assert!(latest < low);
            prop_assert!(!key.starts_with("v0_"));
        }

        /// A key is a revision of a rest exactly when it was written for that rest at a
        /// slot above 0, whatever other rest shares the partition (and the bounds).
        #[test]
        fn a_revision_belongs_to_its_own_rest_only(
            (layout, slot) in layouts().prop_flat_map(|l| (Just(l), slot_for(&l))),
            written in rest(),
            other in rest(),
            same in any::<bool>(),
        ) {
            let asked = if same { written.clone() } else { other };
            prop_assume!(unambiguous(&layout, &written) && unambiguous(&layout, &asked));
            let key = layout.key(slot, &written);
            prop_assert_eq!(
                layout.is_revision_of(&key, &asked),
                slot > 0 && written == asked
            );
        }

        /// Nothing parses unless it is exactly what `render` writes for its parse.
        #[test]
        fn parse_accepts_only_rendered_keys(
            layout in layouts(),
            stored in "[vr]?[e]?[v]?[0-9]{0,22}[#_]?[A-Z#]{0,4}",
        ) {
            if let Some((slot, rest)) = layout.parse(&stored) {
                prop_assert_eq!(layout.key(slot, rest), stored);
            }
        }
    }
}
