//! Key templates: `"ORDER#{created_at}#{order_id}"` → literal and field segments, and
//! computed placeholders such as `{order_id:shard(16)}` or `{created_at:date}` (see
//! `dynamo_model::key::computed`). Parsing only; no code generation here.

use crate::attr::DELIMITERS;

/// The largest shard count of `shard(N)` and `random(N)` (the runtime's `MAX_SHARDS`).
pub const MAX_SHARDS: u16 = 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Lit(String),
    Field(String),
    /// A part computed from a field: `{field:function}`.
    Computed(Computed),
}

/// `{field:function}`: a key part derived from `field`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computed {
    pub field: String,
    pub function: Function,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    /// `shard(N)`: the hash of the field's encoding, modulo N.
    Shard(u16),
    /// `random(N)`: a shard the writer picked, held by a `u16` field.
    Random(u16),
    /// `date`, `hour`, `month`: the UTC bucket of a time value.
    Bucket(Bucket),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    Date,
    Hour,
    Month,
}

impl Function {
    /// The shard count, for `shard(N)` and `random(N)`.
    pub fn shards(self) -> Option<u16> {
        match self {
            Function::Shard(n) | Function::Random(n) => Some(n),
            Function::Bucket(_) => None,
        }
    }
}

impl Bucket {
    /// The runtime type of the bucket.
    pub fn type_name(self) -> &'static str {
        match self {
            Bucket::Date => "DayBucket",
            Bucket::Hour => "HourBucket",
            Bucket::Month => "MonthBucket",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub segments: Vec<Segment>,
    /// The delimiter that follows the placeholders (`None`: every placeholder ends the
    /// template, or there is none).
    pub delimiter: Option<char>,
}

impl Template {
    /// Names of the fields written as they are (`{field}`), in order of appearance (may
    /// repeat).
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Field(f) => Some(f.as_str()),
            Segment::Lit(_) | Segment::Computed(_) => None,
        })
    }

    /// Names of every field the template reads, as is or computed, in order of appearance
    /// (may repeat).
    pub fn sources(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Field(f) => Some(f.as_str()),
            Segment::Computed(c) => Some(c.field.as_str()),
            Segment::Lit(_) => None,
        })
    }

    /// The computed placeholders.
    pub fn computed(&self) -> impl Iterator<Item = &Computed> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Computed(c) => Some(c),
            _ => None,
        })
    }

    /// The template's shard placeholder (`shard(N)` or `random(N)`), if any, with its
    /// position among the segments.
    pub fn shard(&self) -> Option<(usize, &Computed)> {
        self.segments.iter().enumerate().find_map(|(i, s)| match s {
            Segment::Computed(c) if c.function.shards().is_some() => Some((i, c)),
            _ => None,
        })
    }

    /// The template with no text at all (the sort key of a versioned entity whose
    /// revision slot is the whole key).
    pub fn empty() -> Template {
        Template {
            segments: Vec::new(),
            delimiter: None,
        }
    }

    /// The literal text the template starts with, up to its first placeholder (all of
    /// it for a constant).
    pub fn constant_text(&self) -> String {
        self.segments
            .iter()
            .map_while(|s| match s {
                Segment::Lit(l) => Some(l.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Whether the template has no placeholder at all (a constant).
    pub fn is_constant(&self) -> bool {
        self.sources().next().is_none()
    }
}

/// Parses the function of a computed placeholder (`shard(16)`, `date`, ...).
fn parse_function(placeholder: &str, text: &str) -> Result<Function, String> {
    let text = text.trim();
    let (name, argument) = match text.split_once('(') {
        Some((name, rest)) => match rest.strip_suffix(')') {
            Some(argument) => (name.trim(), Some(argument.trim())),
            None => {
                return Err(format!(
                    "`{{{placeholder}}}`: the argument list of `{}` is not closed with `)`",
                    name.trim()
                ));
            }
        },
        None => (text, None),
    };
    let count = |argument: Option<&str>| -> Result<u16, String> {
        let Some(argument) = argument else {
            return Err(format!(
                "`{{{placeholder}}}`: `{name}` takes the number of shards, e.g. `{name}(16)`"
            ));
        };
        match argument.parse::<u16>() {
            Ok(n) if (1..=MAX_SHARDS).contains(&n) => Ok(n),
            _ => Err(format!(
                "`{{{placeholder}}}`: the shard count must be a whole number from 1 to {MAX_SHARDS}, found `{argument}` (a read of a sharded partition queries every shard, so the count is its fan-out)"
            )),
        }
    };
    let bucket = |bucket: Bucket| -> Result<Function, String> {
        match argument {
            None => Ok(Function::Bucket(bucket)),
            Some(_) => Err(format!("`{{{placeholder}}}`: `{name}` takes no arguments")),
        }
    };
    match name {
        "shard" => count(argument).map(Function::Shard),
        "random" => count(argument).map(Function::Random),
        "date" => bucket(Bucket::Date),
        "hour" => bucket(Bucket::Hour),
        "month" => bucket(Bucket::Month),
        "" => Err(format!(
            "`{{{placeholder}}}`: no function after `:`; write `{{field:shard(N)}}`, `{{field:random(N)}}`, `{{field:date}}`, `{{field:hour}}` or `{{field:month}}`"
        )),
        other => Err(format!(
            "`{{{placeholder}}}`: unknown key function `{other}`; expected `shard(N)`, `random(N)`, `date`, `hour` or `month`"
        )),
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
                let placeholder = name.trim().to_string();
                let (name, function) = match placeholder.split_once(':') {
                    Some((name, function)) => (
                        name.trim().to_string(),
                        Some(parse_function(&placeholder, function)?),
                    ),
                    None => (placeholder.clone(), None),
                };
                if name.is_empty() {
                    return Err(format!(
                        "empty placeholder `{{{placeholder}}}` at byte {at}; write `{{field_name}}`"
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
                                "placeholder `{{{placeholder}}}` must be followed by the delimiter `{d}` or the end of the template, found `{next}`"
                            ));
                        }
                        (None, _) if !DELIMITERS.contains(&next) => {
                            return Err(format!(
                                "placeholder `{{{placeholder}}}` must be followed by the delimiter (`#` unless the table, the entity or the index declares `.`, `_`, `|` or `:`) or the end of the template, found `{next}`"
                            ));
                        }
                        (None, Some((first, field))) if *first != next => {
                            return Err(format!(
                                "placeholder `{{{field}}}` is followed by `{first}` and `{{{placeholder}}}` by `{next}`: a template has one delimiter"
                            ));
                        }
                        _ => follower = follower.or(Some((next, placeholder.clone()))),
                    }
                }
                segments.push(match function {
                    None => Segment::Field(name),
                    Some(function) => Segment::Computed(Computed {
                        field: name,
                        function,
                    }),
                });
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

    fn computed(field: &str, function: Function) -> Segment {
        Segment::Computed(Computed {
            field: field.into(),
            function,
        })
    }

    #[test]
    fn parses_computed_placeholders() {
        let t = parse("ORDERS#{created_at:date}#{order_id:shard(16)}", None).unwrap();
        assert_eq!(
            t.segments,
            vec![
                lit("ORDERS#"),
                computed("created_at", Function::Bucket(Bucket::Date)),
                lit("#"),
                computed("order_id", Function::Shard(16)),
            ]
        );
        assert_eq!(t.fields().count(), 0);
        assert_eq!(t.sources().collect::<Vec<_>>(), ["created_at", "order_id"]);
        assert_eq!(t.shard().map(|(i, _)| i), Some(3));
        assert!(!t.is_constant());
        assert_eq!(
            parse("{ t : hour }#{ s : random( 1000 ) }#{t:month}", None)
                .unwrap()
                .segments,
            vec![
                computed("t", Function::Bucket(Bucket::Hour)),
                lit("#"),
                computed("s", Function::Random(1000)),
                lit("#"),
                computed("t", Function::Bucket(Bucket::Month)),
            ]
        );
        assert_eq!(
            parse("{a:shard(1)}", None).unwrap().segments,
            vec![computed("a", Function::Shard(1))]
        );
    }

    #[test]
    fn rejects_malformed_computed_placeholders() {
        for (bad, says) in [
            ("{a:foo}", "unknown key function `foo`"),
            ("{a:}", "no function after `:`"),
            ("{a:shard}", "takes the number of shards"),
            ("{a:shard(0)}", "from 1 to 1000"),
            ("{a:shard(1001)}", "from 1 to 1000"),
            ("{a:random(-1)}", "from 1 to 1000"),
            ("{a:shard(x)}", "from 1 to 1000"),
            ("{a:shard(16}", "not closed"),
            ("{a:date(3)}", "takes no arguments"),
            ("{:date}", "empty placeholder"),
            ("{a b:date}", "not a field name"),
            ("{a:date}x", "must be followed by the delimiter"),
        ] {
            let error = parse(bad, None).unwrap_err();
            assert!(error.contains(says), "{bad:?}: {error}");
        }
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
