//! Structured inputs from fuzz bytes: a small interpreter that reads attribute values,
//! texts and numbers off the front of the input, so every byte string is some input and
//! a mutation of a byte changes one value.

use dynamo_model::Item;
use dynamo_model::aws_sdk_dynamodb::primitives::Blob;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;

/// Levels of maps and lists one value may nest: past DynamoDB's 32, so deep nesting is
/// reached, and bounded, so an input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 40;
/// Values one input may build (each map entry, list element and set member counts).
const MAX_VALUES: usize = 2048;

/// The unread rest of a fuzz input.
pub struct Input<'a> {
    rest: &'a [u8],
    values: usize,
}

impl<'a> Input<'a> {
    /// An input reading `data` from its first byte.
    pub fn new(data: &'a [u8]) -> Self {
        Input {
            rest: data,
            values: 0,
        }
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next byte (0 once the input is exhausted).
    pub fn byte(&mut self) -> u8 {
        match self.rest.split_first() {
            Some((&b, rest)) => {
                self.rest = rest;
                b
            }
            None => 0,
        }
    }

    /// The next `n` bytes, or fewer at the end.
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.rest.split_at(n.min(self.rest.len()));
        self.rest = tail;
        head
    }

    /// The rest of the input.
    pub fn rest(&mut self) -> &'a [u8] {
        self.bytes(self.rest.len())
    }

    /// A length-prefixed text (one byte of length), invalid UTF-8 replaced.
    pub fn text(&mut self) -> String {
        let n = usize::from(self.byte());
        String::from_utf8_lossy(self.bytes(n)).into_owned()
    }

    /// Length-prefixed bytes (one byte of length).
    pub fn blob(&mut self) -> Blob {
        let n = usize::from(self.byte());
        Blob::new(self.bytes(n))
    }

    /// A name: one of `known` (most of the time), else a text of its own.
    pub fn name(&mut self, known: &[&str]) -> String {
        let b = usize::from(self.byte());
        match known.get(b) {
            Some(name) => (*name).to_owned(),
            None if b == 255 => self.text(),
            None => known
                .get(b % known.len().max(1))
                .map_or_else(String::new, |n| (*n).to_owned()),
        }
    }

    /// A number's text: digits drawn from the input, or a text of its own (anything
    /// DynamoDB might be claimed to have sent).
    pub fn number(&mut self) -> String {
        match self.byte() % 4 {
            0 => i64::from_le_bytes(self.array()).to_string(),
            1 => u64::from_le_bytes(self.array()).to_string(),
            2 => format!("{}e{}", i64::from_le_bytes(self.array()), self.byte() as i8),
            _ => self.text(),
        }
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for b in &mut out {
            *b = self.byte();
        }
        out
    }

    /// Whether another value may be built (each call counts one).
    fn budget(&mut self) -> bool {
        self.values += 1;
        self.values <= MAX_VALUES && !self.rest.is_empty()
    }

    /// An attribute value of any type, maps and lists nested up to `depth` levels, with
    /// attribute names from `names`.
    pub fn value(&mut self, names: &[&str], depth: usize) -> AttributeValue {
        let tag = self.byte();
        let nest = depth < MAX_DEPTH;
        match tag % 10 {
            0 => AttributeValue::S(self.text()),
            1 => AttributeValue::N(self.number()),
            2 => AttributeValue::B(self.blob()),
            3 => AttributeValue::Bool(tag & 0x80 != 0),
            4 => AttributeValue::Null(tag & 0x80 == 0),
            5 if nest => AttributeValue::L(self.many(|i| i.value(names, depth + 1))),
            6 if nest => AttributeValue::M(self.map(names, depth + 1)),
            7 => AttributeValue::Ss(self.many(Input::text)),
            8 => AttributeValue::Ns(self.many(Input::number)),
            9 => AttributeValue::Bs(self.many(Input::blob)),
            _ => AttributeValue::S(self.text()),
        }
    }

    /// Up to one byte's worth of values, each made by `each`.
    fn many<T>(&mut self, mut each: impl FnMut(&mut Self) -> T) -> Vec<T> {
        let n = self.byte();
        let mut out = Vec::new();
        for _ in 0..n {
            if !self.budget() {
                break;
            }
            out.push(each(self));
        }
        out
    }

    /// A map of named values, nested up to `depth`.
    pub fn map(&mut self, names: &[&str], depth: usize) -> Item {
        let n = self.byte();
        let mut out = Item::new();
        for _ in 0..n {
            if !self.budget() {
                break;
            }
            let name = self.name(names);
            let value = self.value(names, depth);
            out.insert(name, value);
        }
        out
    }
}

/// The input [`Input::map`] reads as `item` (the inverse of the interpreter, to make seeds
/// from real items; texts longer than 255 bytes are cut).
pub fn map_input(item: &Item, names: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    write_map(&mut out, item, names);
    out
}

