use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE", rename_all = "Title Case")]
struct User {
    user_id: String,
    #[dynamo(rename = "")]
    nickname: String,
    #[dynamo(rename = "email")]
    mail: String,
    email: String,
    #[dynamo(rename = "x", rename = "y")]
    twice: String,
}

fn main() {}
