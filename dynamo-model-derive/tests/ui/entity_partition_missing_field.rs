use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
         gsi(name = "ByRegion", pk = ["tournament", "region"]))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ROOM#{tenant}#{room}", sk = "MSG#{seq}",
         index(GSI1, pk = "AUTHOR#{tenant}#{author}", sk = "{seq}"),
         index(ByRegion, pk = [tournament, region]))]
struct Message {
    tenant: String,
    room: String,
    seq: u64,
    author: String,
    tournament: String,
    region: String,
}

fn main() {
    let _ = Message::partition(MessagePartition { room: "r-1" });
    // `seq` is in the sort key, not in the partition key.
    let _ = Message::gsi1_partition(MessageGsi1Partition { tenant: "t-1", seq: 7 });
    let _ = Message::by_region_partition(MessageByRegionPartition { region: "EU" });
}
