//! Secondary-index queries: typed partitions and sort keys per index, sparse entries.

use crate::common::*;
use dynamo_model::{local, Entity, Error};

#[tokio::test]
async fn a_sparse_gsi_holds_only_items_whose_template_fields_are_present() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let mut with_email = User::sample("u-1");
    with_email.email = Some("ada@example.com".into());
    db.put(&with_email).await?;
    db.put(&User::sample("u-2")).await?; // no email: not in GSI1

    let found = items_of(db.query(User::gsi1_partition("ada@example.com"))).await?;
    assert_eq!(found, [with_email.clone()]);
    let exact = items_of(
        db.query(User::gsi1_partition("ada@example.com"))
            .sk(User::gsi1_sk()),
    )
    .await?;
    assert_eq!(exact, [with_email]);
    assert!(
        items_of(db.query(User::gsi1_partition("nobody@example.com")))
            .await?
            .is_empty()
    );

    // Writing the entity again without the field takes it out of the index.
    db.put(&User::sample("u-1")).await?;
    assert!(items_of(db.query(User::gsi1_partition("ada@example.com")))
        .await?
        .is_empty());

    // GSIs are eventually consistent only: refused before sending.
    refused(
        db.query(User::gsi1_partition("x")).consistent().all(),
        dynamo_model::ValidationReason::ConsistentIndexRead,
    )
    .await;
    Ok(())
}

fn member(id: &str, team: Option<&str>, level: u32, nick: &str) -> Member {
    Member {
        id: id.into(),
        team: team.map(Into::into),
        level,
        nick: nick.into(),
        points: 0,
    }
}

async fn team_members(db: &dynamo_model::Db<App>, team: &str) -> Result<Vec<String>, Error> {
    let items = items_of(db.query(Member::gsi1_partition(team))).await?;
    Ok(items.into_iter().map(|m| m.id).collect())
}

