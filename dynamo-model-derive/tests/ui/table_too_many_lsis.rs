use dynamo_model::Table;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    lsi(name = "LSI1", sk = "LSI1SK"),
    lsi(name = "LSI2", sk = "LSI2SK"),
    lsi(name = "LSI3", sk = "LSI3SK"),
    lsi(name = "LSI4", sk = "LSI4SK"),
    lsi(name = "LSI5", sk = "LSI5SK"),
    lsi(name = "LSI6", sk = "LSI6SK")
)]
struct App;

fn main() {}
