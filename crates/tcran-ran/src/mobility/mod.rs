//! What moving UEs need from the radio: how much signal reaches them from
//! each cell, and when that should make them change cell.
//!
//! - [`pathloss`]: TR 38.901 §7.4 large-scale propagation for the urban
//!   macro (UMa) and urban micro street-canyon (UMi) scenarios: path loss
//!   (Table 7.4.1-1), LOS probability (Table 7.4.2-1) and the shadow
//!   fading's spread and decorrelation distance (Table 7.4.1-1, Table
//!   7.5-6).
//! - [`events`]: TS 38.331 §5.5 measurement reporting: layer-3 filtering
//!   of RSRP (§5.5.3.2) and the events A2, A3 and A5 (§5.5.4.3, §5.5.4.4,
//!   §5.5.4.6) with hysteresis and time-to-trigger, which a gNB turns into
//!   a handover decision (TS 38.300 §9.2.3.2).
//! - [`drive`]: a recorded drive (each cell's RSRP and the serving CQI
//!   per time step) for runs whose radio comes from a trace, not geometry.
//!
//! All are sans-IO: positions, measurements and time are parameters.

pub mod drive;
pub mod events;
pub mod pathloss;
