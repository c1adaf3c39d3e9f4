//! Rendering a [`KeyTemplate`] from values: the one renderer behind every key an entity
//! writes (its primary key and index keys) and every key and partition its constructors
//! build. The generated code passes one [`RenderPart`] per placeholder, in order; the
//! template gives the literal text around them.
//!
//! Each value is a [`Part`], made by a function whose bounds say what the placeholder
//! takes ([`field`], [`present`], [`arg`], ...): a field of a type it cannot take is
//! reported once, at the call the derive spans on the field's type.

use super::computed::__private::{
    push_bucket, push_bucket_arg, push_bucket_optional, push_random_shard,
};
use super::computed::{
    BucketArg, BucketTime, OptionalBucketTime, ShardValue, TimeBucket, push_hashed,
};
use super::encode::part::part;
pub use super::encode::part::{Part, RenderPart, field, present};
use super::format::{KeyFormat, encode_optional};
use super::template::KeyTemplate;
use super::{Delimiter, KeyArg, KeyError, OptionalKeyPart};

impl KeyTemplate {
    /// Appends the template with `values` in its placeholders to `out`; `Ok(false)` when
    /// a value is absent (what is appended is then meaningless).
    pub fn render(&self, values: &[&dyn RenderPart], out: &mut String) -> Result<bool, KeyError> {
        let mut values = values.iter();
        let rendered = self.render_next(&mut values, out)?;
        debug_assert!(
            !rendered || values.next().is_none(),
            "a value without its placeholder"
        );
        Ok(rendered)
    }

    /// Appends the template to `out` with the next values of `values`, one per
    /// placeholder; `Ok(false)` when a value is absent.
    #[inline]
    fn render_next(
        &self,
        values: &mut std::slice::Iter<'_, &dyn RenderPart>,
        out: &mut String,
    ) -> Result<bool, KeyError> {
        for part in self.parts {
            match part {
                Some(literal) => out.push_str(literal),
                None => {
                    let value = values.next();
                    debug_assert!(value.is_some(), "a placeholder without its value");
                    if let Some(value) = value
                        && !value.render_part(self.delimiter, out)?
                    {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }

    /// Appends a primary key: this (partition-key) template to `pk` and the sort-key
    /// template `sk` (when the entity has one) to `sk_out`, with `values` in their
    /// placeholders, the partition key's first (values that are always present: the
    /// item's key fields, a key constructor's arguments).
    pub fn render_primary(
        &self,
        sk: Option<&KeyTemplate>,
        values: &[&dyn RenderPart],
        pk: &mut String,
        sk_out: &mut String,
    ) -> Result<(), KeyError> {
        let mut values = values.iter();
        self.render_next(&mut values, pk)?;
        if let Some(sk) = sk {
            sk.render_next(&mut values, sk_out)?;
        }
        debug_assert!(values.next().is_none(), "a value without its placeholder");
        Ok(())
    }

    /// Appends the template to `out` with values that are always present (a primary key,
    /// a key or partition constructor's arguments).
    pub fn render_key(&self, values: &[&dyn RenderPart], out: &mut String) -> Result<(), KeyError> {
        self.render(values, out).map(drop)
    }

    /// Renders the template around placeholder `shard` (a shard, which a sharded
    /// partition lists): the text before it into `head`, after it into `tail`. `values`
    /// are the other placeholders', in order.
    pub fn render_around(
        &self,
        shard: usize,
        values: &[&dyn RenderPart],
        head: &mut String,
        tail: &mut String,
    ) -> Result<(), KeyError> {
        let at = self
            .parts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_none())
            .nth(shard)
            .map_or(self.parts.len(), |(at, _)| at);
        let (before, after) = self.parts.split_at(at);
        let (head_values, tail_values) = values.split_at(
            before
                .iter()
                .filter(|p| p.is_none())
                .count()
                .min(values.len()),
        );
        KeyTemplate {
            parts: before,
            ..*self
        }
        .render_key(head_values, head)?;
        let after = after.get(1..).unwrap_or_default();
        KeyTemplate {
            parts: after,
            ..*self
        }
        .render_key(tail_values, tail)
    }
}

/// An index key field of the item with key format `F`, which may be absent.
pub fn formatted_present<T: OptionalKeyPart, F: KeyFormat<T::Part>>(value: &T) -> Part<'_, T> {
    part(value, |v, _, d, out| encode_optional::<T, F>(v, d, out))
}

/// An argument given for a key field of type `T` (`T`, `&T`, `&str` for `String`), or a
/// field of the item in its key format (`T` is then `Formatted<..>`).
pub fn arg<T, A: KeyArg<T>>(value: &A) -> Part<'_, A> {
    part(value, |v, _, d, out| {
        v.encode_key_arg(d, out).map(|()| true)
    })
}

/// `{field:random(N)}`: the shard the value holds, of `count`.
pub fn random<T: ShardValue + ?Sized>(value: &T, count: u16) -> Part<'_, T> {
    Part {
        value,
        count,
        render: |v, count, _, out| push_random_shard(v, count, out).map(|()| true),
    }
}

