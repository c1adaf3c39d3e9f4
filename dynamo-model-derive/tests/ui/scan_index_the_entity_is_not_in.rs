// An index scan names the index by its key-space marker: only an index the entity has a
// template for compiles.
use dynamo_model::{Db, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
         gsi(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE", index(GSI1, pk = "EMAIL#{email}", sk = "USER"))]
struct User {
    id: String,
    email: Option<String>,
}

async fn scan(db: Db<App>) -> Result<(), dynamo_model::Error> {
    db.scan::<User>().index::<AppGsi1>().all().await?;
    db.scan::<User>().index::<AppGsi2>().all().await?;
    Ok(())
}

fn main() {
    let _ = scan;
}
