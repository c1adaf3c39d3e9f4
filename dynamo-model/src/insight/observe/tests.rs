//! Attacks on how the interceptor shares units (those on the tracker behind it are in
//! `insight::hot`'s tests).

use super::{Touched, share};
use std::collections::HashMap;

fn touched(index: Option<&'static str>, pk: &str, estimate: f64) -> Touched {
    Touched {
        index,
        pk: pk.into(),
        sk: None,
        entity_type: None,
        estimate,
    }
}

/// A reported total is shared in proportion to the estimates and adds up to the total;
/// zero estimates or totals give no NaN.
#[test]
fn shares_add_up_to_the_reported_total_and_are_never_nan() {
    let reported: HashMap<Option<&'static str>, f64> =
        [(None, 10.0), (Some("GSI1"), 0.0)].into_iter().collect();
    let out = share(
        vec![
            touched(None, "a", 1.0),
            touched(None, "b", 3.0),
            touched(Some("GSI1"), "x", 0.0),
            touched(Some("GSI2"), "y", 2.0),
        ],
        &reported,
    );
    let table: f64 = out
        .iter()
        .filter(|(t, _)| t.index.is_none())
        .map(|(_, u)| u)
        .sum();
    assert_eq!(table, 10.0);
    assert!(
        out.iter().all(|(_, u)| u.is_finite() && *u >= 0.0),
        "{out:?}"
    );
    let zero = share(
        vec![touched(None, "a", 0.0), touched(None, "b", 0.0)],
        &reported,
    );
    assert!(zero.iter().all(|(_, u)| u.is_finite()), "{zero:?}");
}

/// Settings a caller may pass do not bring the process down.
#[test]
fn a_huge_top_does_not_panic() {
    let built = std::panic::catch_unwind(|| crate::insight::Insight::new().top(usize::MAX));
    assert!(built.is_ok());
}
