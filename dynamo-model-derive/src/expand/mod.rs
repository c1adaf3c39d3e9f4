pub mod attribute;
pub mod collection;
pub mod entity;
pub mod members;
pub mod table;
