//! Integer literals take the field's type wherever the field's type is taken: conditions,
//! filters, key conditions (template and multi-attribute keys) and updates
//! (`f.item_count.ge(1)` on a `u32`, as `subtract(f.item_count, 1)` always did). A
//! literal that does not fit is a compile error
//! (`dynamo-model-derive/tests/ui/condition_literal_out_of_range.rs`).

use crate::common::*;
use dynamo_model::{local, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "ByCount", pk = ["shop"], sk = ["itemCount:N"]))]
pub struct Shop;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Shop, pk = "CART#{id}", sk = "LINE#{line}",
         index(ByCount, pk = [shop], sk = [item_count]))]
#[serde(rename_all = "camelCase")]
pub struct Cart {
    pub id: String,
    pub line: u16,
    pub shop: String,
    pub item_count: u32,
    pub level: u8,
    pub weight: f64,
    pub balance: i64,
    pub discount: Option<u32>,
}

fn cart(line: u16, item_count: u32) -> Cart {
    Cart {
        id: "c".into(),
        line,
        shop: "s".into(),
        item_count,
        level: 250,
        weight: 2.5,
        balance: -3,
        discount: line.is_multiple_of(2).then_some(5),
    }
}

fn lines(carts: &[Cart]) -> Vec<u16> {
    carts.iter().map(|c| c.line).collect()
}

#[tokio::test]
async fn integer_literals_take_the_field_type_in_conditions_filters_key_conditions_and_updates(
) -> TestResult {
    let db = local::fresh_table::<Shop>().await?;
    for line in 0..6u16 {
        db.put(&cart(line, u32::from(line))).await?;
    }
    let f = Cart::fields();

    // Filters: unsigned, small, float, signed and optional fields, all with plain literals.
    let found = db
        .query(Cart::partition("c"))
        .filter(
            f.item_count
                .ge(1)
                .and(f.level.le(255))
                .and(f.weight.gt(2))
                .and(f.balance.eq(-3))
                .and(f.discount.eq(5))
                .and(f.item_count.between(1, 4))
                .and(f.item_count.is_in([2, 4, 5])),
        )
        .all()
        .await?;
    assert_eq!(lines(&found.items), [2, 4]);

    // Key conditions: a template sort key and a multi-attribute index sort key.
    let from_two = db
        .query(Cart::partition("c"))
        .sk(Cart::sk().line().ge(2))
        .all()
        .await?;
    assert_eq!(lines(&from_two.items), [2, 3, 4, 5]);
    let middle = db
        .query(Cart::by_count_partition("s"))
        .sk(Cart::by_count_sk().item_count().between(2, 3))
        .all()
        .await?;
    assert_eq!(lines(&middle.items), [2, 3]);

    // Updates and their conditions.
    let key = || Cart::key(CartKey { id: "c", line: 1 });
    db.update(key())
        .set(f.level, 7)
        .set(f.weight, 1)
        .set_if_absent(f.discount, 9)
        .subtract(f.item_count, 1)
        .condition(f.item_count.ge(1))
        .await?;
    let updated = db.get(key()).await?.ok_or("the cart is there")?;
    assert_eq!(
        (
            updated.item_count,
            updated.level,
            updated.weight,
            updated.discount
        ),
        (0, 7, 1.0, Some(9))
    );
    // The condition now fails: nothing left to subtract.
    let refused = db
        .update(key())
        .subtract(f.item_count, 1)
        .condition(f.item_count.ge(1))
        .await;
    assert!(refused.is_err());
    Ok(())
}
