use dynamo_model::{Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{id}", sk = "PROFILE", validate = whole)]
struct User {
    id: String,
    #[dynamo(validate(length(max = 3)))]
    age: u64,
    #[dynamo(validate(range(min = "a")))]
    count: u32,
    #[dynamo(validate(pattern = "^[0-9]+$"))]
    code: u16,
    #[dynamo(validate(with = takes_a_number))]
    name: String,
}

fn takes_a_number(_: &u64) -> Result<(), String> {
    Ok(())
}

fn whole(_: &String) -> Result<(), String> {
    Ok(())
}

fn main() {}
