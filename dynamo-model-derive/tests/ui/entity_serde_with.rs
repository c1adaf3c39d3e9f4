use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct App;

mod as_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "PROFILE")]
struct User {
    user_id: String,
    #[serde(with = "as_string")]
    balance: u64,
}

fn main() {}
