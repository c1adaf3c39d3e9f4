//! Key delimiters: the character between the components of a rendered key, and how values
//! are escaped so that none contains it and keys keep sorting like their values.
//!
//! A table (`#[derive(Table)]`), an entity or one of its index templates
//! (`#[derive(Entity)]`) may declare `delimiter = "."`; the default is `#`. Every
//! delimiter keeps the guarantees of `#` (see [`KeyPart`](dynamo_model::KeyPart)):
//!
//! 1. no encoded value contains the delimiter, so a value can never forge a component
//!    boundary, and a whole-component prefix such as `A.1.` never matches `A.10.`;
//! 2. distinct values have distinct encodings, so distinct tuples of components render
//!    distinct keys;
//! 3. the byte order of keys is the order of their components' values, taken in order,
//!    also for a range on a component that more components follow: when one encoding is
//!    a proper prefix of another, the byte after it sorts above the delimiter.
//!
//! The price of rule 3 is paid by strings, which must escape every character up to the
//! delimiter: a string value is written with each character up to the delimiter's
//! *escape character* (the delimiter's successor, or `%` for `#`) as that escape character
//! and two uppercase hex digits, every other character as is. Values of fixed-width types
//! (integers, `bool`, dates, timestamps, UUIDs) are never a prefix of one another, so they
//! only need the delimiter itself (and the escape character) escaped, which keeps the
//! width of every encoding of a type the same:
//!
//! | delimiter | escape | characters escaped in strings | fixed-width types |
//! |-----------|--------|-------------------------------|-------------------|
//! | `#` (default) | `%` | U+0000 to `%`: controls, space, `!"#$%` | unchanged |
//! | `.` | `/` | U+0000 to `/`: also `&'()*+,-./` | `.` becomes `/2E` (the fraction point of a time: `12:30:00/2E000000000`) |
//! | `:` | `;` | U+0000 to `;`: also the digits, `:` and `;` | `:` becomes `;3A` (`12;3A30;3A00.000000000`) |
//! | `_` | `` ` `` | U+0000 to `` ` ``: also `<=>?@`, the uppercase letters, `[\]^_` and `` ` `` | unchanged |
//! | `\|` | `}` | U+0000 to `}`: every ASCII character but `~` and DEL | unchanged |
//!
//! ```text
//! value            #              .                 :                    _
//! "John Smith"     John%20Smith   John/20Smith      John;20Smith         `4Aohn`20`53mith
//! "v1.2"           v1.2           v1/2E2            v;31;2E;32           v`31`2E`32
//! 42u16            00042          00042             00042                00042
//! 2024-01-02 (Date) 2024-01-02    2024-01-02        2024-01-02           2024-01-02
//! ```
//!
//! Prefer `#` or `.` for keys with string components: with `_` or `|` most of an ASCII
//! string is escaped (three bytes per character, counted against DynamoDB's key size
//! limits), and with `:` every digit is. Fixed-width components (numbers, dates, shards)
//! read the same under every delimiter but `:` and `.` for times, which is what the
//! seeds' layouts (`2014-07-09.1`, `PENDING_2014-10-03`) need. Keys already written with
//! `#` read exactly as before: `#` is what every key used until now.

use crate::error::KeyError;
use std::borrow::Cow;

/// The character between the components of a rendered key: `#` (the default), `.`, `_`,
/// `|` or `:`. See the [module documentation](self) for what each escapes.
///
/// ```
/// use dynamo_model::key::{Delimiter, KeyPart};
///
/// let mut key = String::from("2014-07-09.");
/// 7u8.encode_key_with(Delimiter::DOT, &mut key)?;
/// assert_eq!(key, "2014-07-09.007");
///
/// let mut key = String::from("N.");
/// "John Smith".to_owned().encode_key_with(Delimiter::DOT, &mut key)?;
/// assert_eq!(key, "N.John/20Smith");
/// # Ok::<(), dynamo_model::key::KeyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Delimiter(u8);

/// What a component under one delimiter may not contain, for error messages.
struct Messages {
    delimiter: &'static str,
    unescaped: &'static str,
    bad_escape: &'static str,
    needless: &'static str,
}

