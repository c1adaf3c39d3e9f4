//! The stored format: what the crate writes, so other programs (an analytics job, a
//! service in another language, a DynamoDB Streams consumer) can read it and write items
//! the crate reads.
//!
//! Nothing here is private to the crate: every attribute is a plain DynamoDB attribute,
//! every key a string built by rules fixed below. The format changes only with a major
//! version.
//!
//! # Keys
//!
//! A key attribute is rendered from a template such as `ORDER#{created_at}#{order_id}`:
//! the literal text as it is, each `{field}` as the field's *key encoding*, chosen so the
//! byte order of keys is the order of the values and no value can contain the delimiter
//! (`#` unless the table, entity or index declares another). The encodings, with
//! examples, are in [`KeyPart`](crate::KeyPart):
//!
//! | type | encoding |
//! |------|----------|
//! | `String` | the text, every character up to `%` written as `%XX` (`#` is `%23`) |
//! | unsigned integers | zero-padded decimal, the width of the type's `MAX` |
//! | signed integers | `v >= 0`: zero-padded; `v < 0`: `-` then `v - MIN` zero-padded |
//! | `bool` | `false` / `true` |
//! | `OffsetDateTime` | UTC, `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` |
//! | `Date`, `NaiveDate` | `YYYY-MM-DD` |
//! | `PrimitiveDateTime`, `NaiveDateTime` | `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn` |
//! | `Uuid` | lowercase hyphenated |
//!
//! Computed parts ([`key::computed`](dynamo_model::key::computed)): `{f:shard(N)}` is
//! `crc32(key encoding of f) % N` (zlib's CRC-32) zero-padded to the digits of `N - 1`;
//! `{f:random(N)}` is the stored `u16` field `f`, padded the same way; `{f:date}`,
//! `{f:hour}`, `{f:month}` are `YYYY-MM-DD`, `YYYY-MM-DDTHH`, `YYYY-MM` in UTC.
//!
//! A key field is also stored as a plain attribute under its own name (its attribute
//! encoding below), so filters and other programs need not parse keys, unless the entity
//! says `store_key_fields = false` or the field `key_only`. A field with
//! `key_format = ".."` is rendered in its key in that format instead of the encodings
//! above (see [`key::format`](dynamo_model::key::format)).
//!
//! # Attributes
//!
//! | attribute | holds |
//! |-----------|-------|
//! | the table's type attribute (`_type` unless `#[dynamo(entity_type = "..")]` on the table) | the entity type (the struct name unless `#[dynamo(entity_type = "..")]`): every item the crate writes has it, unless the table or entity says `write_type = false` (its items are then identified by their keys); reads refuse an item of another type |
//! | the write token (`_wt` unless `write_token = ".."`) | a random token of the last single-item put or update, or versioned write, to recognise its own write after a lost response; not written where the table or entity says `write_token = false` |
//! | `_migrations` | a string set of the [migrations](crate::migrate) that changed the item with a marker (every `map`, or `with_marker`); kept until the item is replaced whole |
//! | the `#[dynamo(version)]` field | the item's version, a number incremented by every write |
//! | the `#[dynamo(ttl)]` field | epoch seconds (DynamoDB's TTL format) |
//! | index key attributes (`GSI1PK`, ...) | rendered from the entity's index templates; absent when a template field is absent (a sparse index) |
//! | every other field | its value: `S` strings, `N` numbers, `BOOL`, `B` binary, `L` lists, `M` maps and structs, `SS`/`NS` sets; a `None` field or struct member is no attribute (`NULL` only where a position counts: inside a list or a tuple variant); enums externally tagged, as serde does (`Unit` is `S "Unit"`, `Newtype(v)` is `M {"Newtype": v}`, `Tuple(a, b)` is `M {"Tuple": L [a, b]}`, `Struct { x }` is `M {"Struct": M {"x": x}}`); `#[dynamo(serde)]` fields as serde_dynamo writes them; times as the key encodings above |
//!
//! # Compressed attributes
//!
//! A `#[dynamo(compress)]` field is a Binary attribute whose first byte names the codec:
//! `0` the value as it is, `1` a Zstandard frame (with content size and checksum), `2` a
//! gzip member. A `String` is its UTF-8 bytes, a serde field its JSON. See
//! [`compress`](crate::compress).
//!
//! # Chunk items
//!
//! A `#[dynamo(chunked)]` field over its inline threshold is a map
//! `{t: token, n: chunk count, len: total bytes, crc: CRC-32}` in the item, and chunk `k`
//! of token `T` is the item with partition key `_CHUNK#T#k` (`k` six digits), sort key
//! `_CHUNK` (tables with a sort key), type `_chunk`, the data in `_d` (Binary: the chunks
//! of one value concatenated are the stored form of a compressed attribute, tag byte
//! first), the parent's keys in `_ppk` / `_psk`, the field in `_field`, and the write time
//! in `_ct` (epoch milliseconds). A value at or under the threshold is the same Binary
//! form in the item itself. See [`chunk`](crate::chunk).
//!
//! # Versioned entities
//!
//! A `#[dynamo(history)]` entity's sort key is `{prefix}{slot}{separator}{rest}`:
//! slot `0` (all zeros) is the latest copy, slot `k` revision `k`; by default `v`, 20
//! digits, `#`, so revision 12 of `DOC` is `v00000000000000000012#DOC`. Revisions carry
//! the time they were written in `_vt` (epoch milliseconds). See
//! [`HistoryLayout`](dynamo_model::history::HistoryLayout).
//!
//! # Per-period tables
//!
//! [`PeriodTables`](crate::period::PeriodTables) name a period's table
//! `{prefix}_{YYYY}_{MM}_{DD}` (day), `{prefix}_{YYYY}_w{WW}` (ISO week) or
//! `{prefix}_{YYYY}_{MM}` (month), in UTC.
//!
//! # Cursors
//!
//! Cursors are opaque: a versioned, HMAC-checked encoding of the last key read, bound to
//! the query that produced them. They are not meant to be built by other programs.
