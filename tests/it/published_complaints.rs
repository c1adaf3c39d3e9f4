//! AWS's published complaint-management design (DynamoDB Developer Guide, "Complaint
//! management system schema design"), exactly as its application writes it: generic `PK` /
//! `SK`, complaints under `metadata`, comments under `comm#{date}#{id}`, three GSIs whose
//! names are not Rust identifiers of the usual shape (`Customer_Complaint_GSI`,
//! `Escalations_GSI`, `Agents_Comments_GSI`), each keyed by plain attributes, and times
//! stored as `2023-05-01T12:00:00` (no offset), one of them the sort key of the sparse
//! escalations index. Rows are written with the raw SDK first, as the design's app does;
//! every published access pattern then runs through the crate.

use crate::common::*;
use dynamo_model::{local, Entity, Item, Table};
use time::macros::datetime;
use time::PrimitiveDateTime;

#[derive(Table)]
#[dynamo(
    pk = "PK",
    sk = "SK",
    gsi(
        name = "Customer_Complaint_GSI",
        pk = "customer_id",
        sk = "complaint_id"
    ),
    gsi(name = "Escalations_GSI", pk = "escalated_to", sk = "escalation_time"),
    gsi(name = "Agents_Comments_GSI", pk = "agentID", sk = "comm_date")
)]
pub struct Complaints;

/// `PK = Complaint123`, `SK = metadata`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Complaints, identify = "keys", pk = "{complaint_id}", sk = "metadata",
         index(Customer_Complaint_GSI, pk = [customer_id], sk = [complaint_id]),
         index("Escalations_GSI", pk = [escalated_to], sk = [escalation_time]))]
pub struct Complaint {
    pub complaint_id: String,
    pub customer_id: String,
    pub complaint_state: String,
    pub severity: String,
    pub complaint_description: String,
    // A plain attribute in the design's own format: not in any key.
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub creation_time: PrimitiveDateTime,
    pub escalated_to: Option<String>,
    // A multi-attribute index's sort key, in the same format.
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub escalation_time: Option<PrimitiveDateTime>,
}

/// `PK = Complaint123`, `SK = comm#2023-05-05T12:30:00#comm7`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[dynamo(table = Complaints, identify = "keys", pk = "{complaint_id}",
         sk = "comm#{comm_date}#{comm_id}",
         index(Agents_Comments_GSI, pk = [agent_id], sk = [comm_date]))]
pub struct Comment {
    // The app keeps the complaint's id in the key only.
    #[dynamo(key_only)]
    pub complaint_id: String,
    #[dynamo(key_format = "rfc3339(0, no_z)")]
    pub comm_date: PrimitiveDateTime,
    #[dynamo(key_format = "verbatim")]
    pub comm_id: String,
    #[dynamo(rename = "agentID")]
    pub agent_id: String,
    pub comm_text: String,
}

fn complaint_row(
    id: &str,
    customer: &str,
    created: &str,
    escalation: Option<(&str, &str)>,
) -> Item {
    let mut rest = vec![
        ("complaint_id", s(id)),
        ("customer_id", s(customer)),
        ("complaint_state", s("waiting")),
        ("severity", s("P3")),
        ("complaint_description", s("the item arrived broken")),
        ("creation_time", s(created)),
    ];
    if let Some((agent, at)) = escalation {
        rest.push(("escalated_to", s(agent)));
        rest.push(("escalation_time", s(at)));
    }
    raw_row(id, "metadata", &rest)
}

fn comment_row(complaint: &str, at: &str, id: &str, agent: &str) -> Item {
    raw_row(
        complaint,
        &format!("comm#{at}#{id}"),
        &[
            ("comm_id", s(id)),
            ("comm_date", s(at)),
            ("agentID", s(agent)),
            ("comm_text", s("called the customer")),
        ],
    )
}

