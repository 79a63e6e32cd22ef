pub mod agent;
pub mod asn;
pub mod e2ap;
pub mod fake;
pub mod node;
pub mod sm;
pub mod transport;
