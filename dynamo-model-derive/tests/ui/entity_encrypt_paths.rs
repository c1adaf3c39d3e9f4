use dynamo_model::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

#[derive(Entity)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
struct User {
    id: String,
    #[dynamo(encrypt)]
    ssn: String,
    #[dynamo(encrypt)]
    visits: u64,
    #[dynamo(encrypt)]
    tags: Vec<String>,
}

async fn demo(db: Db<App>) {
    let f = User::fields();
    // A ciphertext cannot be compared with a value, in a condition or a filter.
    let _ = f.ssn.eq("123-45-6789".to_string());
    let _ = f.ssn.begins_with("123");
    let _ = f.visits.gt(3u64);
    let _ = db.query(User::partition("1")).filter(f.ssn.contains("45"));
    // DynamoDB cannot compute on a ciphertext: only set and remove reach the field.
    let _ = db.update(User::key("1")).add(f.visits, 1);
    let _ = db.update(User::key("1")).append(f.tags, vec!["a".to_string()]);
    let _ = db.update(User::key("1")).set_if_absent(f.ssn, "x".to_string());
}

fn main() {}