async fn seeded() -> Res<local::TempTable<Complaints>> {
    let db = local::fresh_table::<Complaints>().await?;
    let rows = [
        complaint_row("Complaint123", "custXYZ", "2023-05-01T12:00:00", None),
        complaint_row(
            "Complaint124",
            "custXYZ",
            "2023-05-02T09:00:00",
            Some(("AgentA", "2023-05-03T10:00:00")),
        ),
        complaint_row(
            "Complaint125",
            "custABC",
            "2023-05-02T11:00:00",
            Some(("AgentA", "2023-05-04T08:30:00")),
        ),
        complaint_row(
            "Complaint126",
            "custABC",
            "2023-05-03T11:00:00",
            Some(("AgentB", "2023-05-04T09:00:00")),
        ),
        comment_row("Complaint123", "2023-05-01T12:30:00", "comm1", "AgentA"),
        comment_row("Complaint123", "2023-05-02T08:00:00", "comm2", "AgentB"),
        comment_row("Complaint123", "2023-05-05T12:30:00", "comm7", "AgentA"),
        comment_row("Complaint124", "2023-05-03T10:05:00", "comm3", "AgentA"),
    ];
    put_raw_rows(&db, rows).await?;
    Ok(db)
}

#[tokio::test]
async fn complaint_design_reads_the_apps_rows_by_every_published_pattern() -> TestResult {
    let db = seeded().await?;

    // getComplaintByComplaintID: the time attribute read in the design's format.
    let complaint = db
        .get(Complaint::key("Complaint123"))
        .consistent()
        .await?
        .ok_or("no complaint")?;
    assert_eq!(complaint.creation_time, datetime!(2023-05-01 12:00:00));
    assert_eq!(complaint.escalated_to, None);

    // getAllCommentsByComplaintID, and getLatestCommentByComplaintID (newest first, one).
    let comments = items_of(db.query(Comment::partition("Complaint123"))).await?;
    let ids: Vec<&str> = comments.iter().map(|c| c.comm_id.as_str()).collect();
    assert_eq!(ids, ["comm1", "comm2", "comm7"]);
    let latest = items_of(
        db.query(Comment::partition("Complaint123"))
            .reverse()
            .limit(1),
    )
    .await?;
    let [latest] = latest.as_slice() else {
        return Err(format!("one comment expected: {latest:?}").into());
    };
    assert_eq!(latest.comm_id, "comm7");
    assert_eq!(latest.comm_date, datetime!(2023-05-05 12:30:00));

    // getAComplaintbyCustomerIDAndComplaintID and getAllComplaintsByCustomerID, through
    // `Customer_Complaint_GSI` (its methods: `customer_complaint_gsi_*`).
    let of_customer =
        items_of(db.query(Complaint::customer_complaint_gsi_partition("custXYZ"))).await?;
    let ids: Vec<&str> = of_customer
        .iter()
        .map(|c| c.complaint_id.as_str())
        .collect();
    assert_eq!(ids, ["Complaint123", "Complaint124"]);
    let one = items_of(
        db.query(Complaint::customer_complaint_gsi_partition("custXYZ"))
            .sk(Complaint::customer_complaint_gsi_sk()
                .complaint_id()
                .eq("Complaint124")),
    )
    .await?;
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].escalation_time, Some(datetime!(2023-05-03 10:00:00)));

    // getEscalatedComplaintsByAgentID, newest first: the sparse index sorted by a time in
    // the design's format.
    let escalated = items_of(
        db.query(Complaint::escalations_gsi_partition("AgentA"))
            .reverse(),
    )
    .await?;
    let ids: Vec<&str> = escalated.iter().map(|c| c.complaint_id.as_str()).collect();
    assert_eq!(ids, ["Complaint125", "Complaint124"]);
    let since = items_of(
        db.query(Complaint::escalations_gsi_partition("AgentA"))
            .sk(Complaint::escalations_gsi_sk()
                .escalation_time()
                .ge(datetime!(2023-05-04 00:00:00))),
    )
    .await?;
    assert_eq!(since.len(), 1);
    assert_eq!(since[0].complaint_id, "Complaint125");

    // getAllEscalatedComplaints: a scan of the sparse `Escalations_GSI`, which holds the
    // escalated complaints only.
    let all_escalated = db
        .scan::<Complaint>()
        .index::<ComplaintsEscalationsGsi>()
        .all()
        .await?;
    let mut ids: Vec<&str> = all_escalated
        .items
        .iter()
        .map(|c| c.complaint_id.as_str())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["Complaint124", "Complaint125", "Complaint126"]);
    assert_eq!(all_escalated.scanned_count, 3);

    // getCommentsByAgentID between two dates, through `Agents_Comments_GSI`.
    let by_agent = items_of(
        db.query(Comment::agents_comments_gsi_partition("AgentA"))
            .sk(Comment::agents_comments_gsi_sk().comm_date().between(
                datetime!(2023-05-01 00:00:00),
                datetime!(2023-05-03 23:59:59),
            )),
    )
    .await?;
    let ids: Vec<&str> = by_agent.iter().map(|c| c.comm_id.as_str()).collect();
    assert_eq!(ids, ["comm1", "comm3"]);
    Ok(())
}