impl Delimiter {
    /// `#`, the default: every key written before delimiters could be chosen uses it.
    pub const HASH: Delimiter = Delimiter(b'#');
    /// `.`, as in `2014-07-09.1`.
    pub const DOT: Delimiter = Delimiter(b'.');
    /// `_`, as in `PENDING_2014-10-03`.
    pub const UNDERSCORE: Delimiter = Delimiter(b'_');
    /// `|`.
    pub const PIPE: Delimiter = Delimiter(b'|');
    /// `:`.
    pub const COLON: Delimiter = Delimiter(b':');
    /// Every supported delimiter.
    pub const ALL: [Delimiter; 5] = [
        Delimiter::HASH,
        Delimiter::DOT,
        Delimiter::UNDERSCORE,
        Delimiter::PIPE,
        Delimiter::COLON,
    ];

    /// The delimiter `c`, if it is one of the supported ones.
    pub const fn new(c: char) -> Option<Delimiter> {
        match c {
            '#' => Some(Delimiter::HASH),
            '.' => Some(Delimiter::DOT),
            '_' => Some(Delimiter::UNDERSCORE),
            '|' => Some(Delimiter::PIPE),
            ':' => Some(Delimiter::COLON),
            _ => None,
        }
    }

    /// The delimiter as a character.
    pub const fn as_char(self) -> char {
        self.0 as char
    }

    /// The escape character: `%` for `#`, the character right after the delimiter for the
    /// others. It and every character below it are escaped in strings.
    pub const fn escape_char(self) -> char {
        self.escape() as char
    }

    const fn escape(self) -> u8 {
        match self.0 {
            b'#' => b'%',
            // The supported delimiters are ASCII below `~`: the successor is ASCII too.
            d => d + 1,
        }
    }

    /// The character right after the delimiter. The keys whose component equals `v` are
    /// exactly those between `v` + delimiter and `v` + this character: every extension of
    /// `v` continues with a byte above it (rule 3), and the delimiter is below it.
    pub(crate) const fn after(self) -> char {
        (self.0 + 1) as char
    }

