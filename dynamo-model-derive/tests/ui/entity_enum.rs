use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "SHAPE#{id}", sk = "SHAPE")]
enum Shape {
    Circle { id: String, radius: u32 },
    Square { id: String, side: u32 },
}

fn main() {}
