pub mod attribute;
pub mod collection;
pub mod entity;
pub mod table;