    const fn messages(self) -> &'static Messages {
        match self.0 {
            b'.' => &Messages {
                delimiter: "contains an unescaped `.`",
                unescaped: "contains an unescaped character up to `/`",
                bad_escape: "`/` must be followed by two uppercase hex digits",
                needless: "escapes a character that is written as is",
            },
            b'_' => &Messages {
                delimiter: "contains an unescaped `_`",
                unescaped: "contains an unescaped character up to `` ` ``",
                bad_escape: "`` ` `` must be followed by two uppercase hex digits",
                needless: "escapes a character that is written as is",
            },
            b'|' => &Messages {
                delimiter: "contains an unescaped `|`",
                unescaped: "contains an unescaped character up to `}`",
                bad_escape: "`}` must be followed by two uppercase hex digits",
                needless: "escapes a character that is written as is",
            },
            b':' => &Messages {
                delimiter: "contains an unescaped `:`",
                unescaped: "contains an unescaped character up to `;`",
                bad_escape: "`;` must be followed by two uppercase hex digits",
                needless: "escapes a character that is written as is",
            },
            _ => &Messages {
                delimiter: "contains an unescaped `#`",
                unescaped: "contains an unescaped character up to `%`",
                bad_escape: "`%` must be followed by two uppercase hex digits",
                needless: "escapes a character that is written as is",
            },
        }
    }

    /// Whether a byte of a string value is escaped: the escape character and everything
    /// below it. They are ASCII, and no byte of a multi-byte UTF-8 character is below
    /// 0x80, so a byte scan finds exactly these characters.
    #[inline]
    fn escapes(self, byte: u8) -> bool {
        byte <= self.escape()
    }

    /// Escapes a raw string value as a `String` key part under this delimiter and appends
    /// it to `out`; used to build partial (prefix) keys. Under `#` this is
    /// [`escape_str`](dynamo_model::key::escape_str).
    ///
    /// The encoding of a prefix of a value is a prefix of the value's encoding (and only
    /// then), so `begins_with` on an escaped partial value is exact. The built-in escaping
    /// never fails; the `Result` leaves room for stricter rules.
    #[inline]
    pub fn escape_str(self, value: &str, out: &mut String) -> Result<(), KeyError> {
        // Most values need no escape under `#` and `.`: one branch-free pass (the compiler
        // vectorises it), then a single copy.
        if !value.bytes().fold(false, |any, b| any | self.escapes(b)) {
            out.push_str(value);
            return Ok(());
        }
        out.reserve(value.len());
        self.push_escaped(value, |b| self.escapes(b), out);
        Ok(())
    }

    /// Appends `text` to `out` with each byte `escapes` picks (all ASCII) written as the
    /// escape character and two uppercase hex digits.
    fn push_escaped(self, text: &str, escapes: impl Fn(u8) -> bool, out: &mut String) {
        let mut rest = text;
        while let Some(i) = rest.bytes().position(&escapes) {
            out.push_str(&rest[..i]);
            push_escape(self.escape(), rest.as_bytes()[i], out);
            // The escaped byte is ASCII, so the next index is a char boundary.
            rest = &rest[i + 1..];
        }
        out.push_str(rest);
    }

    /// Reads a component [`escape_str`](Self::escape_str) wrote, strictly: a character
    /// it escapes written as is, an escape it does not write, or one of a character it
    /// writes as is, is [`KeyError::Malformed`] (for `type_name`).
    pub(crate) fn unescape_str(
        self,
        component: &str,
        type_name: &'static str,
    ) -> Result<String, KeyError> {
        self.unescaped(component, |b| self.escapes(b))
            .map_err(|reason| KeyError::Malformed {
                type_name,
                input: component.to_owned(),
                reason,
            })
    }

    /// Reads back text [`push_escaped`](Self::push_escaped) wrote for `escapes`, strictly:
    /// a byte `escapes` picks written as is, an escape not followed by two uppercase hex
    /// digits, or the escape of a byte it does not pick (only what it writes is accepted),
    /// is refused, with the reason.
    fn unescaped(
        self,
        component: &str,
        escapes: impl Fn(u8) -> bool,
    ) -> Result<String, &'static str> {
        let messages = self.messages();
        let escape = self.escape();
        let mut value = String::with_capacity(component.len());
        let mut rest = component;
        while let Some(i) = rest.bytes().position(&escapes) {
            value.push_str(&rest[..i]);
            let bytes = rest.as_bytes();
            match bytes[i] {
                b if b == escape => {}
                b if b == self.0 => return Err(messages.delimiter),
                _ => return Err(messages.unescaped),
            }
            let escaped = hex_pair(bytes.get(i + 1..i + 3)).ok_or(messages.bad_escape)?;
            if !escapes(escaped) {
                return Err(messages.needless);
            }
            value.push(char::from(escaped));
            // The escape is three ASCII bytes, so this is a char boundary.
            rest = &rest[i + 3..];
        }
        value.push_str(rest);
        Ok(value)
    }

    /// Whether a byte of a fixed-width encoding is escaped: the delimiter and the escape
    /// character (`#` never needs it: `#`-encodings never contain `#`).
    #[inline]
    fn escapes_fixed(self, byte: u8) -> bool {
        self != Delimiter::HASH && (byte == self.0 || byte == self.escape())
    }

    /// Escapes, in the text `out` holds from `start` on (the `#`-encoding of a value of a
    /// fixed-width type, or of its partial value), the delimiter and the escape character,
    /// each as the escape character and two uppercase hex digits.
    ///
    /// For encodings of which none is a proper prefix of another, this keeps every rule:
    /// no delimiter is left; the escaped bytes are adjacent (the delimiter and its
    /// successor), so each escape sorts where the byte it replaces did, and the escape is
    /// a prefix code, so distinct encodings stay distinct and none becomes a proper prefix
    /// of another. A separator such as the `:` of a time is escaped at the same position
    /// in every value, so all the values of a type keep one width.
    pub(crate) fn escape_fixed_tail(self, out: &mut String, start: usize) {
        let Some(tail) = out.get(start..) else {
            return;
        };
        if !tail.bytes().any(|b| self.escapes_fixed(b)) {
            return;
        }
        let text = out.split_off(start);
        self.push_escaped(&text, |b| self.escapes_fixed(b), out);
    }

    /// Reads back the `#`-encoding [`escape_fixed_tail`](Self::escape_fixed_tail) escaped,
    /// strictly: a raw delimiter, or an escape of anything but the delimiter or the escape
    /// character, is refused (with the reason).
    pub(crate) fn unescape_fixed(self, component: &str) -> Result<Cow<'_, str>, &'static str> {
        if self == Delimiter::HASH || !component.bytes().any(|b| self.escapes_fixed(b)) {
            return Ok(Cow::Borrowed(component));
        }
        self.unescaped(component, |b| self.escapes_fixed(b))
            .map(Cow::Owned)
    }

    /// Splits a full key into its components at this delimiter. Encoded values never
    /// contain it, so every occurrence is a boundary; escapes stay inside the returned
    /// slices, for [`KeyPart::decode_key_with`](dynamo_model::KeyPart::decode_key_with).
    pub fn split(self, key: &str) -> impl Iterator<Item = &str> {
        key.split(self.as_char())
    }

    /// Splits the component at the start of `rest` (the text of a rendered key from a
    /// field's position on) from what follows it: a component ends at the next delimiter
    /// or at the end of the key, since no encoding contains the delimiter and templates
    /// follow every field with the end or with a literal starting with it.
    ///
    /// The one place that decides where a field's component ends, for reading fields back
    /// from keys and for telling which templates can have rendered a key.
    pub(crate) fn split_component(self, rest: &str) -> (&str, &str) {
        rest.split_at(rest.find(self.as_char()).unwrap_or(rest.len()))
    }
}

