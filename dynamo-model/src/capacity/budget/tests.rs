use super::*;
use proptest::prelude::*;

/// A call that succeeded with these figures, without items.
fn call(
    operation: &'static str,
    units: Units,
    consumed: Option<f64>,
    estimated: Option<f64>,
) -> Charge {
    Charge {
        operation,
        units,
        estimated,
        succeeded: true,
        consumed,
        consumed_by_table: consumed,
        items_read: None,
        items_returned: None,
    }
}

/// A read that DynamoDB read `items.0` items for and returned `items.1` of.
fn read(
    operation: &'static str,
    consumed: Option<f64>,
    estimated: f64,
    items: (u64, u64),
) -> Charge {
    Charge {
        items_read: Some(items.0),
        items_returned: Some(items.1),
        ..call(operation, Units::Read, consumed, Some(estimated))
    }
}

fn write(operation: &'static str, consumed: Option<f64>, estimated: Option<f64>) -> Charge {
    call(operation, Units::Write, consumed, estimated)
}

/// A failed call: no figures.
fn failed(operation: &'static str, units: Units) -> Charge {
    Charge {
        succeeded: false,
        ..call(operation, units, None, None)
    }
}

/// A query whose filter dropped 8 of 10 items, a get of a missing item, a put whose
/// figure DynamoDB reported, an update known only by its estimate, and a failed put.
fn calls() -> Vec<Charge> {
    vec![
        read("Query", Some(1.5), 0.5, (10, 2)),
        read("GetItem", Some(0.5), 0.5, (1, 0)),
        write("PutItem", Some(2.0), Some(1.0)),
        write("UpdateItem", None, Some(3.0)),
        failed("PutItem", Units::Write),
    ]
}

#[test]
fn usage_counts_reported_units_else_estimates() {
    let usage = Usage::of(&calls());
    assert_eq!(usage.requests, 5);
    assert_eq!(
        usage.read_units, 2.0,
        "the reported figures, not the estimates"
    );
    assert_eq!(
        usage.write_units, 5.0,
        "2 reported, 3 estimated, the failed call none"
    );
    assert_eq!(usage.items_read, 11);
    assert_eq!(usage.items_returned, 2);
    assert_eq!(usage.items_discarded, 9);
}

#[test]
fn a_budget_the_calls_meet_passes() {
    let budget = Budget::new()
        .requests(5)
        .read_units(2.0)
        .write_units(5.0)
        .items_read(11)
        .items_discarded(9);
    assert_eq!(budget.check_charges(&calls()), Ok(Usage::of(&calls())));
    assert!(
        Budget::new().check_charges(&calls()).is_ok(),
        "no limit, no failure"
    );
    assert!(Budget::new().requests(0).check_charges(&[]).is_ok());
}

#[test]
fn each_limit_exceeded_fails_and_is_named() {
    let cases = [
        (Limit::Requests, 4.0, "requests 5 (budget 4)"),
        (Limit::ReadUnits, 1.5, "read units 2 (budget 1.5)"),
        (Limit::WriteUnits, 4.0, "write units 5 (budget 4)"),
        (Limit::ItemsRead, 10.0, "items read 11 (budget 10)"),
        (Limit::ItemsDiscarded, 0.0, "items discarded 9 (budget 0)"),
    ];
    for (limit, allowed, named) in cases {
        let budget = only(limit, allowed);
        let Err(exceeded) = budget.check_charges(&calls()) else {
            panic!("{limit:?}: the calls went over, the check passed");
        };
        assert_eq!(exceeded.excesses().len(), 1, "{exceeded}");
        assert_eq!(exceeded.excesses()[0].limit, limit);
        let message = exceeded.to_string();
        assert!(
            message.starts_with(&format!("capacity budget exceeded: {named}\n")),
            "{message}"
        );
        // Every call, numbered, with its units, figures and items.
        for line in [
            "  1. Query: 1.5 read units (consumed 1.5, estimated 0.5), items read 10, returned 2",
            "  2. GetItem: 0.5 read units (consumed 0.5, estimated 0.5), items read 1, returned 0",
            "  3. PutItem: 2 write units (consumed 2, estimated 1)",
            "  4. UpdateItem: 3 write units (consumed -, estimated 3)",
            "  5. PutItem (failed): 0 write units (consumed -, estimated -)",
        ] {
            assert!(
                message.lines().any(|l| l == line),
                "{line:?} not in:\n{message}"
            );
        }
        assert_eq!(exceeded.charges(), calls().as_slice());
    }
}