/// `{field:date}` (`hour`, `month`) of a field of the item.
pub fn bucket<B: TimeBucket, T: BucketTime + ?Sized>(value: &T) -> Part<'_, T> {
    part(value, |v, _, _, out| {
        push_bucket::<B, T>(v, out).map(|()| true)
    })
}

/// `{field:date}` (`hour`, `month`) of a constructor argument: the bucket itself or a
/// time inside it.
pub fn bucket_of<B: TimeBucket, A: BucketArg<B>>(value: &A) -> Part<'_, A> {
    part(value, |v, _, _, out| {
        push_bucket_arg::<B, A>(v, out).map(|()| true)
    })
}

/// `{field:date}` (`hour`, `month`) of an index key field, which may be absent.
pub fn present_bucket<B: TimeBucket, T: OptionalBucketTime>(value: &T) -> Part<'_, T> {
    part(value, |v, _, _, out| push_bucket_optional::<B, T>(v, out))
}

/// `{field:shard(N)}`: the shard of the value's `#`-encoding, whatever the template's
/// delimiter (pinned vectors).
pub struct Shard<'a>(pub &'a dyn RenderPart, pub u16);

impl RenderPart for Shard<'_> {
    fn render_part(&self, _: Delimiter, out: &mut String) -> Result<bool, KeyError> {
        push_hashed(self.1, out, |out| self.0.render_part(Delimiter::HASH, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::KeyPart;
    use proptest::prelude::*;

    const SK: KeyTemplate = KeyTemplate::new(
        true,
        &[Some("ORDER#"), None, Some("#"), None, Some("#"), None],
        Delimiter::HASH,
    );

    fn rendered(t: &KeyTemplate, values: &[&dyn RenderPart]) -> Result<Option<String>, KeyError> {
        let mut out = String::new();
        Ok(t.render(values, &mut out)?.then_some(out))
    }

    #[test]
    fn literals_and_values_alternate_in_template_order() {
        let (at, region, id) = (7u64, "eu#1".to_string(), "o-1");
        let out = rendered(&SK, &[&field(&at), &field(&region), &arg::<String, _>(&id)]);
        assert_eq!(
            out.unwrap().as_deref(),
            Some("ORDER#00000000000000000007#eu%231#o-1")
        );
    }

    #[test]
    fn each_value_is_encoded_for_the_template_delimiter() {
        let t = KeyTemplate::new(false, &[Some("A|"), None, Some("|"), None], Delimiter::PIPE);
        let (a, b) = ("x|y".to_string(), "z".to_string());
        let mut out = String::new();
        t.render_key(&[&field(&a), &field(&b)], &mut out).unwrap();
        let mut expected = String::from("A|");
        a.encode_key_with(Delimiter::PIPE, &mut expected).unwrap();
        expected.push('|');
        b.encode_key_with(Delimiter::PIPE, &mut expected).unwrap();
        assert_eq!(out, expected);
        // Not the `#`-encoding: the template's delimiter reached the values.
        assert_ne!(out, "A|x|y|z");
    }

    #[test]
    fn an_absent_index_value_leaves_the_item_out() {
        let t = KeyTemplate::new(false, &[Some("STATUS#"), None], Delimiter::HASH);
        let (absent, open) = (None::<String>, Some("open".to_string()));
        assert_eq!(rendered(&t, &[&present(&absent)]).unwrap(), None);
        assert_eq!(
            rendered(&t, &[&present(&open)]).unwrap().as_deref(),
            Some("STATUS#open")
        );
    }

    #[cfg(feature = "time")]
    #[test]
    fn a_bucket_renders_the_period_holding_the_time() {
        use crate::key::computed::{DayBucket, TimeBucket};
        let t = KeyTemplate::new(false, &[Some("DAY#"), None], Delimiter::HASH);
        let at = time::macros::datetime!(2014-07-10 23:59:59 UTC);
        assert_eq!(
            rendered(&t, &[&bucket::<DayBucket, _>(&at)])
                .unwrap()
                .as_deref(),
            Some("DAY#2014-07-10")
        );
        let day = DayBucket::of(&at).unwrap();
        assert_eq!(
            rendered(&t, &[&bucket_of::<DayBucket, _>(&day)])
                .unwrap()
                .as_deref(),
            Some("DAY#2014-07-10")
        );
    }

    #[test]
    fn a_sharded_template_renders_around_its_shard() {
        let t = KeyTemplate::new(
            false,
            &[Some("EVT#"), None, Some("#"), None, Some("#"), None],
            Delimiter::HASH,
        );
        let (kind, day) = ("click".to_string(), 3u8);
        let (mut head, mut tail) = (String::new(), String::new());
        t.render_around(1, &[&field(&kind), &field(&day)], &mut head, &mut tail)
            .unwrap();
        assert_eq!((head.as_str(), tail.as_str()), ("EVT#click#", "#003"));
        let (mut head, mut tail) = (String::new(), String::new());
        t.render_around(2, &[&field(&kind), &field(&day)], &mut head, &mut tail)
            .unwrap();
        assert_eq!((head.as_str(), tail.as_str()), ("EVT#click#003#", ""));
    }

    #[test]
    fn random_renders_the_shard_the_value_holds() {
        let t = KeyTemplate::new(false, &[Some("P#"), None], Delimiter::HASH);
        assert_eq!(
            rendered(&t, &[&random(&7u16, 10)]).unwrap().as_deref(),
            Some("P#7")
        );
        assert!(rendered(&t, &[&random(&10u16, 10)]).is_err());
    }

    proptest! {
        /// The renderer writes exactly what appending each literal and each value's own
        /// encoding in turn writes.
        #[test]
        fn rendering_is_the_concatenation(
            lead in "[A-Z]{0,6}#?",
            a in "\\PC{0,10}",
            b in any::<i64>(),
            c in "\\PC{0,10}",
        ) {
            let parts = [Some(lead.as_str()), None, Some("#"), None, Some("#"), None];
            let parts: &'static [Option<&'static str>] = Box::leak(Box::new(parts.map(|p| {
                p.map(|s| &*Box::leak(s.to_owned().into_boxed_str()))
            })));
            let t = KeyTemplate::new(true, parts, Delimiter::HASH);
            let mut expected = lead.clone();
            a.encode_key(&mut expected).unwrap();
            expected.push('#');
            b.encode_key(&mut expected).unwrap();
            expected.push('#');
            c.encode_key(&mut expected).unwrap();
            let out = rendered(&t, &[&field(&a), &field(&b), &field(&c)]).unwrap();
            prop_assert_eq!(out, Some(expected));
        }
    }
}
