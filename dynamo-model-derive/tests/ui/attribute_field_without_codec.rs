use dynamo_model::Attribute;

struct Foreign;

#[derive(Attribute)]
struct Holder {
    value: Foreign,
}

fn main() {}
