//! get / put / delete / update against DynamoDB Local.

use crate::common::*;
use dynamo_model::{local, Error};
use time::macros::datetime;
use uuid::Uuid;

#[tokio::test]
async fn put_then_get_round_trips() -> TestResult {
    let (db, user) = with_user("u-1").await?;
    assert_eq!(db.get(User::key("u-1")).await?, Some(user.clone()));
    assert_eq!(
        db.get(User::key("u-1")).consistent().send().await?,
        Some(user)
    );
    assert_eq!(db.get(User::key("nobody")).await?, None);
    Ok(())
}

#[tokio::test]
async fn put_replaces_an_item_of_the_same_entity() -> TestResult {
    let (db, mut user) = with_user("u-1").await?;
    user.display_name = "Renamed".into();
    db.put(&user).await?;
    assert_eq!(
        db.get(User::key("u-1")).await?.map(|u| u.display_name),
        Some("Renamed".into())
    );
    Ok(())
}

#[tokio::test]
async fn put_if_absent_refuses_an_existing_item_and_returns_it() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let first = User::sample("u-1");
    db.put(&first).if_absent().await?;
    let mut second = first.clone();
    second.display_name = "Second".into();
    let err = db.put(&second).if_absent().await.unwrap_err();
    match &err {
        Error::ConditionFailed {
            entity,
            key,
            current,
            ..
        } => {
            assert_eq!(*entity, "User");
            assert_eq!(key, "PK=USER#u-1, SK=PROFILE");
            assert!(current.is_some());
        }
        other => panic!("expected ConditionFailed, got {other:?}"),
    }
    assert_eq!(err.current::<User>().transpose()?, Some(first.clone()));
    assert_eq!(db.get(User::key("u-1")).await?, Some(first));
    Ok(())
}

#[tokio::test]
async fn put_with_a_condition() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let f = User::fields();
    let mut user = User::sample("u-1");
    user.login_count = 5;
    db.put(&user).await?;

    user.login_count = 6;
    let err = db
        .put(&user)
        .condition(f.login_count.gt(10u32))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ConditionFailed { .. }), "{err:?}");
    assert_eq!(
        db.get(User::key("u-1")).await?.map(|u| u.login_count),
        Some(5)
    );

    db.put(&user)
        .condition(
            f.login_count
                .eq(5u32)
                .and(f.display_name.begins_with("User")),
        )
        .await?;
    assert_eq!(
        db.get(User::key("u-1")).await?.map(|u| u.login_count),
        Some(6)
    );
    Ok(())
}

#[tokio::test]
async fn put_never_overwrites_another_entity_type_under_the_same_key() -> TestResult {
    let (db, user) = with_user("u-1").await?;
    let err = twin(&db)
        .put(&Impostor {
            user_id: "u-1".into(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::OtherEntityStored {
                entity: "Impostor",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(db.get(User::key("u-1")).await?, Some(user));
    Ok(())
}

#[tokio::test]
async fn delete_plain_missing_and_must_exist() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&User::sample("u-1")).await?;
    db.delete(User::key("u-1")).await?;
    assert_eq!(db.get(User::key("u-1")).await?, None);
    // Deleting nothing is not an error by default...
    db.delete(User::key("u-1")).await?;
    // ...unless asked.
    let err = db.delete(User::key("u-1")).must_exist().await.unwrap_err();
    assert!(
        matches!(err, Error::NotFound { entity: "User", .. }),
        "{err:?}"
    );
    Ok(())
}

#[tokio::test]
async fn delete_with_a_condition_and_returning_the_old_item() -> TestResult {
    let (db, user) = with_user("u-1").await?;
    let f = User::fields();
    let delete = || db.delete(User::key("u-1"));

    let err = delete()
        .condition(f.login_count.gt(0u32))
        .await
        .unwrap_err();
    assert_eq!(err.current::<User>().transpose()?, Some(user.clone()));
    assert!(
        db.get(User::key("u-1")).await?.is_some(),
        "a failed delete removed the item"
    );

    let old = delete()
        .condition(f.login_count.eq(0u32))
        .return_old()
        .await?;
    assert_eq!(old, Some(user));
    assert_eq!(delete().return_old().await?, None);
    Ok(())
}

#[tokio::test]
async fn delete_never_removes_another_entity_type() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&User::sample("u-1")).await?;
    let err = twin(&db).delete(Impostor::key("u-1")).await.unwrap_err();
    assert!(matches!(err, Error::OtherEntityStored { .. }), "{err:?}");
    assert!(db.get(User::key("u-1")).await?.is_some());
    Ok(())
}

