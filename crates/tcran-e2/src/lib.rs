pub mod asn;
pub mod e2ap;
pub mod node;
pub mod sm;
