use dynamo_model::{Chunked, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "INBOX#{owner}", sk = "MSG#{msg_id}",
         index(GSI1, pk = "BODY#{body}", sk = "MSG#{msg_id}"))]
struct Message {
    owner: String,
    msg_id: String,
    #[dynamo(chunked)]
    body: Chunked<Vec<u8>>,
}

fn main() {}
