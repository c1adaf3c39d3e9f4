use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", ttl = "expires")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "A#{id}", sk = "A")]
struct UnknownRule {
    id: String,
    #[dynamo(validate(size(max = 3)))]
    name: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "B#{id}", sk = "B")]
struct BadPattern {
    id: String,
    #[dynamo(validate(pattern = "[a-z"))]
    name: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "C#{id}", sk = "C")]
struct EmptyLength {
    id: String,
    #[dynamo(validate(length(min = 5, max = 2)))]
    name: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "D#{id}", sk = "D")]
struct NoBounds {
    id: String,
    #[dynamo(validate(range()))]
    n: u32,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "E#{id}", sk = "E")]
struct NothingAllowed {
    id: String,
    #[dynamo(validate(one_of()))]
    role: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "F#{id}", sk = "F")]
struct NegativeLength {
    id: String,
    #[dynamo(validate(length(max = -1)))]
    name: String,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "G#{id}", sk = "G")]
struct ManagedFields {
    id: String,
    #[dynamo(skip, validate(length(max = 3)))]
    scratch: String,
    #[dynamo(version, validate(range(max = 10)))]
    version: u64,
    #[dynamo(ttl, validate(range(min = 0)))]
    expires: i64,
}

#[derive(Entity)]
#[dynamo(table = App, pk = "H#{id}", sk = "H")]
struct RulesOnManagedValues {
    id: String,
    #[dynamo(created, validate(with = recent))]
    at: time::OffsetDateTime,
    #[dynamo(key_format = "verbatim", validate(length(max = 3)))]
    code: String,
}

fn recent(_: &time::OffsetDateTime) -> Result<(), String> {
    Ok(())
}

fn main() {}
