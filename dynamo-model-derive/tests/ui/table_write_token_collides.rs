use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", write_token = "_type")]
struct SameAsEntityType;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "_wt"))]
struct IndexKeyIsTheToken;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", write_token = "")]
struct Empty;

fn main() {}
