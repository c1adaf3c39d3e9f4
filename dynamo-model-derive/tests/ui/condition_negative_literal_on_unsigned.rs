// An integer literal takes the field's type: a negative one on an unsigned field is a
// compile error (`u32` has no negation).
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

fn negative_count() -> Condition<Cart> {
    Cart::fields().item_count.ge(-1)
}

async fn update(db: Db<App>) -> Result<(), dynamo_model::Error> {
    db.update(Cart::key("c")).set(Cart::fields().item_count, -2).await?;
    Ok(())
}

fn main() {
    let _ = (negative_count, update);
}
