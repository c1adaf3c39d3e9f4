use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", delimiter = ":", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct Colons;

/// The table's delimiter is `:`; the template separates its fields with `.`.
#[derive(Entity)]
#[dynamo(table = Colons, pk = "{day}.{shard}", sk = "S")]
struct Sharded {
    day: String,
    shard: u8,
}

/// An index template takes the table's delimiter too.
#[derive(Entity)]
#[dynamo(table = Colons, pk = "P:{day}", sk = "S", index(GSI1, pk = "{day}|{shard}", sk = "X"))]
struct Indexed {
    day: String,
    shard: u8,
}

/// Declaring the delimiter on the entity is the fix.
#[derive(Entity)]
#[dynamo(table = Colons, delimiter = ".", pk = "{day}.{shard}", sk = "S")]
struct Declared {
    day: String,
    shard: u8,
}

fn main() {}
