use dynamo_model::Attribute;

#[derive(Attribute)]
struct Pair(String, u32);

#[derive(Attribute)]
struct Marker;

#[derive(Attribute)]
union Bits {
    n: u32,
    f: f32,
}

#[derive(Attribute)]
struct Borrowed<'a> {
    name: &'a str,
}

fn main() {}
