//! Supertraits of the public traits users must not implement: this module is private, so
//! only this crate can implement them, and the public traits can grow without breaking
//! anyone. Each public trait has its own, so their blanket implementations never overlap.

/// For [`Numeric`](crate::Numeric).
pub trait Numeric {}
/// For [`SetAttribute`](dynamo_model::codec::SetAttribute).
pub trait SetAttribute {}
/// For [`SetElement`](dynamo_model::codec::SetElement).
pub trait SetElement {}
/// For [`UpdatablePath`](crate::UpdatablePath).
pub trait UpdatablePath {}
/// For [`SettablePath`](dynamo_model::expr::SettablePath).
pub trait SettablePath {}
/// For [`Compressible`](dynamo_model::compress::Compressible).
pub trait Compressible {}
/// For [`KeyArg`](dynamo_model::key::KeyArg).
pub trait KeyArg<T> {}
/// For [`OptionalKeyPart`](dynamo_model::key::OptionalKeyPart).
pub trait OptionalKeyPart {}
/// For [`TtlValue`](crate::TtlValue).
pub trait TtlValue {}
/// For [`VersionValue`](crate::VersionValue).
pub trait VersionValue {}
/// For [`KeyAttrType`](dynamo_model::schema::KeyAttrType).
pub trait KeyAttrType {}
/// For [`IntoPartition`](dynamo_model::read::IntoPartition).
pub trait IntoPartition {}
/// For [`Versioned`](dynamo_model::history::Versioned), implemented by the derive through
/// `__private::VersionedSeal`.
pub trait Versioned {}
/// For `expr::FormattedText`.
pub trait FormattedText {}
/// For `expr::SameValue`.
pub trait SameValue {}
