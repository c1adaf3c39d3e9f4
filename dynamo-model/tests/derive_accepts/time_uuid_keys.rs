//! `time::OffsetDateTime` and `uuid::Uuid` as key fields and as plain attributes.

use dynamo_model::{Entity, Table};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::macros::datetime;
use uuid::Uuid;

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK", gsi(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
struct App;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = App, pk = "USER#{user_id}", sk = "EVENT#{at}#{event_id}",
         index(GSI1, pk = "SESSION#{session}", sk = "{at}"))]
struct Event {
    user_id: Uuid,
    event_id: Uuid,
    at: OffsetDateTime,
    session: Option<Uuid>,
    seen_at: Option<OffsetDateTime>,
}

pub fn run() {
    let user_id = Uuid::from_u128(1);
    let event_id = Uuid::from_u128(2);
    let at = datetime!(2024-05-06 07:08:09.5 +02:00);
    let event = Event {
        user_id,
        event_id,
        at,
        session: Some(Uuid::from_u128(3)),
        seen_at: None,
    };
    // A key argument may be a value or a reference: both forms are what is tested here.
    #[allow(clippy::needless_borrows_for_generic_args)]
    let key = Event::key(EventKey {
        user_id,
        at: &at,
        event_id,
    });
    assert_eq!(key.raw().unwrap(), event.primary_key().raw().unwrap());
    assert_eq!(
        key.raw().unwrap().sk.as_deref(),
        Some("EVENT#2024-05-06T05:08:09.500000000Z#00000000-0000-0000-0000-000000000002")
    );
    let item = event.to_item().unwrap();
    assert!(item.contains_key("GSI1PK"));
    assert_eq!(Event::from_item(item).unwrap(), event);
}
