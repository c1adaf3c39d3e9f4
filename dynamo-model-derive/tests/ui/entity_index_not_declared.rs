use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
         gsi(name = "GSI-2", pk = "GSI2PK", sk = "GSI2SK"))]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE",
         index(GSI2, pk = "EMAIL#{email}", sk = "USER"))]
struct User {
    user_id: String,
    email: Option<String>,
}

// Names are matched exactly: `GSI_2` is not `GSI-2`.
#[derive(Entity)]
#[dynamo(table = App, pk = "ORG#{org_id}", sk = "ORG",
         index("GSI_2", pk = "NAME#{name}", sk = "ORG"))]
struct Org {
    org_id: String,
    name: String,
}

fn main() {}
