//! Derive inputs that must compile and behave, as a user's crate would write them.
//!
//! Ordinary tests rather than trybuild `pass` cases: trybuild builds each pass case from
//! scratch, while these share the crate's own build.

#[path = "derive_accepts/all_options.rs"]
mod all_options;
#[path = "derive_accepts/chunked.rs"]
mod chunked;
#[path = "derive_accepts/computed.rs"]
mod computed;
#[path = "derive_accepts/date_keys.rs"]
mod date_keys;
#[path = "derive_accepts/delimiters.rs"]
mod delimiters;
#[path = "derive_accepts/history.rs"]
mod history;
#[path = "derive_accepts/member_paths.rs"]
mod member_paths;
#[path = "derive_accepts/named_keys.rs"]
mod named_keys;
#[path = "derive_accepts/no_serde.rs"]
mod no_serde;
#[path = "derive_accepts/serde_compat.rs"]
mod serde_compat;
#[path = "derive_accepts/time_uuid_keys.rs"]
mod time_uuid_keys;
#[path = "derive_accepts/write_footprint.rs"]
mod write_footprint;

#[test]
fn every_derive_option_together() {
    all_options::run();
}

#[test]
fn time_and_uuid_key_fields() {
    time_uuid_keys::run();
}

#[test]
fn delimiters_of_tables_entities_and_indexes() {
    delimiters::run();
}

#[test]
fn date_key_fields() {
    date_keys::run();
}

#[test]
fn keys_and_partitions_name_their_fields() {
    named_keys::run();
}

#[test]
fn member_paths_are_clone_and_debug_for_any_entity() {
    member_paths::run();
}

#[test]
fn entities_and_nested_attributes_without_serde() {
    no_serde::run();
}

#[test]
fn history_layouts_with_ttl_and_index() {
    history::run();
}

#[test]
fn chunked_fields_bare_and_with_sizes() {
    chunked::run();
}

#[test]
fn computed_key_parts_everywhere_they_are_accepted() {
    computed::run();
}

#[test]
fn writes_without_the_type_attribute_or_the_write_token() {
    write_footprint::run();
}
