use super::{GeneratedId, Timestamp, kind};
use crate::{Db, Entity, Error, Table, ValidationReason};
use aws_sdk_dynamodb::types::AttributeValue;
use std::time::{Duration, SystemTime};

#[derive(Table)]
#[dynamo(pk = "PK", sk = "SK")]
struct Social;

#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Social, pk = "USER#{user_id}", sk = "POST#{post_id}")]
struct Post {
    user_id: String,
    #[dynamo(generate = "ulid")]
    post_id: ulid::Ulid,
    #[dynamo(generate = "uuid_v4")]
    token: String,
    body: String,
    #[dynamo(created)]
    created_at: time::OffsetDateTime,
    #[dynamo(updated, key_format = "epoch_millis")]
    updated_at: time::OffsetDateTime,
}

fn post() -> Post {
    Post {
        user_id: "ada".into(),
        post_id: ulid::Ulid::nil(),
        token: String::new(),
        body: "hello".into(),
        created_at: time::OffsetDateTime::UNIX_EPOCH,
        updated_at: time::OffsetDateTime::UNIX_EPOCH,
    }
}

fn db() -> Db<Social> {
    crate::db::offline::<Social>()
}

#[test]
fn create_fills_unset_ids_and_sets_both_times_to_one_instant() -> Result<(), Error> {
    let mut p = post();
    let input = db().create(&mut p).params()?;
    assert!(!p.post_id.is_nil());
    assert_eq!(p.token.len(), 36, "a hyphenated UUID: {}", p.token);
    assert_eq!(p.created_at, p.updated_at);
    assert!(p.created_at > time::OffsetDateTime::UNIX_EPOCH);
    let item = input.item().expect("item");
    assert_eq!(item["SK"], AttributeValue::S(format!("POST#{}", p.post_id)));
    let millis = (p.updated_at.unix_timestamp_nanos() / 1_000_000).to_string();
    assert_eq!(
        item["updated_at"],
        AttributeValue::N(millis),
        "in the field's format"
    );
    assert!(
        input
            .condition_expression()
            .is_some_and(|c| c.contains("attribute_not_exists")),
        "created only where there is no item"
    );
    // A given id is kept.
    let mut given = post();
    given.post_id = ulid::Ulid::from_parts(7, 7);
    db().create(&mut given).params()?;
    assert_eq!(given.post_id, ulid::Ulid::from_parts(7, 7));
    Ok(())
}

#[test]
fn a_write_that_does_not_create_refuses_an_unset_generated_id() {
    let db = db();
    for refused in [
        db.put(&post()).params().map(drop),
        db.transact_write().put(db.put(&post())).params().map(drop),
    ] {
        let (reason, message) = crate::error::refusal(refused);
        assert_eq!(reason, ValidationReason::UnsetGeneratedId);
        assert!(message.contains("`post_id`"), "{message}");
    }
}

