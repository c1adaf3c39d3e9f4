pub mod entity;
pub mod table;
