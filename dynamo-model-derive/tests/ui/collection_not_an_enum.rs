use dynamo_model::Collection;

#[derive(Collection)]
struct NotAnEnum {
    a: u32,
}

fn main() {}