#[test]
fn puts_and_updates_set_the_update_time() -> Result<(), Error> {
    let mut p = post();
    p.post_id = ulid::Ulid::from_parts(1, 1);
    p.token = "t".into();
    let before = SystemTime::now() - Duration::from_secs(1);
    let input = db().put(&p).params()?;
    let AttributeValue::N(millis) = &input.item().expect("item")["updated_at"] else {
        panic!("a number");
    };
    let millis: i128 = millis.parse().expect("millis");
    let floor = before
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970");
    assert!(
        millis >= floor.as_millis() as i128,
        "stamped now, not the value's 1970"
    );
    let created = &input.item().expect("item")["created_at"];
    assert_ne!(
        created,
        &AttributeValue::S("1970-01-01T00:00:00.000000000Z".into()),
        "an unset creation time is the put's"
    );
    let guard = input.condition_expression().expect("condition");
    assert!(guard.ends_with("AND (attribute_not_exists(#created) OR #created = :created)"));
    assert_eq!(
        input.expression_attribute_values().expect("values")[":created"],
        *created
    );
    // A set one is written as given, and guarded: the stored one wins on an overwrite.
    p.created_at = time::OffsetDateTime::UNIX_EPOCH + Duration::from_secs(86_400);
    let given = db().put(&p).params()?;
    let day = AttributeValue::S("1970-01-02T00:00:00.000000000Z".into());
    assert_eq!(given.item().expect("item")["created_at"], day);
    assert_eq!(
        given.expression_attribute_values().expect("values")[":created"],
        day
    );
    let created_only = db().create(&mut post()).params()?;
    assert_eq!(
        created_only.condition_expression(),
        Some("attribute_not_exists(#n0)"),
        "a create needs no guard"
    );
    let (reason, _) = crate::error::refusal(db().batch_write().put(&p).params());
    assert_eq!(reason, ValidationReason::NotSupportedInBatch);

    let key = Post::key(PostKey {
        user_id: "ada",
        post_id: ulid::Ulid::from_parts(1, 1),
    });
    let update = db()
        .update(key.clone())
        .set(Post::fields().body, "hi")
        .params()?;
    let names = update.expression_attribute_names().expect("names");
    assert!(names.values().any(|n| n == "updated_at"), "{names:?}");
    assert!(!names.values().any(|n| n == "created_at"), "{names:?}");
    let set_created = db()
        .update(key.clone())
        .set(Post::fields().created_at, time::OffsetDateTime::now_utc())
        .params();
    let (reason, message) = crate::error::refusal(set_created);
    assert_eq!(reason, ValidationReason::CreationTime);
    assert!(message.contains("`created_at`"), "{message}");
    let upsert = db()
        .update(key)
        .upsert()
        .set(Post::fields().body, "hi")
        .params()?;
    assert!(
        upsert
            .update_expression()
            .is_some_and(|u| u.contains("if_not_exists")),
        "{:?}",
        upsert.update_expression()
    );
    Ok(())
}

#[test]
fn ids_of_each_kind_are_new_and_time_ordered_where_they_say_so() {
    let ulids: Vec<ulid::Ulid> = (0..100)
        .map(|_| <ulid::Ulid as GeneratedId<kind::Ulid>>::generate())
        .collect();
    assert!(ulids.windows(2).all(|w| w[0] < w[1]), "{ulids:?}");
    let v7: Vec<String> = (0..50)
        .map(|_| <String as GeneratedId<kind::UuidV7>>::generate())
        .collect();
    assert!(
        v7.windows(2).all(|w| w[0] < w[1]),
        "UUIDv7 text sorts in order"
    );
    let v4 = <uuid::Uuid as GeneratedId<kind::UuidV4>>::generate();
    assert_eq!(v4.get_version_num(), 4);
    assert!(<uuid::Uuid as GeneratedId<kind::UuidV7>>::is_unset(
        &uuid::Uuid::nil()
    ));
    let text = <String as GeneratedId<kind::Ulid>>::generate();
    assert_eq!(text.len(), 26);
    assert_eq!(text, text.to_uppercase());
}

#[test]
fn times_come_from_the_clock_in_each_type() {
    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
    assert_eq!(crate::Epoch::at(at), crate::Epoch(1_700_000_000));
    let before = SystemTime::UNIX_EPOCH - Duration::from_secs(5);
    assert_eq!(crate::Epoch::at(before), crate::Epoch(-5));
    let t = time::OffsetDateTime::at(at);
    assert_eq!(t.unix_timestamp_nanos(), 1_700_000_000_123_000_000);
    let c = chrono::DateTime::<chrono::Utc>::at(at);
    assert_eq!(c.timestamp_millis(), 1_700_000_000_123);
    assert_eq!(
        Option::<crate::Epoch>::at(at),
        Some(crate::Epoch(1_700_000_000))
    );
}

#[test]
fn a_cut_time_is_a_whole_step_at_or_before_it() {
    let at = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
    let millis = super::cut(at, 1_000_000);
    assert_eq!(
        millis,
        SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_000_000)
    );
    assert_eq!(super::cut(at, 1), at);
    let before = SystemTime::UNIX_EPOCH - Duration::from_millis(1_500);
    let seconds = super::cut(before, 1_000_000_000);
    assert_eq!(
        seconds,
        SystemTime::UNIX_EPOCH - Duration::from_secs(2),
        "towards the past"
    );
}
