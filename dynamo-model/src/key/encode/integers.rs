//! Integers as key parts: unsigned ones zero-padded to their type's width, signed ones
//! offset to unsigned and padded (so byte order is numeric order); `usize` and `isize` as
//! their 64-bit forms.
use super::*;

/// Like [`push_padded_u64`] for `u128` (width at most 39).
fn push_padded_u128(out: &mut String, v: u128, width: usize) {
    const TEN_TO_19: u128 = 10_000_000_000_000_000_000;
    // Fast path: avoid 128-bit division for values that fit in a u64.
    match u64::try_from(v) {
        Ok(small) if width <= 20 => push_padded_u64(out, small, width),
        Ok(small) => {
            out.extend(std::iter::repeat_n('0', width - 20));
            push_padded_u64(out, small, 20);
        }
        // More than 19 digits: the leading ones, then the last 19 (which fit in a u64).
        Err(_) => {
            push_padded_u128(out, v / TEN_TO_19, width - 19);
            push_padded_u64(out, (v % TEN_TO_19) as u64, 19);
        }
    }
}

/// Parses exactly `width` ASCII digits (no sign) into `U`.
fn parse_fixed<U: std::str::FromStr>(
    digits: &str,
    width: usize,
    type_name: &'static str,
    input: &str,
) -> Result<U, KeyError> {
    if digits.len() != width {
        return Err(malformed(type_name, input, "wrong number of digits"));
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed(type_name, input, "expected only ASCII digits"));
    }
    digits
        .parse()
        .map_err(|_| malformed(type_name, input, "value out of range"))
}

/// Zero-padded widths (number of decimal digits of `MAX`).
pub(super) mod width {
    pub const U8: usize = 3;
    pub const U16: usize = 5;
    pub const U32: usize = 10;
    pub const U64: usize = 20;
    pub const U128: usize = 39;
    pub const I8: usize = 3;
    pub const I16: usize = 5;
    pub const I32: usize = 10;
    pub const I64: usize = 19;
    pub const I128: usize = 39;
}

/// Key fields are stored as number attributes too, and a DynamoDB number holds at most 38
/// significant digits: only 128-bit integers can have more (`u128::MAX` has 39). Keys
/// refuse what the item could not store, so an entity is never keyable but unstorable.
fn storable<T: Copy + std::fmt::Display>(
    value: &T,
    type_name: &'static str,
) -> Result<(), KeyError> {
    if std::mem::size_of::<T>() <= 8 {
        return Ok(());
    }
    let digits = value.to_string();
    if significant_digits(&digits) > 38 {
        return Err(KeyError::OutOfRange {
            type_name,
            value: digits,
            reason: "a DynamoDB number holds at most 38 significant digits",
        });
    }
    Ok(())
}

macro_rules! impl_unsigned {
    ($($t:ident => $wide:ident, $push:ident, $width:expr;)*) => {$(
        impl KeyPart for $t {
            fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
                storable(self, stringify!($t))?;
                $push(out, <$wide>::from(*self), $width);
                Ok(())
            }

            fn decode_key(component: &str) -> Result<Self, KeyError> {
                let value = parse_fixed::<$t>(component, $width, stringify!($t), component)?;
                storable(&value, stringify!($t))
                    .map_err(|_| malformed(stringify!($t), component, "more than 38 significant digits"))?;
                Ok(value)
            }

            prefix_free_delimited!(stringify!($t));
        }
    )*};
}

impl_unsigned! {
    u8 => u64, push_padded_u64, width::U8;
    u16 => u64, push_padded_u64, width::U16;
    u32 => u64, push_padded_u64, width::U32;
    u64 => u64, push_padded_u64, width::U64;
    u128 => u128, push_padded_u128, width::U128;
}

macro_rules! impl_signed {
    ($($t:ident => $unsigned:ident, $wide:ident, $push:ident, $width:expr;)*) => {$(
        impl KeyPart for $t {
            fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
                storable(self, stringify!($t))?;
                let magnitude: $unsigned = if *self < 0 {
                    out.push('-');
                    // v - MIN, in 0..=MAX for negative v; cannot overflow.
                    self.abs_diff(<$t>::MIN)
                } else {
                    self.unsigned_abs()
                };
                $push(out, <$wide>::from(magnitude), $width);
                Ok(())
            }

            fn decode_key(component: &str) -> Result<Self, KeyError> {
                const NAME: &str = stringify!($t);
                let (negative, digits) = match component.strip_prefix('-') {
                    Some(digits) => (true, digits),
                    None => (false, component),
                };
                let magnitude: $unsigned = parse_fixed(digits, $width, NAME, component)?;
                // Both forms carry a magnitude in 0..=MAX.
                let magnitude = <$t>::try_from(magnitude)
                    .map_err(|_| malformed(NAME, component, "value out of range"))?;
                let value = if negative {
                    <$t>::MIN + magnitude
                } else {
                    magnitude
                };
                storable(&value, NAME)
                    .map_err(|_| malformed(NAME, component, "more than 38 significant digits"))?;
                Ok(value)
            }

            prefix_free_delimited!(stringify!($t));
        }
    )*};
}

impl_signed! {
    i8 => u8, u64, push_padded_u64, width::I8;
    i16 => u16, u64, push_padded_u64, width::I16;
    i32 => u32, u64, push_padded_u64, width::I32;
    i64 => u64, u64, push_padded_u64, width::I64;
    i128 => u128, u128, push_padded_u128, width::I128;
}

/// A pointer-sized `value` as the 64-bit type its keys are written as.
fn widened<V: Copy + std::fmt::Display, W: TryFrom<V>>(
    value: V,
    type_name: &'static str,
    reason: &'static str,
) -> Result<W, KeyError> {
    W::try_from(value).map_err(|_| KeyError::OutOfRange {
        type_name,
        value: value.to_string(),
        reason,
    })
}

/// Encoded as `u64`, so keys do not depend on the platform's pointer width.
impl KeyPart for usize {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        widened::<_, u64>(*self, "usize", "does not fit in u64")?.encode_key(out)
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        let value: u64 = parse_fixed(component, width::U64, "usize", component)?;
        usize::try_from(value).map_err(|_| malformed("usize", component, "value out of range"))
    }

    prefix_free_delimited!("usize");
}

/// Encoded as `i64`, so keys do not depend on the platform's pointer width.
impl KeyPart for isize {
    fn encode_key(&self, out: &mut String) -> Result<(), KeyError> {
        widened::<_, i64>(*self, "isize", "does not fit in i64")?.encode_key(out)
    }

    fn decode_key(component: &str) -> Result<Self, KeyError> {
        let value = i64::decode_key(component).map_err(|error| match error {
            KeyError::Malformed { input, reason, .. } => KeyError::Malformed {
                type_name: "isize",
                input,
                reason,
            },
            other => other,
        })?;
        isize::try_from(value).map_err(|_| malformed("isize", component, "value out of range"))
    }

    prefix_free_delimited!("isize");
}
