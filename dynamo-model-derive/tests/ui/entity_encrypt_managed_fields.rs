use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct Version {
    id: String,
    #[dynamo(version, encrypt)]
    version: u64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B")]
struct Ttl {
    id: String,
    #[dynamo(ttl, encrypt)]
    expires: u64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "C#{id}", sk = "C")]
struct Created {
    id: String,
    #[dynamo(created, encrypt)]
    at: time::OffsetDateTime,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "D#{id}", sk = "D")]
struct Updated {
    id: String,
    #[dynamo(updated, encrypt)]
    at: time::OffsetDateTime,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "E#{tenant}", sk = "E")]
struct Generated {
    tenant: String,
    #[dynamo(generate = "ulid", encrypt)]
    id: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "F#{id}", sk = "F")]
struct Skipped {
    id: String,
    #[dynamo(skip, encrypt)]
    cache: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "G#{id}", sk = "G")]
struct Twice {
    id: String,
    #[dynamo(encrypt, encrypt)]
    ssn: String,
}

fn main() {}
