use dynamo_model::{Entity, Table, local};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Debug, PartialEq)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "ORDER#{order_id}")]
struct Order {
    user_id: String,
    order_id: u32,
    status: String,
}

#[tokio::main]
async fn main() -> Result<(), local::BoxError> {
    let db = local::fresh_table::<App>().await?; // starts DynamoDB Local, creates a table
    let order = Order { user_id: "ada".into(), order_id: 7, status: "PENDING".into() };
    db.put(&order).if_absent().await?; // refused if the key is taken
    let key = Order::key(OrderKey { user_id: "ada", order_id: 7 }); // named: never swapped
    let shipped = db.update(key.clone()).set(Order::fields().status, "SHIPPED").await?;
    assert_eq!(db.query(Order::partition("ada")).all().await?.items, vec![shipped]);
    println!("deleted {:?}", db.delete(key).return_old().await?);
    Ok(())
}
