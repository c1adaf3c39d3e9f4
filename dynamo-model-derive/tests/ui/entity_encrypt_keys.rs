use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

// In the partition key template.
#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{email}", sk = "USER")]
struct InPk {
    #[dynamo(encrypt)]
    email: String,
}

// In the sort key template.
#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{id}", sk = "SSN#{ssn}")]
struct InSk {
    id: String,
    #[dynamo(encrypt)]
    ssn: String,
}

// In an index key template.
#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER", index(GSI1, pk = "BY_SSN", sk = "{ssn}"))]
struct InIndex {
    id: String,
    #[dynamo(encrypt)]
    ssn: String,
}

// A key field read from the keys only.
#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
struct KeyOnly {
    #[dynamo(key_only, encrypt)]
    id: String,
}

fn main() {}
