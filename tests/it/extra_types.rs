//! Fields of other crates' types (features `rust_decimal`, `bytes`, `serde_json`).

use crate::common::*;
use dynamo_model::aws_sdk_dynamodb::types::AttributeValue;
use dynamo_model::{local, Entity};
use rust_decimal::Decimal;
use std::str::FromStr;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "LEDGER#{id}", sk = "LEDGER")]
pub struct Ledger {
    pub id: String,
    pub balance: Decimal,
    pub rates: Vec<Decimal>,
    pub blob: bytes::Bytes,
    pub meta: serde_json::Value,
    pub extra: Option<serde_json::Value>,
}

#[tokio::test]
async fn decimals_bytes_and_json_round_trip_exactly() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let ledger = Ledger {
        id: "l1".into(),
        // 0.1 + 0.2, exactly; 28 significant digits.
        balance: Decimal::from_str("0.1")? + Decimal::from_str("0.2")?,
        rates: vec![
            Decimal::from_str("1234567890.123456789012345678")?,
            Decimal::from_str("-0.000000000000000000000000001")?,
            Decimal::MAX,
            Decimal::MIN,
        ],
        blob: bytes::Bytes::from_static(b"\x00\xffbytes"),
        meta: serde_json::json!({"tags": ["a", "b"], "n": 1.5, "deep": {"ok": true, "none": null}}),
        extra: None,
    };
    db.put(&ledger).await?;
    let back = db.get(Ledger::key("l1")).await?.ok_or("missing")?;
    assert_eq!(back, ledger);
    assert_eq!(back.balance.to_string(), "0.3");

    // A number a Decimal cannot hold exactly is refused, never rounded.
    let raw = |balance: &str| {
        let mut item = ledger.to_item().expect("item");
        item.insert("balance".into(), AttributeValue::N(balance.into()));
        item
    };
    assert!(Ledger::from_item(raw("1.5E+3")).is_ok());
    assert_eq!(
        Ledger::from_item(raw("1.5E+3"))?.balance,
        Decimal::from(1500)
    );
    for bad in ["1.00000000000000000000000000000001", "1E+40", "abc"] {
        assert!(Ledger::from_item(raw(bad)).is_err(), "{bad}");
    }
    // A JSON number DynamoDB cannot store is refused before sending.
    let mut huge = ledger.clone();
    huge.meta = serde_json::json!({"n": 1e200});
    refused(db.put(&huge), dynamo_model::ValidationReason::InvalidNumber).await;
    Ok(())
}
