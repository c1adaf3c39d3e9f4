//! Integration tests against DynamoDB Local: one binary (one link, one DynamoDB Local per
//! process), every test on its own fresh table so all of them run in parallel.

mod ambiguous;
mod batch;
mod cache;
mod capacity;
mod chunk;
mod common;
mod compress;
mod computed_keys;
mod dates;
mod deadlines;
mod decode;
mod delimiters;
mod duplicates;
mod extra_types;
mod faults;
mod history;
mod history_lifecycle;
mod history_race;
mod history_reads;
mod index;
mod isolation;
mod keys;
mod locking;
mod nested;
mod page_counts;
mod period;
mod query;
mod ranges;
mod requests;
mod scan;
mod scatter;
mod single_item;
mod stream;
mod transact;
mod trust;
