use super::*;
use aws_sdk_dynamodb::types::AttributeValue as Av;

fn range(eq: &[&str], last: Option<AttributeOp>) -> AttributeRange {
    AttributeRange {
        eq: eq.iter().map(|v| ("a", Av::S((*v).into()))).collect(),
        last: last.map(|op| ("b", op)),
    }
}

fn s(v: &str) -> Av {
    Av::S(v.into())
}

#[test]
fn empty_values_and_reversed_bounds_mean_everything_or_nothing() {
    use AttributeOp::*;
    assert_eq!(range(&[""], None).normalized(), None);
    for nothing in [
        Lt(s("")),
        Le(s("")),
        Between(s("x"), s("")),
        Between(s("b"), s("a")),
    ] {
        assert_eq!(
            range(&["x"], Some(nothing.clone())).normalized(),
            None,
            "{nothing:?}"
        );
    }
    assert_eq!(
        range(&["x"], Some(Between(Av::N("10".into()), Av::N("9".into())))).normalized(),
        None
    );
    for everything in [Gt(s("")), Ge(s("")), BeginsWith(s(""))] {
        assert_eq!(
            range(&["x"], Some(everything)).normalized(),
            Some(range(&["x"], None))
        );
    }
    assert_eq!(
        range(&["x"], Some(Between(s(""), s("m")))).normalized(),
        Some(range(&["x"], Some(Le(s("m")))))
    );
    let kept = range(&["x"], Some(Between(s("a"), s("b"))));
    assert_eq!(kept.normalized(), Some(kept.clone()));
    assert_eq!(
        range(&[], Some(Between(Av::N("9".into()), Av::N("10".into())))).normalized(),
        Some(range(
            &[],
            Some(Between(Av::N("9".into()), Av::N("10".into())))
        ))
    );
}
