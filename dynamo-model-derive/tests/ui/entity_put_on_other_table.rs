use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

use dynamo_model::Db;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Table)]
#[dynamo(pk = "id")]
struct Audit;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
struct User {
    user_id: String,
}

async fn save(db: Db<Audit>, user: User) -> Result<(), dynamo_model::Error> {
    db.put(&user).await
}

fn main() {
    let _ = save;
}
