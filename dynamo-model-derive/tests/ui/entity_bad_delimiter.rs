use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
#[dynamo(delimiter = "/")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A-{a}", sk = "{b}-{c}")]
#[dynamo(delimiter = "-")]
struct Dashes {
    a: String,
    b: String,
    c: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{a}", sk = "B", index(GSI1, delimiter = "..", pk = "{a}", sk = "X"))]
struct TwoCharacters {
    a: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{a}", sk = "B", index(GSI1), delimiter = "#", delimiter = ".")]
struct Twice {
    a: String,
}

fn main() {}
