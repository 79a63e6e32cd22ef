pub mod asn;
pub mod e2ap;