#[tokio::test]
async fn an_overloaded_gsi_serves_three_entity_types_in_one_partition() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    db.put(&Team {
        team: "red".into(),
        motto: "go".into(),
    })
    .await?;
    db.put(&member("m1", Some("red"), 3, "ann")).await?;
    db.put(&member("m2", Some("red"), 10, "bob")).await?;
    db.put(&member("m3", Some("blue"), 1, "cy")).await?;
    db.put(&Badge {
        badge: "gold".into(),
        team: "red".into(),
    })
    .await?;
    let mut user = User::sample("u");
    user.email = Some("red".into()); // EMAIL#red: same index, another partition
    db.put(&user).await?;

    let view = items_of(
        db.query(Team::gsi1_partition("red"))
            .collection::<TeamView>(),
    )
    .await?;
    assert!(
        matches!(&view[0], TeamView::Team(t) if t.motto == "go"),
        "{view:?}"
    );
    assert!(
        matches!(&view[1], TeamView::Badge(b) if b.badge == "gold"),
        "{view:?}"
    );
    let members: Vec<&str> = view[2..]
        .iter()
        .filter_map(|v| match v {
            TeamView::Member(m) => Some(m.id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(members, ["m1", "m2"], "members sorted by level");
    assert_eq!(view.len(), 4);

    // Each entity's own view of the same index partition.
    assert_eq!(team_members(&db, "red").await?, ["m1", "m2"]);
    let senior = items_of(
        db.query(Member::gsi1_partition("red"))
            .sk(Member::gsi1_sk().level().ge(5u32)),
    )
    .await?;
    assert_eq!(
        senior.iter().map(|m| m.nick.as_str()).collect::<Vec<_>>(),
        ["bob"]
    );
    let teams = items_of(db.query(Team::gsi1_partition("red"))).await?;
    assert_eq!(teams.len(), 1);
    Ok(())
}

#[tokio::test]
async fn updates_recompute_or_refuse_every_index_key_they_touch() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let f = Member::fields();
    db.put(&member("m", Some("red"), 1, "ann")).await?;

    // A field outside every template: the index entry is untouched.
    db.update(Member::key("m")).add(f.points, 5).await?;
    assert_eq!(team_members(&db, "red").await?, ["m"]);

    // Part of a template without the rest: refused, nothing written.
    for attempt in [
        db.update(Member::key("m"))
            .set(f.team, Some("blue".to_string())),
        db.update(Member::key("m"))
            .set(f.team, Some("blue".to_string()))
            .set(f.level, 2u32),
        db.update(Member::key("m")).set(f.nick, "bo"),
        db.update(Member::key("m"))
            .set(f.level, 2u32)
            .set(f.nick, "bo")
            .add(f.points, 1),
    ] {
        refused(
            attempt,
            dynamo_model::ValidationReason::IncompleteIndexTemplate,
        )
        .await;
    }
    // ADD cannot be recomputed client-side.
    let err = db
        .update(Member::key("m"))
        .set(f.team, Some("red".to_string()))
        .set(f.nick, "ann")
        .add(f.level, 1)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("computed by DynamoDB"), "{err}");
    let stored = db
        .get(Member::key("m"))
        .consistent()
        .await?
        .ok_or("missing")?;
    assert_eq!(
        (
            stored.team.as_deref(),
            stored.level,
            stored.nick.as_str(),
            stored.points
        ),
        (Some("red"), 1, "ann", 5)
    );

    // Every field of the template: recomputed in the same request.
    let moved = db
        .update(Member::key("m"))
        .set(f.team, Some("blue".to_string()))
        .set(f.level, 7u32)
        .set(f.nick, "bo")
        .await?;
    assert_eq!(moved.team.as_deref(), Some("blue"));
    assert!(team_members(&db, "red").await?.is_empty());
    assert_eq!(team_members(&db, "blue").await?, ["m"]);
    let by_level = items_of(
        db.query(Member::gsi1_partition("blue"))
            .sk(Member::gsi1_sk().level().eq(7u32).nick().eq("bo")),
    )
    .await?;
    assert_eq!(by_level.len(), 1);

    // Clearing an optional template field takes the item out of the sparse index,
    // even when the other fields are not part of the update.
    db.update(Member::key("m")).set(f.team, None).await?;
    assert!(team_members(&db, "blue").await?.is_empty());
    let raw = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .key(
            "PK",
            dynamo_model::aws_sdk_dynamodb::types::AttributeValue::S("MEMBER#m".into()),
        )
        .key(
            "SK",
            dynamo_model::aws_sdk_dynamodb::types::AttributeValue::S("MEMBER".into()),
        )
        .send()
        .await?
        .item
        .ok_or("missing")?;
    assert!(
        !raw.contains_key("GSI1PK") && !raw.contains_key("GSI1SK"),
        "{raw:?}"
    );

    // Setting every field again brings it back.
    db.update(Member::key("m"))
        .set(f.team, Some("red".to_string()))
        .set(f.level, 2u32)
        .set(f.nick, "al")
        .await?;
    assert_eq!(team_members(&db, "red").await?, ["m"]);
    Ok(())
}

#[tokio::test]
async fn an_lsi_is_queried_with_strong_consistency_and_kept_fresh() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let f = Order::fields();
    let t = time::macros::datetime!(2024-01-01 0:00 UTC);
    let id = |i: u128| uuid::Uuid::from_u128(i);
    for (i, status) in ["open", "shipped", "open", "cancelled"]
        .into_iter()
        .enumerate()
    {
        db.put(&Order {
            user_id: "u".into(),
            order_id: id(i as u128),
            created_at: t + time::Duration::hours(i as i64),
            total_cents: 100 * i as u64,
            status: status.into(),
            note: None,
        })
        .await?;
    }
    // Items with equal index sort keys come in no defined order.
    let totals = |items: Vec<Order>| {
        let mut t: Vec<u64> = items.iter().map(|o| o.total_cents).collect();
        t.sort_unstable();
        t
    };
    let open = items_of(
        db.query(Order::lsi1_partition("u"))
            .sk(Order::lsi1_sk().status().eq("open"))
            .consistent(),
    )
    .await?;
    assert_eq!(totals(open), [0, 200]);
    let statuses: Vec<String> = db
        .query(Order::lsi1_partition("u"))
        .consistent()
        .all()
        .await?
        .mapped(|o| o.status);
    assert_eq!(statuses, ["cancelled", "open", "open", "shipped"]);

    // Updating the LSI's field recomputes its sort key in the same request; a strongly
    // consistent read of the LSI sees it at once.
    db.update(Order::key(OrderKey {
        user_id: "u",
        created_at: t,
        order_id: id(0),
    }))
    .set(f.status, "shipped")
    .await?;
    let open = items_of(
        db.query(Order::lsi1_partition("u"))
            .sk(Order::lsi1_sk().status().eq("open"))
            .consistent(),
    )
    .await?;
    assert_eq!(totals(open), [200]);
    let shipped = items_of(
        db.query(Order::lsi1_partition("u"))
            .sk(Order::lsi1_sk().status().starts_with("ship"))
            .consistent(),
    )
    .await?;
    assert_eq!(shipped.len(), 2);
    Ok(())
}

