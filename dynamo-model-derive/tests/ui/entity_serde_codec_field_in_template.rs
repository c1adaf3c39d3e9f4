use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "TAGS#{tags}")]
struct UserTags {
    user_id: String,
    #[dynamo(serde)]
    tags: Vec<(String, u8)>,
}

fn main() {}