/// The input [`Input::value`] reads as `value`.
pub fn value_input(value: &AttributeValue, names: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    write_value(&mut out, value, names);
    out
}

/// The input [`Input::text`] reads as `text`.
pub fn text_input(out: &mut Vec<u8>, text: &[u8]) {
    let text = &text[..text.len().min(255)];
    out.push(text.len() as u8);
    out.extend_from_slice(text);
}

fn write_map(out: &mut Vec<u8>, item: &Item, names: &[&str]) {
    let mut entries: Vec<_> = item.iter().take(255).collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    out.push(entries.len() as u8);
    for (name, value) in entries {
        match names.iter().position(|n| n == name) {
            Some(i) if i < 255 => out.push(i as u8),
            _ => {
                out.push(255);
                text_input(out, name.as_bytes());
            }
        }
        write_value(out, value, names);
    }
}

fn write_many<T>(out: &mut Vec<u8>, tag: u8, items: &[T], mut each: impl FnMut(&mut Vec<u8>, &T)) {
    out.push(tag);
    let items = &items[..items.len().min(255)];
    out.push(items.len() as u8);
    for item in items {
        each(out, item);
    }
}

fn write_number(out: &mut Vec<u8>, n: &str) {
    out.push(3);
    text_input(out, n.as_bytes());
}

fn write_value(out: &mut Vec<u8>, value: &AttributeValue, names: &[&str]) {
    match value {
        AttributeValue::S(s) => {
            out.push(0);
            text_input(out, s.as_bytes());
        }
        AttributeValue::N(n) => {
            out.push(1);
            write_number(out, n);
        }
        AttributeValue::B(b) => {
            out.push(2);
            text_input(out, b.as_ref());
        }
        AttributeValue::Bool(b) => out.push(if *b { 133 } else { 3 }),
        AttributeValue::Null(_) => out.push(4),
        AttributeValue::L(l) => write_many(out, 5, l, |o, v| write_value(o, v, names)),
        AttributeValue::M(m) => {
            out.push(6);
            write_map(out, m, names);
        }
        AttributeValue::Ss(s) => write_many(out, 7, s, |o, t| text_input(o, t.as_bytes())),
        AttributeValue::Ns(s) => write_many(out, 8, s, |o, n| write_number(o, n)),
        AttributeValue::Bs(s) => write_many(out, 9, s, |o, b| text_input(o, b.as_ref())),
        _ => out.push(4),
    }
}

/// `item` with every set sorted, at every level: two encodings of one value may list a
/// set's members in another order.
pub fn normalized(item: &Item) -> Item {
    item.iter()
        .map(|(k, v)| (k.clone(), normalized_value(v)))
        .collect()
}

fn normalized_value(value: &AttributeValue) -> AttributeValue {
    match value {
        AttributeValue::Ss(s) => AttributeValue::Ss(sorted(s)),
        AttributeValue::Ns(s) => AttributeValue::Ns(sorted(s)),
        AttributeValue::Bs(s) => {
            let mut s = s.clone();
            s.sort_by(|a, b| a.as_ref().cmp(b.as_ref()));
            AttributeValue::Bs(s)
        }
        AttributeValue::L(l) => AttributeValue::L(l.iter().map(normalized_value).collect()),
        AttributeValue::M(m) => AttributeValue::M(normalized(m)),
        other => other.clone(),
    }
}

fn sorted(s: &[String]) -> Vec<String> {
    let mut s = s.to_vec();
    s.sort();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_read_back_as_the_items_they_were_made_from() {
        let item = Item::from([
            ("a".to_owned(), AttributeValue::N("-12.5e3".into())),
            (
                "b".to_owned(),
                AttributeValue::Ss(vec!["x".into(), "y".into()]),
            ),
            (
                "c".to_owned(),
                AttributeValue::L(vec![
                    AttributeValue::Bool(true),
                    AttributeValue::M(Item::from([(
                        "zz".to_owned(),
                        AttributeValue::B(Blob::new(vec![0, 255])),
                    )])),
                ]),
            ),
        ]);
        let data = map_input(&item, &["a", "b"]);
        assert_eq!(Input::new(&data).map(&["a", "b"], 0), item);
    }

    #[test]
    fn nesting_stops_at_the_bound() {
        // A list in a list in a list..., far past the bound: the innermost is a text.
        let mut data = Vec::new();
        for _ in 0..200 {
            data.extend_from_slice(&[5, 1]);
        }
        let mut depth = 0;
        let mut value = Input::new(&data).value(&[], 0);
        while let AttributeValue::L(mut l) = value {
            depth += 1;
            value = l.pop().unwrap_or(AttributeValue::Null(true));
        }
        assert_eq!(depth, MAX_DEPTH);
    }
}
