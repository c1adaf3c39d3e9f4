use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires_at", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"), gsi(name = "ByCity", pk = ["city"]))]
struct App;

use dynamo_model::Db;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
struct Doc {
    id: String,
    #[dynamo(version)]
    version: u64,
}

async fn bump(db: Db<App>) {
    let _ = db.update(Doc::key("d")).set(Doc::fields().version, 7u64).any_version().await;
}

fn main() {}
