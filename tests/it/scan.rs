//! Scans: one entity type or a collection out of a mixed table, pages, segments, budget.

use crate::common::*;
use dynamo_model::{local, Cursor, Error, UnknownEntity};
use futures_util::TryStreamExt;
use std::collections::BTreeSet;

async fn mixed_table() -> Result<local::TempTable<App>, Box<dyn std::error::Error + Send + Sync>> {
    let db = local::fresh_table::<App>().await?;
    for i in 0..30 {
        let mut u = User::sample(&format!("u{i:02}"));
        u.login_count = i;
        db.put(&u).await?;
    }
    for p in 0..3 {
        let id = format!("p{p}");
        db.put(&Purchase {
            purchase_id: id.clone(),
            buyer: "b".into(),
        })
        .await?;
        db.put(&PurchaseItem {
            purchase_id: id.clone(),
            n: 1,
            sku: "s".into(),
        })
        .await?;
        db.put(&PurchaseNote {
            purchase_id: id,
            n: 1,
        })
        .await?;
    }
    Ok(db)
}

fn user_ids(users: &[User]) -> BTreeSet<String> {
    users.iter().map(|u| u.user_id.clone()).collect()
}

#[tokio::test]
async fn scans_return_only_the_target_entity() -> TestResult {
    let db = mixed_table().await?;
    let all = db.scan::<User>().all().await?;
    assert_eq!(all.items.len(), 30);
    assert!(all.consumed_capacity > 0.0);

    let f = User::fields();
    let busy = db
        .scan::<User>()
        .filter(f.login_count.ge(25u32))
        .page_size(4)
        .all()
        .await?;
    assert_eq!(
        user_ids(&busy.items),
        (25..30).map(|i| format!("u{i:02}")).collect()
    );

    assert_eq!(db.scan::<User>().limit(7).all().await?.items.len(), 7);
    let streamed: Vec<User> = db
        .scan::<User>()
        .page_size(3)
        .stream()
        .try_collect()
        .await?;
    assert_eq!(user_ids(&streamed), user_ids(&all.items));
    Ok(())
}

#[tokio::test]
async fn scan_pages_with_cursors() -> TestResult {
    let db = mixed_table().await?;
    let mut cursor: Option<Cursor> = None;
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let page = db.scan::<User>().page_size(8).page(cursor.as_ref()).await?;
        seen.extend(page.items);
        pages += 1;
        cursor = page.cursor;
        if cursor.is_none() || pages > 50 {
            break;
        }
    }
    assert_eq!(seen.len(), 30);
    assert!(pages >= 4, "{pages} pages");
    // A scan cursor is not a query cursor.
    let page = db.scan::<User>().page_size(8).page(None).await?;
    let err = db
        .query(User::partition("u00"))
        .page(page.cursor.as_ref())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Cursor { .. }), "{err:?}");
    Ok(())
}

#[tokio::test]
async fn collection_scans_skip_or_refuse_other_entity_types() -> TestResult {
    let db = mixed_table().await?;
    let details = db.scan::<PurchaseDetails>().all().await?.items;
    assert_eq!(details.len(), 6);
    assert_eq!(
        details
            .iter()
            .filter(|d| matches!(d, PurchaseDetails::Purchase(_)))
            .count(),
        3
    );
    let err = db
        .scan::<PurchaseDetails>()
        .on_unknown(UnknownEntity::Error)
        .all()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Decode(_)), "{err:?}");
    Ok(())
}

#[tokio::test]
async fn segmented_and_budgeted_scans_see_every_item() -> TestResult {
    let db = mixed_table().await?;
    // DynamoDB Local ignores Segment/TotalSegments (every segment returns the whole
    // table), so only "every item is seen" is asserted here; the merge itself is unit-
    // tested against a segment-honouring fake.
    let segmented = db.scan::<User>().segments(3).page_size(5).all().await?;
    assert_eq!(user_ids(&segmented.items).len(), 30);
    let paced = db
        .scan::<User>()
        .page_size(10)
        .max_read_units_per_second(1000.0)
        .all()
        .await?;
    assert_eq!(paced.items.len(), 30);
    let err = db.scan::<User>().segments(2).page(None).await.unwrap_err();
    crate::common::assert_refused(&err, dynamo_model::ValidationReason::InvalidOption);
    Ok(())
}