async fn seed_orders(db: &dynamo_model::Db<App>) -> Result<Vec<Order>, Error> {
    let t = time::macros::datetime!(2024-01-01 0:00 UTC);
    let mut orders = Vec::new();
    for i in 0..6u128 {
        let order = Order {
            user_id: format!("u{}", i % 2),
            order_id: uuid::Uuid::from_u128(i),
            created_at: t + time::Duration::days(i as i64),
            total_cents: 1000 - 100 * i as u64,
            status: if i % 3 == 0 { "shipped" } else { "open" }.into(),
            note: Some("n".into()),
        };
        db.put(&order).await?;
        orders.push(order);
    }
    Ok(orders)
}

#[tokio::test]
async fn a_keys_only_index_gives_typed_keys_and_hydrates_in_one_call() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let orders = seed_orders(&db).await?;
    let open: Vec<&Order> = orders.iter().filter(|o| o.status == "open").collect();

    let open_index = || db.query(Order::gsi2_partition("open"));
    let keys = items_of(open_index().keys_only()).await?;
    let expected: Vec<dynamo_model::Key<Order>> = open.iter().map(|o| o.primary_key()).collect();
    assert_eq!(keys, expected, "sorted by created_at");

    // Whole entities cannot come from a KEYS_ONLY index: refused with a hint.
    let err = open_index().all().await.unwrap_err();
    assert!(err.to_string().contains("keys_only"), "{err}");

    // Hydrate: newest two open orders, whole, in index order; the cursor continues.
    let newest_two = || open_index().keys_only().reverse().limit(2);
    let first = newest_two().hydrate(None).await?;
    assert_eq!(first.items.iter().collect::<Vec<_>>(), [open[3], open[2]]);
    let rest = newest_two().hydrate(first.cursor.as_ref()).await?;
    assert_eq!(rest.items.iter().collect::<Vec<_>>(), [open[1], open[0]]);
    Ok(())
}

#[tokio::test]
async fn updating_a_field_next_to_key_fields_in_a_template_recomputes_the_index_key() -> TestResult
{
    let db = local::fresh_table::<App>().await?;
    let orders = seed_orders(&db).await?;
    let o = &orders[1];
    // GSI2 is `STATUS#{status}` / `{created_at}#{order_id}`: the key fields come from the key.
    db.update(Order::key(OrderKey {
        user_id: o.user_id.as_str(),
        created_at: o.created_at,
        order_id: o.order_id,
    }))
    .set(Order::fields().status, "shipped")
    .await?;
    let shipped = items_of(db.query(Order::gsi2_partition("shipped")).keys_only()).await?;
    assert!(shipped.contains(&o.primary_key()));
    let open = items_of(db.query(Order::gsi2_partition("open")).keys_only()).await?;
    assert!(!open.contains(&o.primary_key()));
    Ok(())
}

#[tokio::test]
async fn an_include_index_is_read_as_a_partial_view() -> TestResult {
    let db = local::fresh_table::<App>().await?;
    let orders = seed_orders(&db).await?;
    let cheapest = items_of(db.query(OrderTotal::gsi3_partition()).limit(3)).await?;
    let mut by_total: Vec<&Order> = orders.iter().collect();
    by_total.sort_by_key(|o| o.total_cents);
    assert_eq!(
        cheapest
            .iter()
            .map(|v| (v.order_id, v.total_cents))
            .collect::<Vec<_>>(),
        by_total[..3]
            .iter()
            .map(|o| (o.order_id, o.total_cents))
            .collect::<Vec<_>>()
    );
    // The full entity does not fit the projection: refused before sending, naming what
    // the index leaves out.
    let err = db.query(Order::gsi3_partition()).all().await.unwrap_err();
    assert_refused(&err, dynamo_model::ValidationReason::IndexProjection);
    assert!(err.to_string().contains("`status`"), "{err}");
    Ok(())
}

/// A native multi-attribute GSI: two partition-key attributes, two sort-key attributes,
/// all the entity's own fields.
#[derive(dynamo_model::Table)]
#[dynamo(pk = "PK", sk = "SK",
         gsi(name = "ByRegion", pk = ["tournament", "region"], sk = ["score:N", "player"]))]
