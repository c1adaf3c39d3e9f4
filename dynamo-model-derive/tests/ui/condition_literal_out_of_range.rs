// An integer literal takes the field's type: one out of its range is a compile error
// (the deny-by-default `overflowing_literals` lint), in a condition as in an update.
use dynamo_model::{Condition, Db, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "CART#{id}", sk = "CART")]
struct Cart {
    id: String,
    item_count: u32,
    level: u8,
}

fn level_too_high() -> Condition<Cart> {
    Cart::fields().level.eq(300)
}

async fn update(db: Db<App>) -> Result<(), dynamo_model::Error> {
    db.update(Cart::key("c")).set(Cart::fields().level, 256).await?;
    Ok(())
}

fn main() {
    let _ = (level_too_high, update);
}
