//! Service models.
pub mod flexric_tc;
