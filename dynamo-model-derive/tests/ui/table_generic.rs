use std::marker::PhantomData;

use dynamo_model::Table;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App<T>(PhantomData<T>);

fn main() {}
