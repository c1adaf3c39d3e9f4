//! # The guide: DynamoDB design patterns with dynamo-model
//!
//! One chapter per single-table design pattern, each in the same order: the problem, the
//! DynamoDB design that solves it, how this crate expresses it, a short example that
//! compiles (most need a live table and are marked `no_run`; the ones that run build
//! requests offline with [`Db::offline`](crate::Db::offline)), the limits and pitfalls,
//! and the runnable program under `examples/src/bin` that shows it end to end against
//! DynamoDB Local (`cargo run -p examples --bin NAME`).
//!
//! This module holds documentation only: it has no items.
//!
//! ## Modelling
//! 1. [One table, many entity types](p01_one_table)
//! 2. [Key templates and hierarchies](p02_key_templates)
//! 3. [Sort-key order and top-N](p03_sort_order)
//! 4. [Key conditions and paging](p04_key_conditions)
//! 5. [Overloaded global secondary indexes](p05_overloaded_indexes)
//! 6. [Sparse indexes](p06_sparse_indexes)
//! 7. [Adjacency lists and inverted indexes](p07_adjacency_lists)
//! 8. [Composite sort keys instead of filters](p08_composite_sort_keys)
//! 9. [Filters, projections, conditions and updates](p09_expressions)
//!
//! ## Data that grows
//! 10. [Revision history](p10_revision_history)
//! 11. [Large items: chunks and compression](p11_large_items)
//! 12. [Write sharding and scatter-gather reads](p12_write_sharding);
//!     [finding hot partitions from the client](p12b_hot_partitions)
//! 13. [Bulk uploads](p13_bulk_uploads)
//! 14. [Batches and transactions](p14_batches_and_transactions)
//! 15. [Time to live](p15_ttl)
//! 16. [A table per time period](p16_period_tables)
//!
//! ## Cost and operations
//! 17. [Item size and capacity](p17_item_size_and_capacity)
//! 18. [Scans](p18_scans)
//! 19. [Index projections](p19_index_projections)
//! 20. [Hot items: a read-through cache](p20_hot_item_cache)
//!
//! ## Values the crate keeps right
//! 21. [Rules on values](p21_validation)
//! 22. [Generated ids and timestamps](p22_generated_values)
//! 23. [Unique values other than the key](p23_unique_values)
//! 24. [Encrypted fields](p24_encrypted_fields)
//!
//! ## Testing your service
//! 25. [Unit tests without a server: the test double](p25_test_double)
//!
//! ## Running it
//! - [Using an existing table](existing_table)
//! - [Testing your service with DynamoDB Local](testing)
//! - [Going to production](production)

pub mod p01_one_table {
    #![doc = include_str!("p01_one_table.md")]
}
pub mod p02_key_templates {
    #![doc = include_str!("p02_key_templates.md")]
}
pub mod p03_sort_order {
    #![doc = include_str!("p03_sort_order.md")]
}
pub mod p04_key_conditions {
    #![doc = include_str!("p04_key_conditions.md")]
}
pub mod p05_overloaded_indexes {
    #![doc = include_str!("p05_overloaded_indexes.md")]
}
pub mod p06_sparse_indexes {
    #![doc = include_str!("p06_sparse_indexes.md")]
}
pub mod p07_adjacency_lists {
    #![doc = include_str!("p07_adjacency_lists.md")]
}
pub mod p08_composite_sort_keys {
    #![doc = include_str!("p08_composite_sort_keys.md")]
}
pub mod p09_expressions {
    #![doc = include_str!("p09_expressions.md")]
}
pub mod p10_revision_history {
    #![doc = include_str!("p10_revision_history.md")]
}
pub mod p11_large_items {
    #![doc = include_str!("p11_large_items.md")]
}
pub mod p12_write_sharding {
    #![doc = include_str!("p12_write_sharding.md")]
}
pub mod p12b_hot_partitions {
    #![doc = include_str!("p12b_hot_partitions.md")]
}
pub mod p13_bulk_uploads {
    #![doc = include_str!("p13_bulk_uploads.md")]
}
pub mod p14_batches_and_transactions {
    #![doc = include_str!("p14_batches_and_transactions.md")]
}
pub mod p15_ttl {
    #![doc = include_str!("p15_ttl.md")]
}
pub mod p16_period_tables {
    #![doc = include_str!("p16_period_tables.md")]
}
pub mod p17_item_size_and_capacity {
    #![doc = include_str!("p17_item_size_and_capacity.md")]
}
pub mod p18_scans {
    #![doc = include_str!("p18_scans.md")]
}
pub mod p19_index_projections {
    #![doc = include_str!("p19_index_projections.md")]
}
pub mod p20_hot_item_cache {
    #![doc = include_str!("p20_hot_item_cache.md")]
}
pub mod existing_table {
    #![doc = include_str!("existing_table.md")]
}
pub mod testing {
    // Its examples use `dynamo_model::local`, which only exists with feature `local`.
    #![cfg_attr(feature = "local", doc = include_str!("testing.md"))]
    #![cfg_attr(
        not(feature = "local"),
        doc = "# Testing your service with DynamoDB Local\n\nThis chapter describes \
               `dynamo_model::local`: build the documentation with feature `local` to read it."
    )]
}
pub mod production {
    #![doc = include_str!("production.md")]
}
pub mod p21_validation {
    #![doc = include_str!("p21_validation.md")]
}
pub mod p22_generated_values {
    #![doc = include_str!("p22_generated_values.md")]
}
pub mod p23_unique_values {
    #![doc = include_str!("p23_unique_values.md")]
}
pub mod p24_encrypted_fields {
    #![doc = include_str!("p24_encrypted_fields.md")]
}
pub mod p25_test_double {
    // Its examples use `dynamo_model::double`, which only exists with feature `double`.
    #![cfg_attr(feature = "double", doc = include_str!("p25_test_double.md"))]
    #![cfg_attr(
        not(feature = "double"),
        doc = "# Unit tests without a server: the test double\n\nThis chapter describes \
               `dynamo_model::double`: build the documentation with feature `double` to read it."
    )]
}
