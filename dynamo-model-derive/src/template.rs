//! Key templates: `"ORDER#{created_at}#{order_id}"` → literal and field segments.
//! Parsing only; no code generation here.

use crate::attr::DELIMITERS;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Lit(String),
    Field(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub segments: Vec<Segment>,
    /// The delimiter that follows the placeholders (`None`: every placeholder ends the
    /// template, or there is none).
    pub delimiter: Option<char>,
}

impl Template {
    /// Field names in order of appearance (may repeat).
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Field(f) => Some(f.as_str()),
            Segment::Lit(_) => None,
        })
    }
}

/// Parses a template whose delimiter is `delimiter` (`None`: the table's, unknown here, so
/// any supported one, the same after every placeholder), or says what is wrong with it.
pub fn parse(input: &str, delimiter: Option<char>) -> Result<Template, String> {
    if input.is_empty() {
        return Err("a key template cannot be empty".into());
    }
    let mut follower: Option<(char, String)> = None;
    let mut segments = Vec::new();
    let mut lit = String::new();
    let mut chars = input.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '{' => {
                let mut name = String::new();
                let mut closed = false;
                for (_, c) in chars.by_ref() {
                    match c {
                        '}' => {
                            closed = true;
                            break;
                        }
                        '{' => return Err(format!("nested `{{` in placeholder at byte {at}")),
                        c => name.push(c),
                    }
                }
                if !closed {
                    return Err(format!(
                        "placeholder opened at byte {at} is never closed with `}}`"
                    ));
                }
                let name = name.trim().to_string();
                if name.is_empty() {
                    return Err(format!(
                        "empty placeholder `{{}}` at byte {at}; write `{{field_name}}`"
                    ));
                }
                if syn::parse_str::<syn::Ident>(&name).is_err() {
                    return Err(format!("`{name}` is not a field name"));
                }
                if !lit.is_empty() {
                    segments.push(Segment::Lit(std::mem::take(&mut lit)));
                }
                // A value is only unambiguous when it ends at a delimiter or at the end.
                if let Some(&(_, next)) = chars.peek() {
                    match (delimiter, &follower) {
                        (Some(d), _) if next != d => {
                            return Err(format!(
                                "placeholder `{{{name}}}` must be followed by the delimiter `{d}` or the end of the template, found `{next}`"
                            ));
                        }
                        (None, _) if !DELIMITERS.contains(&next) => {
                            return Err(format!(
                                "placeholder `{{{name}}}` must be followed by the delimiter (`#` unless the table, the entity or the index declares `.`, `_`, `|` or `:`) or the end of the template, found `{next}`"
                            ));
                        }
                        (None, Some((first, field))) if *first != next => {
                            return Err(format!(
                                "placeholder `{{{field}}}` is followed by `{first}` and `{{{name}}}` by `{next}`: a template has one delimiter"
                            ));
                        }
                        _ => follower = follower.or(Some((next, name.clone()))),
                    }
                }
                segments.push(Segment::Field(name));
            }
            '}' => return Err(format!("unmatched `}}` at byte {at}")),
            c => lit.push(c),
        }
    }
    if !lit.is_empty() {
        segments.push(Segment::Lit(lit));
    }
    Ok(Template {
        segments,
        delimiter: follower.map(|(d, _)| d),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Segment {
        Segment::Lit(s.into())
    }
    fn field(s: &str) -> Segment {
        Segment::Field(s.into())
    }

    #[test]
    fn parses_composite_templates() {
        assert_eq!(
            parse("ORDER#{created_at}#{order_id}", None)
                .unwrap()
                .segments,
            vec![
                lit("ORDER#"),
                field("created_at"),
                lit("#"),
                field("order_id")
            ]
        );
        assert_eq!(
            parse("PROFILE", None).unwrap().segments,
            vec![lit("PROFILE")]
        );
        assert_eq!(
            parse("{country}#{region}", None).unwrap().segments,
            vec![field("country"), lit("#"), field("region")]
        );
    }

    #[test]
    fn rejects_malformed_templates() {
        for bad in [
            "", "USER#{id", "USER#id}", "USER#{}", "{a}{b}", "{a}-x", "{a b}", "{{a}}", "X#{1a}",
        ] {
            assert!(parse(bad, None).is_err(), "{bad:?} should be rejected");
            assert!(parse(bad, Some('#')).is_err(), "{bad:?} should be rejected");
        }
        assert!(parse("{a}_x", Some('#')).is_err());
    }

    /// A declared delimiter must follow every placeholder; without one, any supported
    /// delimiter may, the same throughout (the table's, checked against it later).
    #[test]
    fn delimiters_follow_placeholders() {
        let t = parse("{day}.{shard}", Some('.')).unwrap();
        assert_eq!(t.segments, vec![field("day"), lit("."), field("shard")]);
        assert_eq!(t.delimiter, Some('.'));
        assert_eq!(parse("{day}.{shard}", None).unwrap().delimiter, Some('.'));
        assert_eq!(parse("PENDING_{day}", Some('_')).unwrap().delimiter, None);
        assert_eq!(parse("A#B.{x}", Some('.')).unwrap().delimiter, None);
        assert_eq!(parse("{a}|x|{b}", None).unwrap().delimiter, Some('|'));
        assert!(parse("{day}.{shard}", Some('#')).is_err());
        assert!(parse("{day}#{shard}", Some('.')).is_err());
        let mixed = parse("{a}.{b}#{c}", None).unwrap_err();
        assert!(mixed.contains("one delimiter"), "{mixed}");
        for d in ['#', '.', '_', '|', ':'] {
            let text = format!("X{d}{{a}}{d}{{b}}{d}Y");
            assert_eq!(parse(&text, Some(d)).unwrap().delimiter, Some(d));
            assert_eq!(parse(&text, None).unwrap().delimiter, Some(d));
        }
    }
}
