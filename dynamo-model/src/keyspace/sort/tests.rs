use super::*;
use crate::key::escape_str;

struct E;

fn enc(v: u32) -> impl FnOnce(&mut String) -> Result<(), KeyError> {
    move |out| v.encode_key(out)
}

fn root() -> SortKeyPrefix<E> {
    SortKeyPrefix::__root("ORDER#", false, Delimiter::HASH)
}

fn fixed() -> SortKeyPrefix<E> {
    root().__push(enc(1), "#", false)
}

fn range(c: SortKeyCondition<E>) -> SortKeyRange {
    c.range.unwrap()
}

const P: &str = "ORDER#0000000001#";

#[test]
fn whole_components_end_at_the_delimiter() {
    assert_eq!(
        range(fixed().condition()).op,
        SortKeyOp::BeginsWith(P.into())
    );
    assert_eq!(
        range(root().condition()).op,
        SortKeyOp::BeginsWith("ORDER#".into())
    );
    let full = fixed().__push(enc(2), "", true).condition();
    assert_eq!(range(full).op, SortKeyOp::Eq(format!("{P}0000000002")));
}

#[test]
fn ranges_stay_inside_the_fixed_prefix() {
    let end = "ORDER#0000000001$".to_string();
    let v = format!("{P}0000000005");
    let r = |c| range(fixed().__compare(c, enc(5), true));
    assert_eq!(r(Compare::Lt).op, SortKeyOp::Between(P.into(), v.clone()));
    assert_eq!(
        r(Compare::Le).op,
        SortKeyOp::Between(P.into(), format!("{v}$"))
    );
    assert_eq!(
        r(Compare::Gt).op,
        SortKeyOp::Between(format!("{v}$"), end.clone())
    );
    assert_eq!(r(Compare::Ge).op, SortKeyOp::Between(format!("{v}#"), end));
    assert!(r(Compare::Lt).exclude.is_none());
}

#[test]
fn strict_bounds_on_the_last_component_exclude_the_bound() {
    let v = format!("{P}0000000005");
    let lt = range(fixed().__compare(Compare::Lt, enc(5), false));
    assert_eq!(lt.op, SortKeyOp::Between(P.into(), v.clone()));
    assert_eq!(lt.exclude.as_deref(), Some(v.as_str()));
    assert!(!lt.admits(&v) && lt.admits(&format!("{P}0000000004")));
    let ge = range(fixed().__compare(Compare::Ge, enc(5), false));
    assert_eq!(ge.exclude, None);
}

#[test]
fn without_a_prefix_ranges_are_one_sided() {
    let bare = SortKeyPrefix::<E>::__root("", false, Delimiter::HASH);
    let r = range(bare.__compare(Compare::Gt, enc(5), false));
    assert_eq!(r.op, SortKeyOp::Ge("0000000005".into()));
    assert_eq!(r.exclude.as_deref(), Some("0000000005"));
}