#[tokio::test]
async fn update_sets_adds_and_removes() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let f = Order::fields();
    let created_at = datetime!(2024-03-01 12:00:00.5 UTC);
    let order_id = Uuid::from_u128(7);
    let order = Order {
        user_id: "u-1".into(),
        order_id,
        created_at,
        total_cents: 1000,
        status: "open".into(),
        note: Some("gift".into()),
    };
    db.put(&order).await?;

    let updated = db
        .update(Order::key(OrderKey {
            user_id: "u-1",
            created_at,
            order_id,
        }))
        .set(f.total_cents, 1250u64) // feeds GSI3's key: recomputed (ADD would be refused)
        .set(f.status, "shipped")
        .remove(f.note)
        .await?;
    let expected = Order {
        total_cents: 1250,
        status: "shipped".into(),
        note: None,
        ..order
    };
    assert_eq!(updated, expected);
    assert_eq!(
        db.get(Order::key(OrderKey {
            user_id: "u-1",
            created_at,
            order_id
        }))
        .await?,
        Some(expected)
    );

    // Setting `None` removes the attribute too.
    let updated = db
        .update(Order::key(OrderKey {
            user_id: "u-1",
            created_at,
            order_id,
        }))
        .set(f.note, Some("again".to_string()))
        .await?;
    assert_eq!(updated.note.as_deref(), Some("again"));
    let updated = db
        .update(Order::key(OrderKey {
            user_id: "u-1",
            created_at,
            order_id,
        }))
        .set(f.note, None)
        .await?;
    assert_eq!(updated.note, None);
    Ok(())
}

#[tokio::test]
async fn update_of_a_missing_item_is_not_found_and_creates_nothing() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let f = User::fields();
    let err = db
        .update(User::key("ghost"))
        .add(f.login_count, 1)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::NotFound { entity: "User", .. }),
        "{err:?}"
    );
    assert_eq!(db.get(User::key("ghost")).await?, None);
    Ok(())
}

#[tokio::test]
async fn update_with_a_failing_condition_changes_nothing() -> TestResult {
    let (db, user) = with_user("u-1").await?;
    let f = User::fields();
    let err = db
        .update(User::key("u-1"))
        .add(f.login_count, 1)
        .condition(f.login_count.ge(100u32))
        .await
        .unwrap_err();
    assert_eq!(err.current::<User>().transpose()?, Some(user.clone()));
    assert_eq!(db.get(User::key("u-1")).await?, Some(user));
    Ok(())
}

#[tokio::test]
async fn update_refuses_what_it_cannot_do_safely_before_sending() -> TestResult {
    let (db, _) = with_user("u-1").await?;
    let f = User::fields();

    // `email` is the only field of the GSI1 templates: the update recomputes the index key.
    db.update(User::key("u-1"))
        .set(f.email, Some("a@example.com".to_string()))
        .await?;
    assert_eq!(
        items_of(db.query(User::gsi1_partition("a@example.com")))
            .await?
            .len(),
        1
    );
    db.update(User::key("u-1")).set(f.email, None).await?;
    assert!(items_of(db.query(User::gsi1_partition("a@example.com")))
        .await?
        .is_empty());

    refused(
        db.update(User::key("u-1"))
            .add(f.login_count, 1)
            .add(f.login_count, 1),
        dynamo_model::ValidationReason::OverlappingPaths,
    )
    .await;

    refused(
        db.update(User::key("u-1")),
        dynamo_model::ValidationReason::NoOperations,
    )
    .await;

    assert_eq!(db.get(User::key("u-1")).await?, Some(User::sample("u-1")));
    Ok(())
}

