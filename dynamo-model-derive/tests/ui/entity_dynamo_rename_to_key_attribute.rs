use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", write_token = "rev")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
struct User {
    user_id: String,
    #[dynamo(rename = "SK")]
    sort: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "GROUP#{id}", sk = "GROUP")]
struct Group {
    id: String,
    #[dynamo(rename = "_type")]
    kind: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
struct Doc {
    id: String,
    #[dynamo(rename = "rev")]
    revision: u32,
}

fn main() {}