#[tokio::test]
async fn complaint_design_writes_keep_the_apps_attribute_formats() -> TestResult {
    let db = seeded().await?;
    let f = Complaint::fields();
    let key = || Complaint::key("Complaint123");

    // updateSeveritybyComplaintID, conditioned on a time in the design's format.
    db.update(key())
        .set(f.severity, "P1")
        .condition(f.creation_time.eq(datetime!(2023-05-01 12:00:00)))
        .await?;

    // escalateComplaintByComplaintID: the sparse index keys set in the design's format.
    let escalated = db
        .update(key())
        .set(f.escalated_to, Some("AgentB".to_owned()))
        .set(f.escalation_time, Some(datetime!(2023-05-06 07:00:00)))
        .await?;
    assert_eq!(escalated.severity, "P1");
    let raw = raw_find(&db, raw_key("Complaint123", "metadata"))
        .await?
        .ok_or("gone")?;
    assert_eq!(raw.get("escalation_time"), Some(&s("2023-05-06T07:00:00")));
    assert_eq!(raw.get("creation_time"), Some(&s("2023-05-01T12:00:00")));
    let of_b = items_of(db.query(Complaint::escalations_gsi_partition("AgentB"))).await?;
    let ids: Vec<&str> = of_b.iter().map(|c| c.complaint_id.as_str()).collect();
    assert_eq!(ids, ["Complaint126", "Complaint123"]);

    // createComplaint and addCommentByComplaintID through the crate: the rows have the
    // app's layout, attribute for attribute (plus only the crate's own bookkeeping).
    let new = Complaint {
        complaint_id: "Complaint200".into(),
        customer_id: "custXYZ".into(),
        complaint_state: "waiting".into(),
        severity: "P3".into(),
        complaint_description: "the item arrived broken".into(),
        creation_time: datetime!(2023-06-01 12:00:00),
        escalated_to: None,
        escalation_time: None,
    };
    db.put(&new).if_absent().await?;
    let raw = raw_find(&db, raw_key("Complaint200", "metadata"))
        .await?
        .ok_or("no row")?;
    same_layout(
        &complaint_row("Complaint200", "custXYZ", "2023-06-01T12:00:00", None),
        &raw,
    );
    let comment = Comment {
        complaint_id: "Complaint200".into(),
        comm_date: datetime!(2023-06-01 12:05:00),
        comm_id: "comm9".into(),
        agent_id: "AgentC".into(),
        comm_text: "called the customer".into(),
    };
    db.put(&comment).await?;
    let raw = raw_find(
        &db,
        raw_key("Complaint200", "comm#2023-06-01T12:05:00#comm9"),
    )
    .await?
    .ok_or("no comment row")?;
    same_layout(
        &comment_row("Complaint200", "2023-06-01T12:05:00", "comm9", "AgentC"),
        &raw,
    );
    // And the app's rows read back equal what the crate wrote.
    assert_eq!(
        db.get(comment.primary_key()).consistent().await?,
        Some(comment)
    );
    Ok(())
}
