use dynamo_model::{Attribute, Db, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Attribute)]
struct Address {
    city: String,
    zip: String,
}

#[derive(Attribute)]
struct Line {
    sku: String,
    qty: u32,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "ORDER#{id}", sk = "ORDER")]
struct Order {
    id: String,
    total: u64,
    name: String,
    ship_to: Address,
    lines: Vec<Line>,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
struct User {
    id: String,
    total: u64,
}

async fn run(db: Db<App>) -> Result<(), dynamo_model::Error> {
    let f = Order::fields();
    // A member the nested struct does not have.
    let _ = f.ship_to.fields().street.eq("Main St");
    // A member of a list element that does not exist.
    let _ = f.lines.index(0).fields().price.gt(1);
    // An element of an attribute that is not a list.
    let _ = f.name.index(0);
    // Another attribute of another type.
    let _ = f.total.gt(f.name);
    // Another entity's attribute.
    let _ = f.total.gt(User::fields().total);
    // A sum of a sum: DynamoDB allows one + or - an action.
    db.update(Order::key("o"))
        .set_to(f.total, f.total.plus(1).plus(2))
        .await?;
    Ok(())
}

fn main() {
    let _ = run;
}
