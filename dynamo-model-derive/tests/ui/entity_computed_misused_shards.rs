use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

// Two shards in one template.
#[derive(Entity)]
#[dynamo(table = App, pk = "A#{a:shard(4)}#{b:shard(4)}", sk = "{a}#{b}")]
struct Two {
    a: String,
    b: String,
}

// A shard of a field the partition key already holds.
#[derive(Entity)]
#[dynamo(table = App, pk = "B#{a}#{a:shard(4)}", sk = "B")]
struct Redundant {
    a: String,
}

// One random field with two counts.
#[derive(Entity)]
#[dynamo(table = App, pk = "C#{slot:random(4)}", sk = "{id}",
         index(GSI1, pk = "D#{slot:random(8)}", sk = "{id}"))]
struct Counts {
    slot: u16,
    id: String,
}

// An index an update recomputes, from a key field the key holds only as a bucket.
#[derive(Entity)]
#[dynamo(table = App, pk = "E#{at:date}", sk = "{id}",
         index(GSI1, pk = "STATUS#{status}", sk = "{at}"))]
struct Bucketed {
    at: u64,
    id: String,
    status: String,
}

fn main() {}
