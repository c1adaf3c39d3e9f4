//! Text forms shared by keys and attributes: zero-padded decimals, the fixed-width UTC
//! timestamp, DynamoDB's count of significant digits. A leaf: it depends on nothing else
//! of the crate, so `key` and `codec` both build on it without depending on each other.

/// Appends `v` as decimal, left-padded with zeros to `width` digits.
/// `width` must be at least the number of digits of `v` (at most 20).
pub(crate) fn push_padded_u64(out: &mut String, mut v: u64, width: usize) {
    let mut buf = [b'0'; 20];
    let mut i = buf.len();
    while v > 0 {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    debug_assert!(buf.len() - i <= width && width <= buf.len());
    out.extend(buf[buf.len() - width..].iter().map(|&b| char::from(b)));
}

/// The significant digits of a decimal integer or number string: what DynamoDB counts
/// against its limit of 38.
pub(crate) fn significant_digits(n: &str) -> usize {
    n.trim_start_matches('-')
        .trim_start_matches('0')
        .trim_end_matches('0')
        .len()
}

/// Appends `t` as fixed-width RFC 3339 UTC with nanoseconds
/// (`YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`), the form that sorts as the instants do; the reason
/// it cannot when its UTC year is outside 0000–9999.
#[cfg(feature = "time")]
pub(crate) fn push_utc_timestamp(
    t: &time::OffsetDateTime,
    out: &mut String,
) -> Result<(), &'static str> {
    let utc = t
        .checked_to_offset(time::UtcOffset::UTC)
        .filter(|utc| (0..=9999).contains(&utc.year()))
        .ok_or("the year in UTC must be between 0000 and 9999")?;
    // The year is in 0..=9999, hence non-negative.
    push_padded_u64(out, utc.year().unsigned_abs().into(), 4);
    out.push('-');
    push_padded_u64(out, u8::from(utc.month()).into(), 2);
    out.push('-');
    push_padded_u64(out, utc.day().into(), 2);
    out.push('T');
    push_padded_u64(out, utc.hour().into(), 2);
    out.push(':');
    push_padded_u64(out, utc.minute().into(), 2);
    out.push(':');
    push_padded_u64(out, utc.second().into(), 2);
    out.push('.');
    push_padded_u64(out, utc.nanosecond().into(), 9);
    out.push('Z');
    Ok(())
}