/// A budget of one limit: `allowed` of `limit` (a whole number for a count).
fn only(limit: Limit, allowed: f64) -> Budget {
    let count = allowed as u64;
    let budget = Budget::new();
    match limit {
        Limit::Requests => budget.requests(count),
        Limit::ReadUnits => budget.read_units(allowed),
        Limit::WriteUnits => budget.write_units(allowed),
        Limit::ItemsRead => budget.items_read(count),
        Limit::ItemsDiscarded => budget.items_discarded(count),
    }
}

#[test]
fn every_limit_exceeded_is_listed() {
    let budget = Budget::new()
        .requests(1)
        .read_units(2.0)
        .write_units(1.0)
        .items_discarded(1);
    let Err(exceeded) = budget.check_charges(&calls()) else {
        panic!("over budget");
    };
    let limits: Vec<Limit> = exceeded.excesses().iter().map(|e| e.limit).collect();
    assert_eq!(
        limits,
        [Limit::Requests, Limit::WriteUnits, Limit::ItemsDiscarded]
    );
    assert!(exceeded.to_string().starts_with(
        "capacity budget exceeded: requests 5 (budget 1), write units 5 (budget 1), \
         items discarded 9 (budget 1)\nin all: 5 requests, 2 read units, 5 write units, \
         11 items read, 2 returned, 9 discarded\n"
    ));
}

#[test]
fn a_nan_limit_is_never_met() {
    assert!(
        Budget::new()
            .read_units(f64::NAN)
            .check_charges(&[])
            .is_err()
    );
    assert!(
        Budget::new()
            .write_units(f64::NAN)
            .check_charges(&[])
            .is_err()
    );
}

#[test]
fn a_meter_is_checked_on_its_records() {
    let meter = Meter::new();
    for charge in calls() {
        meter.record(charge);
    }
    assert_eq!(
        Budget::new()
            .requests(5)
            .check_meter(&meter)
            .map(|u| u.requests),
        Ok(5)
    );
    assert!(Budget::new().requests(4).check_meter(&meter).is_err());
}

/// A call of either kind with units in halves (as DynamoDB charges them), reported or
/// only estimated, and items for a read.
fn charge() -> impl Strategy<Value = Charge> {
    (
        any::<bool>(),
        0u32..40,
        any::<bool>(),
        0u64..50,
        0u64..50,
        any::<bool>(),
    )
        .prop_map(|(is_read, halves, reported, a, b, succeeded)| {
            let units = f64::from(halves) / 2.0;
            let mut c = if is_read {
                read("Query", None, units, (a.max(b), a.min(b)))
            } else {
                write("PutItem", None, Some(units))
            };
            if reported {
                c.consumed = Some(units);
            }
            if !succeeded {
                c = failed(c.operation, c.units);
            }
            c
        })
}

proptest! {
    /// A budget of exactly what the calls cost holds; one unit, request or item less on
    /// any limit fails on that limit alone.
    #[test]
    fn the_measured_totals_are_the_tightest_budget(calls in prop::collection::vec(charge(), 0..20)) {
        let u = Usage::of(&calls);
        let exact = Budget::new()
            .requests(u.requests)
            .read_units(u.read_units)
            .write_units(u.write_units)
            .items_read(u.items_read)
            .items_discarded(u.items_discarded);
        prop_assert_eq!(exact.check_charges(&calls), Ok(u));
        let tighter = [
            (u.requests > 0).then(|| (exact.requests(u.requests - 1), Limit::Requests)),
            (u.read_units > 0.0).then(|| (exact.read_units(u.read_units - 0.5), Limit::ReadUnits)),
            (u.write_units > 0.0).then(|| (exact.write_units(u.write_units - 0.5), Limit::WriteUnits)),
            (u.items_read > 0).then(|| (exact.items_read(u.items_read - 1), Limit::ItemsRead)),
            (u.items_discarded > 0)
                .then(|| (exact.items_discarded(u.items_discarded - 1), Limit::ItemsDiscarded)),
        ];
        for (budget, limit) in tighter.into_iter().flatten() {
            let exceeded = budget.check_charges(&calls);
            let limits: Vec<Limit> = exceeded
                .as_ref()
                .map_or_else(|e| e.excesses().iter().map(|e| e.limit).collect(), |_| Vec::new());
            prop_assert_eq!(limits, vec![limit]);
            let message = exceeded.map_or_else(|e| e.to_string(), |_| String::new());
            prop_assert_eq!(message.lines().count(), 2 + calls.len(), "{}", message);
        }
    }
}