pub struct Arena;

#[derive(Entity, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
#[dynamo(table = Arena, pk = "MATCH#{match_id}", sk = "MATCH",
         index(ByRegion, pk = [tournament, region], sk = [score, player]))]
pub struct Match {
    pub match_id: u32,
    pub tournament: String,
    pub region: Option<String>, // sparse: no region, not in the index
    pub score: u32,
    pub player: String,
}

#[tokio::test]
async fn a_multi_attribute_gsi_key_is_declared_and_queried_through_the_same_api() -> TestResult {
    let db = local::fresh_table::<Arena>().await?;
    let players = ["ann", "abe", "bob", "cy", "dee", "al"];
    for (i, player) in players.iter().enumerate() {
        db.put(&Match {
            match_id: i as u32,
            tournament: "worlds".into(),
            region: Some(if i % 2 == 0 { "EU" } else { "NA" }.into()),
            score: 10 * (i as u32 % 3),
            player: (*player).into(),
        })
        .await?;
    }
    db.put(&Match {
        match_id: 99,
        tournament: "worlds".into(),
        region: None,
        score: 100,
        player: "zed".into(),
    })
    .await?;

    let q = || {
        db.query(Match::by_region_partition(MatchByRegionPartition {
            tournament: "worlds",
            region: "EU",
        }))
    };
    let eu: Vec<(u32, String)> = q().all().await?.mapped(|m| (m.score, m.player));
    assert_eq!(
        eu,
        [(0, "ann".into()), (10, "dee".into()), (20, "bob".into())],
        "sorted by score, then player"
    );

    let top = q().reverse().limit(1).all().await?.items;
    assert_eq!(top[0].player, "bob");
    let from_10 = q()
        .sk(Match::by_region_sk().score().ge(10u32))
        .all()
        .await?
        .items;
    assert_eq!(from_10.len(), 2);
    let exact = q()
        .sk(Match::by_region_sk().score().eq(10u32).player().eq("dee"))
        .all()
        .await?
        .items;
    assert_eq!(exact.len(), 1);
    let na_a = items_of(
        db.query(Match::by_region_partition(MatchByRegionPartition {
            tournament: "worlds",
            region: "NA",
        }))
        .sk(Match::by_region_sk()
            .score()
            .eq(10u32)
            .player()
            .begins_with("a")),
    )
    .await?;
    assert_eq!(
        na_a.iter().map(|m| m.player.as_str()).collect::<Vec<_>>(),
        ["abe"]
    );

    // Paging over the multi-attribute key with cursors.
    let first = q().limit(2).page(None).await?;
    let rest = q().limit(2).page(first.cursor.as_ref()).await?;
    assert_eq!(first.items.len() + rest.items.len(), 3);
    assert_eq!(rest.items[0].player, "bob");
    let err = db
        .query(Match::by_region_partition(MatchByRegionPartition {
            tournament: "worlds",
            region: "NA",
        }))
        .page(first.cursor.as_ref())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Cursor { .. }), "{err:?}");

    // The key attributes are the fields: an update moves the item within the index.
    db.update(Match::key(0u32))
        .set(Match::fields().score, 30u32)
        .await?;
    assert_eq!(q().reverse().limit(1).all().await?.items[0].player, "ann");
    Ok(())
}

