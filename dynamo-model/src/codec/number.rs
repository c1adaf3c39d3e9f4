//! DynamoDB numbers: which decimal texts DynamoDB stores (at most 38 significant digits,
//! magnitudes from 1e-130 to below 1e126), and when two texts are the same number.

use super::EncodeError;
use aws_sdk_dynamodb::types::AttributeValue;

/// Checks every number in an attribute value, nested maps, lists and number sets included.
pub(super) fn check_numbers(av: &AttributeValue) -> Result<(), EncodeError> {
    match av {
        AttributeValue::N(n) => check_number(n),
        AttributeValue::Ns(ns) => ns.iter().try_for_each(|n| check_number(n)),
        AttributeValue::L(list) => list.iter().try_for_each(check_numbers),
        AttributeValue::M(map) => map.values().try_for_each(check_numbers),
        _ => Ok(()),
    }
}

/// Whether `n` is a number DynamoDB stores: decimal (an optional `-`, digits with an
/// optional `.`, an optional exponent), at most 38 significant digits, and zero or a
/// magnitude from 1e-130 up to, not including, 1e126.
pub(crate) fn check_number(n: &str) -> Result<(), EncodeError> {
    let refuse = |why: &str| Err(EncodeError::number(format!("{n} {why}")));
    let Some(decimal) = Decimal::parse(n.strip_prefix('-').unwrap_or(n)) else {
        return refuse("is not a decimal number");
    };
    let Some((digits, magnitude)) = decimal.significant() else {
        return Ok(()); // zero
    };
    if digits.len() > 38 {
        return refuse("has more than the 38 significant digits a DynamoDB number holds");
    }
    // An exponent past i64 is out of range too.
    if !magnitude.is_some_and(|m| (-130..=125).contains(&m)) {
        return refuse(
            "is outside the range of a DynamoDB number (magnitude 1e-130 to below 1e126)",
        );
    }
    Ok(())
}

/// An unsigned decimal text taken apart: its digits before and after the point, and
/// its exponent.
struct Decimal<'a> {
    int: &'a str,
    frac: &'a str,
    exponent: i64,
}

impl<'a> Decimal<'a> {
    /// Digits with an optional `.`, an optional exponent; `None` for anything else.
    fn parse(unsigned: &'a str) -> Option<Self> {
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(i) => (&unsigned[..i], unsigned[i + 1..].parse::<i64>().ok()?),
            None => (unsigned, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
        (int.len() + frac.len() > 0 && digits(int) && digits(frac)).then_some(Decimal {
            int,
            frac,
            exponent,
        })
    }

    /// The significant digits and the power of ten of the first of them (`None` when it
    /// is past `i64`); `None` for zero.
    fn significant(&self) -> Option<(String, Option<i64>)> {
        let digits = format!("{}{}", self.int, self.frac);
        let first = digits.bytes().position(|b| b != b'0')?;
        let last = digits.bytes().rposition(|b| b != b'0').unwrap_or(first);
        let magnitude = self
            .exponent
            .checked_add(self.int.len() as i64)
            .and_then(|m| m.checked_sub(1 + first as i64));
        Some((digits[first..=last].to_owned(), magnitude))
    }
}

/// Whether two decimal texts are the same number (significant digits, sign and
/// magnitude compared, so `1.50`, `1.5` and `15E-1` are one number).
pub(crate) fn same_number(a: &str, b: &str) -> bool {
    matches!((number_value(a), number_value(b)), (Some(x), Some(y)) if x == y)
}

/// A decimal text as the number it spells: sign, significant digits and the power of
/// ten of the first of them (zero has no sign); `None` if it is not a decimal number.
pub(crate) fn number_value(n: &str) -> Option<(bool, String, i64)> {
    let (negative, unsigned) = match n.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, n.strip_prefix('+').unwrap_or(n)),
    };
    match Decimal::parse(unsigned)?.significant() {
        None => Some((false, String::new(), 0)), // zero, whatever its sign
        Some((digits, magnitude)) => Some((negative, digits, magnitude?)),
    }
}