#[test]
fn prefix_end_increments_the_last_character() {
    assert_eq!(prefix_end("ab#").as_deref(), Some("ab$"));
    assert_eq!(prefix_end("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
    assert_eq!(prefix_end("a\u{10FFFF}").as_deref(), Some("b"));
    assert_eq!(prefix_end("\u{10FFFF}"), None);
}

#[test]
fn partial_values_are_escaped() {
    let c = root().__starts_with(|out| escape_str("2023-10#", out));
    assert_eq!(
        range(c).op,
        SortKeyOp::BeginsWith("ORDER#2023-10%23".into())
    );
}

fn string(v: &'static str) -> impl FnOnce(&mut String) -> Result<(), KeyError> {
    move |out| escape_str(v, out)
}

/// `sk = "N#{name}#{n}"`: the bounds of a range on `name` enclose exactly the keys of
/// the names in range, `b!`, `b `, `b#`, `b"` and `John Smith` included.
#[test]
fn string_ranges_on_a_followed_component() {
    let n = SortKeyPrefix::<E>::__root("N#", false, Delimiter::HASH);
    let key = |name: &str| {
        let mut k = String::from("N#");
        escape_str(name, &mut k).unwrap();
        k + "#0000000001"
    };
    let returned = |c: SortKeyCondition<E>, name: &str| {
        let r = range(c);
        let k = key(name);
        let inside = match &r.op {
            SortKeyOp::Between(a, b) => a <= &k && &k <= b,
            other => panic!("{other:?}"),
        };
        inside && r.admits(&k)
    };
    for name in ["b!", "b ", "b#", "b\"", "b$", "b%", "ba", "c"] {
        assert!(
            !returned(n.clone().__compare(Compare::Le, string("b"), true), name),
            "{name:?} <= b"
        );
        assert!(
            returned(n.clone().__compare(Compare::Gt, string("b"), true), name),
            "{name:?} > b"
        );
    }
    for name in ["a", "b", "a!", "a#", "a\"", "", "\u{0}"] {
        assert!(
            returned(n.clone().__compare(Compare::Le, string("b"), true), name),
            "{name:?} <= b"
        );
    }
    assert!(returned(
        n.clone().__compare(Compare::Ge, string("John"), true),
        "John Smith"
    ));
    assert!(returned(
        n.clone().__compare(Compare::Gt, string("John"), true),
        "John Smith"
    ));
    assert!(!returned(
        n.clone().__compare(Compare::Lt, string("John"), true),
        "John Smith"
    ));
    for name in ["a", "a!", "a#", "a ", "ab", "b"] {
        assert!(
            returned(n.clone().__between(string("a"), string("b"), true), name),
            "{name:?}"
        );
    }
    for name in ["b!", "b#", "", "`"] {
        assert!(
            !returned(n.clone().__between(string("a"), string("b"), true), name),
            "{name:?}"
        );
    }
}

/// `sk = "{name}"` and `sk = "{name}#{n}"`: empty values never reach DynamoDB (which
/// refuses an empty key value); they mean every item or none.
#[test]
fn empty_values_mean_everything_or_nothing() {
    let bare = || SortKeyPrefix::<E>::__root("", false, Delimiter::HASH);
    let op = |c: SortKeyCondition<E>| range(c).op;
    for followed in [false, true] {
        for nothing in [
            bare().__compare(Compare::Lt, string(""), followed),
            root().__compare(Compare::Lt, string(""), followed),
            bare().__between(string("b"), string("a"), followed),
        ] {
            assert_eq!(op(nothing), SortKeyOp::Nothing);
        }
    }
    let gt = range(bare().__compare(Compare::Gt, string(""), false));
    assert_eq!(gt.op, SortKeyOp::Any);
    assert!(gt.admits("a"));
    assert!(!range(bare().__push(string(""), "", true).condition()).admits(""));
    let cases = [
        (bare().__starts_with(|_| Ok(())), SortKeyOp::Any),
        // The last component: no sort key is empty.
        (
            bare().__compare(Compare::Le, string(""), false),
            SortKeyOp::Nothing,
        ),
        (
            bare().__compare(Compare::Ge, string(""), false),
            SortKeyOp::Any,
        ),
        (
            bare().__between(string(""), string("b"), false),
            SortKeyOp::Le("b".into()),
        ),
        // The complete empty key matches no stored item (`matches_nothing`), but names a
        // history's latest copy (`v0`), where a query of such an entity moves it.
        (
            bare().__push(string(""), "", true).condition(),
            SortKeyOp::Eq(String::new()),
        ),
        // Followed by more components: `""` is a value like any other (keys `#...`).
        (
            bare().__compare(Compare::Le, string(""), true),
            SortKeyOp::Le("$".into()),
        ),
        (
            bare().__compare(Compare::Ge, string(""), true),
            SortKeyOp::Ge("#".into()),
        ),
        (
            bare().__compare(Compare::Gt, string(""), true),
            SortKeyOp::Ge("$".into()),
        ),
        (
            bare().__between(string(""), string(""), true),
            SortKeyOp::Between("#".into(), "$".into()),
        ),
        (
            bare().__push(string(""), "#", false).condition(),
            SortKeyOp::BeginsWith("#".into()),
        ),
    ];
    for (i, (condition, expected)) in cases.into_iter().enumerate() {
        assert_eq!(op(condition), expected, "case {i}");
    }
    assert!(SortKeyOp::Eq(String::new()).matches_nothing());
    assert!(!SortKeyOp::Eq("v0".into()).matches_nothing());
}
