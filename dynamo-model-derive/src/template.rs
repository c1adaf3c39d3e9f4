//! Key templates: `"ORDER#{created_at}#{order_id}"` → literal and field segments.
//! Parsing only; no code generation here.

/// The delimiter a field placeholder must be followed by (or the end of the template),
/// so that the escaping of key values keeps every key unambiguous.
pub const DELIMITER: char = '#';

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Lit(String),
    Field(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub segments: Vec<Segment>,
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

/// Parses a template, or says what is wrong with it.
pub fn parse(input: &str) -> Result<Template, String> {
    if input.is_empty() {
        return Err("a key template cannot be empty".into());
    }
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
                    if next != DELIMITER {
                        return Err(format!(
                            "placeholder `{{{name}}}` must be followed by `{DELIMITER}` or the end of the template, found `{next}`"
                        ));
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
    Ok(Template { segments })
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
            parse("ORDER#{created_at}#{order_id}").unwrap().segments,
            vec![
                lit("ORDER#"),
                field("created_at"),
                lit("#"),
                field("order_id")
            ]
        );
        assert_eq!(parse("PROFILE").unwrap().segments, vec![lit("PROFILE")]);
        assert_eq!(
            parse("{country}#{region}").unwrap().segments,
            vec![field("country"), lit("#"), field("region")]
        );
    }

    #[test]
    fn rejects_malformed_templates() {
        for bad in [
            "", "USER#{id", "USER#id}", "USER#{}", "{a}{b}", "{a}_x", "{a b}", "{{a}}", "X#{1a}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }
}
