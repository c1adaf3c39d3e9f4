use dynamo_model::Table;

// An LSI shares the table's capacity.
#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    billing = "provisioned",
    capacity(read = 5, write = 5),
    lsi(name = "LSI1", sk = "LSK", capacity(read = 1, write = 1))
)]
struct LsiCapacity;

#[derive(Table)]
#[dynamo(pk = "PK", billing = "provisioned", capacity(read = 5))]
struct MissingWrite;

#[derive(Table)]
#[dynamo(pk = "PK", billing = "provisioned", capacity(read = -1, write = 5))]
struct NegativeRead;

#[derive(Table)]
#[dynamo(pk = "PK", billing = "reserved")]
struct UnknownBilling;

#[derive(Table)]
#[dynamo(pk = "PK", stream = "NEW_IMAGES")]
struct UnknownStreamView;

#[derive(Table)]
#[dynamo(pk = "PK", stream = "KEYS_ONLY", stream = "NEW_IMAGE")]
struct StreamTwice;

fn main() {}