impl Default for Delimiter {
    fn default() -> Self {
        Delimiter::HASH
    }
}

impl std::fmt::Display for Delimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.as_char())
    }
}

/// Uppercase hex digits: `0`-`9` sort below `A`-`F`, so the escapes sort by value.
const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `escape` and the two uppercase hex digits of `byte`.
fn push_escape(escape: u8, byte: u8, out: &mut String) {
    out.push(char::from(escape));
    out.push(char::from(HEX[usize::from(byte >> 4)]));
    out.push(char::from(HEX[usize::from(byte & 0x0F)]));
}

/// The byte two uppercase hex digits write (lowercase is not produced, so not accepted).
fn hex_pair(digits: Option<&[u8]>) -> Option<u8> {
    let value = |digit: u8| match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    };
    match digits? {
        [high, low] => Some(value(*high)? << 4 | value(*low)?),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyPart;

    fn enc<T: KeyPart>(value: &T, d: Delimiter) -> String {
        let mut out = String::new();
        value.encode_key_with(d, &mut out).expect("encodable");
        out
    }

    /// The examples of the module documentation.
    #[test]
    fn documented_examples() {
        let (hash, dot, colon, underscore) = (
            Delimiter::HASH,
            Delimiter::DOT,
            Delimiter::COLON,
            Delimiter::UNDERSCORE,
        );
        let name = "John Smith".to_owned();
        assert_eq!(enc(&name, hash), "John%20Smith");
        assert_eq!(enc(&name, dot), "John/20Smith");
        assert_eq!(enc(&name, colon), "John;20Smith");
        assert_eq!(enc(&name, underscore), "`4Aohn`20`53mith");
        let version = "v1.2".to_owned();
        assert_eq!(enc(&version, hash), "v1.2");
        assert_eq!(enc(&version, dot), "v1/2E2");
        assert_eq!(enc(&version, colon), "v;31;2E;32");
        assert_eq!(enc(&version, underscore), "v`31`2E`32");
        for d in Delimiter::ALL {
            assert_eq!(enc(&42u16, d), "00042");
        }
        // Under `|` every ASCII character but `~` and DEL is escaped.
        assert_eq!(enc(&"a~\u{7f}é".to_owned(), Delimiter::PIPE), "}61~\u{7f}é");
    }

    #[test]
    fn delimiters_and_their_escape_characters() {
        let table: Vec<(char, char, char)> = Delimiter::ALL
            .iter()
            .map(|d| (d.as_char(), d.escape_char(), d.after()))
            .collect();
        assert_eq!(
            table,
            [
                ('#', '%', '$'),
                ('.', '/', '/'),
                ('_', '`', '`'),
                ('|', '}', '}'),
                (':', ';', ';'),
            ]
        );
        for d in Delimiter::ALL {
            assert_eq!(Delimiter::new(d.as_char()), Some(d));
            assert_eq!(d.to_string(), d.as_char().to_string());
        }
        for c in ['-', '/', '%', ' ', 'a', '\0', '~', '#', '\u{2E}'] {
            assert_eq!(Delimiter::new(c).is_some(), matches!(c, '#' | '.'), "{c:?}");
        }
        assert_eq!(Delimiter::default(), Delimiter::HASH);
    }

    /// Strict decoding, and the message of each refusal, under each delimiter.
    #[test]
    fn strings_decode_only_what_they_encode() {
        let refused = |d: Delimiter, input: &str| match d.unescape_str(input, "String") {
            Err(KeyError::Malformed { reason, .. }) => reason,
            other => panic!("{d} {input:?}: {other:?}"),
        };
        for (d, input, reason) in [
            (Delimiter::DOT, "a.b", "contains an unescaped `.`"),
            (
                Delimiter::DOT,
                "a-b",
                "contains an unescaped character up to `/`",
            ),
            (
                Delimiter::DOT,
                "a/2",
                "`/` must be followed by two uppercase hex digits",
            ),
            (
                Delimiter::DOT,
                "a/2e",
                "`/` must be followed by two uppercase hex digits",
            ),
            (
                Delimiter::DOT,
                "a/30",
                "escapes a character that is written as is",
            ),
            (
                Delimiter::UNDERSCORE,
                "A",
                "contains an unescaped character up to `` ` ``",
            ),
            (Delimiter::UNDERSCORE, "_", "contains an unescaped `_`"),
            (
                Delimiter::PIPE,
                "}7",
                "`}` must be followed by two uppercase hex digits",
            ),
            (
                Delimiter::PIPE,
                "}7E",
                "escapes a character that is written as is",
            ),
            (
                Delimiter::COLON,
                "1",
                "contains an unescaped character up to `;`",
            ),
            (Delimiter::HASH, "a#b", "contains an unescaped `#`"),
        ] {
            assert_eq!(refused(d, input), reason, "{d} {input:?}");
        }
        assert_eq!(
            Delimiter::UNDERSCORE.unescape_str("`5F`60a", "String"),
            Ok("_`a".into())
        );
        assert_eq!(
            Delimiter::PIPE.unescape_str("}7C}7D~", "String"),
            Ok("|}~".into())
        );
    }

    #[test]
    fn fixed_width_escapes() {
        let escaped = |d: Delimiter, text: &str| {
            let mut out = String::from("x");
            out.push_str(text);
            d.escape_fixed_tail(&mut out, 1);
            out
        };
        assert_eq!(escaped(Delimiter::DOT, "1.2/3"), "x1/2E2/2F3");
        assert_eq!(escaped(Delimiter::COLON, "10:11;"), "x10;3A11;3B");
        assert_eq!(escaped(Delimiter::HASH, "1.2:3"), "x1.2:3");
        assert_eq!(escaped(Delimiter::PIPE, "plain"), "xplain");
        assert_eq!(
            Delimiter::DOT.unescape_fixed("1/2E2/2F3").as_deref(),
            Ok("1.2/3")
        );
        for bad in ["1.2", "1/2", "1/30", "1/2e", "1/"] {
            assert!(Delimiter::DOT.unescape_fixed(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Delimiter::HASH.unescape_fixed("a/b").as_deref(), Ok("a/b"));
    }
}