#[tokio::test]
async fn empty_index_keys_and_expiry_on_keys_only_indexes_are_refused_before_sending() -> TestResult
{
    let db = local::fresh_table::<App>().await?;
    // GSI1PK would be "": DynamoDB rejects empty key values, so nothing is sent.
    let err = db
        .put(&Tag {
            id: "t".into(),
            label: String::new(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Validation { message, reason: dynamo_model::ValidationReason::EmptyKeyValue, .. } if message.contains("empty")),
        "{err:?}"
    );
    refused(
        db.put(&Tag {
            id: "t".into(),
            label: "x".repeat(3000),
        }),
        dynamo_model::ValidationReason::KeyTooLong,
    )
    .await;
    assert!(db.get(Tag::key("t")).await?.is_none());
    db.put(&Tag {
        id: "t".into(),
        label: "ok".into(),
    })
    .await?;
    refused(
        db.update(Tag::key("t")).set(Tag::fields().label, ""),
        dynamo_model::ValidationReason::EmptyKeyValue,
    )
    .await;
    assert_eq!(
        db.get(Tag::key("t")).await?.map(|t| t.label),
        Some("ok".into())
    );

    // A KEYS_ONLY index does not carry the TTL attribute: excluding expired items there
    // would exclude nothing, so it is refused.
    refused(
        db.query(Order::gsi2_partition("open"))
            .keys_only()
            .exclude_expired()
            .all(),
        dynamo_model::ValidationReason::IndexProjection,
    )
    .await;
    Ok(())
}

/// A read of one item through a unique index: the item, nothing, or a typed error when
/// the data holds two.
#[tokio::test]
async fn one_returns_the_only_match_or_refuses_two() -> TestResult {
    let db = dynamo_model::local::fresh_table::<App>().await?;
    let user = |id: &str, email: &str| User {
        user_id: id.into(),
        display_name: id.into(),
        email: Some(email.into()),
        login_count: 0,
        labels: vec![],
    };
    db.put(&user("u1", "ann@example.com")).await?;
    let found = db
        .query(User::gsi1_partition("ann@example.com"))
        .one()
        .await?;
    assert_eq!(found.map(|u| u.user_id), Some("u1".to_owned()));
    assert!(db
        .query(User::gsi1_partition("nobody@example.com"))
        .one()
        .await?
        .is_none());
    // A limit of 1 does not hide the second match.
    db.put(&user("u2", "ann@example.com")).await?;
    let err = db
        .query(User::gsi1_partition("ann@example.com"))
        .limit(1)
        .one()
        .await
        .unwrap_err();
    match &err {
        dynamo_model::Error::NotUnique { first, second, .. } => {
            assert!(
                first.contains("USER#u1") && second.contains("USER#u2"),
                "{err}"
            );
        }
        other => panic!("expected NotUnique, got {other:?}"),
    }
    Ok(())
}

/// An empty string in an attribute of a multi-attribute index key (the entity's own
/// field) is refused before sending, naming the attribute, on every write path: DynamoDB
/// would refuse it with an opaque ValidationException, and in a batch write the other
/// items of its request of 25 with it.
#[tokio::test]
async fn empty_multi_attribute_index_key_values_are_refused_before_sending() -> TestResult {
    let db = local::fresh_table::<Arena>().await?;
    let game = |id: u32, region: Option<&str>, player: &str| Match {
        match_id: id,
        tournament: "worlds".into(),
        region: region.map(str::to_owned),
        score: id,
        player: player.into(),
    };
    let refused = |err: &Error, attribute: &str| {
        crate::common::assert_refused(err, dynamo_model::ValidationReason::EmptyKeyValue);
        assert!(
            err.to_string().contains(&format!("`{attribute}`"))
                && err.to_string().contains("ByRegion"),
            "the attribute and index are named: {err}"
        );
    };
    // Single put: an empty partition-key attribute, an empty sort-key attribute.
    refused(
        &db.put(&game(1, Some(""), "ann")).await.unwrap_err(),
        "region",
    );
    refused(
        &db.put(&game(2, Some("EU"), "")).await.unwrap_err(),
        "player",
    );
    // A batch write refuses the item before sending anything: its neighbours are not lost
    // to a rejected request, and nothing is half written.
    let mut batch = db.batch_write();
    for i in 10..40 {
        batch = batch.put(&game(i, Some("EU"), "bob"));
    }
    let err = batch.put(&game(40, Some(""), "bob")).await.unwrap_err();
    refused(&err, "region");
    // A transaction, likewise.
    let err = db
        .transact_write()
        .put(db.put(&game(50, Some("EU"), "cy")))
        .put(db.put(&game(51, Some(""), "cy")))
        .await
        .unwrap_err();
    refused(&err, "region");
    assert!(
        db.scan::<Match>().all().await?.items.is_empty(),
        "nothing was written"
    );
    // An update that sets the attribute to "" is refused; removing it (the sparse way
    // out of the index) is fine.
    db.put(&game(3, Some("EU"), "dee")).await?;
    let f = Match::fields();
    refused(
        &db.update(Match::key(3))
            .set(f.region, Some(String::new()))
            .await
            .unwrap_err(),
        "region",
    );
    refused(
        &db.update(Match::key(3))
            .set(f.player, "")
            .await
            .unwrap_err(),
        "player",
    );
    db.update(Match::key(3)).set(f.region, None).await?;
    assert_eq!(db.get(Match::key(3)).await?.and_then(|m| m.region), None);
    Ok(())
}
