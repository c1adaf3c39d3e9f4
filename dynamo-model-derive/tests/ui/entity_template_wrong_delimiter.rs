use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

/// The entity declares `.`: a placeholder followed by `#` breaks the template.
#[derive(Entity)]
#[dynamo(table = App, delimiter = ".", pk = "DAY.{day}", sk = "{a}#{b}")]
struct Declared {
    day: String,
    a: String,
    b: String,
}

/// The index declares `_`; its templates follow placeholders with `.`.
#[derive(Entity)]
#[dynamo(table = App, pk = "P#{a}", sk = "S",
         index(GSI1, delimiter = "_", pk = "{a}.{b}", sk = "X"))]
struct IndexDeclared {
    a: String,
    b: String,
}

/// No declaration: whatever the table's delimiter, one template has one.
#[derive(Entity)]
#[dynamo(table = App, pk = "P#{a}", sk = "{a}.{b}#{c}")]
struct Mixed {
    a: String,
    b: String,
    c: String,
}

fn main() {}