#[tokio::test]
async fn reserved_word_attributes_work_in_every_expression() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let f = Thing::fields();
    let thing = Thing {
        name: "n".into(),
        status: "new".into(),
        data: Some("d".into()),
        ttl: Some(1),
        r#type: "t".into(),
        size: 3,
    };
    db.put(&thing)
        .condition(f.status.not_exists().or(f.r#type.eq("t")))
        .await?;
    let updated = db
        .update(Thing::key("n"))
        .set(f.status, "used")
        .remove(f.data)
        .add(f.ttl, 10)
        .set(f.r#type, "u")
        .add(f.size, -1)
        .condition(
            f.status
                .eq("new")
                .and(f.data.exists())
                .and(f.data.size().eq(1)),
        )
        .await?;
    assert_eq!(
        updated,
        Thing {
            status: "used".into(),
            data: None,
            ttl: Some(11),
            r#type: "u".into(),
            size: 2,
            ..thing
        }
    );
    db.delete(Thing::key("n"))
        .condition(
            f.name
                .eq("n")
                .and(!f.status.eq("new"))
                .and(f.size.between(0, 5)),
        )
        .await?;
    Ok(())
}

#[tokio::test]
async fn create_table_enables_ttl() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    assert_eq!(ttl_attribute(&db).await?.as_deref(), Some("expires_at"));
    Ok(())
}

#[tokio::test]
async fn update_expressions_for_counters_lists_sets_and_defaults() -> TestResult {
    let db = table_with([Profile {
        id: "p".into(),
        credits: 10,
        tags: vec!["m".into()],
        roles: Default::default(),
        nickname: None,
    }])
    .await?;
    let f = Profile::fields();
    let key = || Profile::key("p");

    let p = db
        .update(key())
        .subtract(f.credits, 3)
        .append(f.tags, vec!["z".to_string()])
        .add_to_set(f.roles, ["admin", "dev"])
        .set_if_absent(f.nickname, Some("first".to_string()))
        .condition(f.credits.ge(3u32))
        .await?;
    assert_eq!(
        (p.credits, p.tags.clone(), p.nickname.as_deref()),
        (7, vec!["m".to_string(), "z".into()], Some("first"))
    );
    assert_eq!(
        p.roles.iter().map(String::as_str).collect::<Vec<_>>(),
        ["admin", "dev"]
    );

    let p = db
        .update(key())
        .prepend(f.tags, vec!["a".to_string()])
        .delete_from_set(f.roles, ["admin"])
        .set_if_absent(f.nickname, Some("second".to_string()))
        .await?;
    assert_eq!(p.tags, ["a", "m", "z"]);
    assert_eq!(
        p.roles.iter().map(String::as_str).collect::<Vec<_>>(),
        ["dev"]
    );
    assert_eq!(
        p.nickname.as_deref(),
        Some("first"),
        "if_not_exists keeps the existing value"
    );

    // Unsigned counters cannot go below zero when the condition guards the subtraction.
    let err = db
        .update(key())
        .subtract(f.credits, 8)
        .condition(f.credits.ge(8u32))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ConditionFailed { .. }), "{err:?}");

    // Return values: the old entity, only the updated attributes, or nothing.
    let old = db
        .update(key())
        .subtract(f.credits, 1)
        .send_returning_old()
        .await?;
    assert_eq!(old.credits, 7);
    let updated = db
        .update(key())
        .subtract(f.credits, 1)
        .send_returning_updated()
        .await?;
    assert_eq!(
        updated
            .get("credits")
            .and_then(|v| v.as_n().ok())
            .map(String::as_str),
        Some("5")
    );
    assert!(!updated.contains_key("tags"));
    db.update(key())
        .subtract(f.credits, 1)
        .send_returning_nothing()
        .await?;
    assert_eq!(db.get(key()).await?.map(|p| p.credits), Some(4));
    Ok(())
}

#[tokio::test]
async fn nested_map_paths_in_updates_and_conditions() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let f = Prefs::fields();
    let key = || Prefs::key("p");
    let prefs = Prefs {
        id: "p".into(),
        settings: [
            ("theme".to_string(), "light".to_string()),
            ("old".into(), "x".into()),
        ]
        .into(),
        counters: [("logins".to_string(), 1u64)].into(),
        address: Address {
            city: "Paris".into(),
            zip: "75001".into(),
        },
    };
    db.put(&prefs).await?;

    let updated = db
        .update(key())
        .set(f.settings.at("theme"), "dark")
        .set(f.settings.at("lang.with.dots"), "fr") // keys are aliased: any character works
        .remove_at(f.settings.at("old"))
        .add(f.counters.at("logins"), 1)
        .add(f.counters.at("exports"), 5) // absent: counts from zero
        .set(f.address.field::<String>("city"), "Lyon")
        .condition(
            f.settings
                .at("theme")
                .eq("light")
                .and(f.address.field::<String>("zip").begins_with("75")),
        )
        .await?;
    assert_eq!(
        updated.settings.get("theme").map(String::as_str),
        Some("dark")
    );
    assert_eq!(
        updated.settings.get("lang.with.dots").map(String::as_str),
        Some("fr")
    );
    assert!(!updated.settings.contains_key("old"));
    assert_eq!(updated.counters.get("logins"), Some(&2));
    assert_eq!(updated.counters.get("exports"), Some(&5));
    assert_eq!(
        updated.address,
        Address {
            city: "Lyon".into(),
            zip: "75001".into()
        }
    );

    // A failing nested condition changes nothing.
    let err = db
        .update(key())
        .set(f.settings.at("theme"), "x")
        .condition(f.settings.at("theme").eq("light"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ConditionFailed { .. }), "{err:?}");
    // Overlapping paths are refused before sending.
    refused(
        db.update(key())
            .set(f.settings.at("theme"), "x")
            .remove_at(f.settings.at("theme")),
        dynamo_model::ValidationReason::OverlappingPaths,
    )
    .await;

    // Nested paths in query filters.
    let found = items_of(
        db.query(Prefs::partition("p"))
            .filter(f.address.field::<String>("city").eq("Lyon")),
    )
    .await?;
    assert_eq!(found.len(), 1);
    let none = items_of(
        db.query(Prefs::partition("p"))
            .filter(f.settings.at("theme").eq("light")),
    )
    .await?;
    assert!(none.is_empty());
    Ok(())
}
