use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "ByPlace", pk = ["CountryPK", "CityPK"]))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "STORE#{store_id}", sk = "STORE",
         index(ByPlace, pk = "PLACE#{country}#{city}"))]
struct Store {
    store_id: String,
    country: String,
    city: String,
}

fn main() {}
