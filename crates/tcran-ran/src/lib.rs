//! # tcran-ran
//!
//! The radio side of the tcran downlink model, sans-IO (no clocks, no
//! files in the core paths, no hash maps):
//!
//! - [`phy`]: the PHY abstraction a MAC scheduler needs to turn "this UE has
//!   n PRBs at MCS m" into bytes: numerology (TS 38.211 §4.2), maximum N_RB
//!   (TS 38.101-1/-2 Table 5.3.2-1), NR and LTE MCS/CQI tables (TS 38.214
//!   §5.1.3.1, §5.2.2.1; TS 36.213 §7.1.7), the exact NR transport block size
//!   procedure (TS 38.214 §5.1.3.2), the LTE TBS table, and TDD slot patterns.
//! - [`channel`]: what the link offers at time `t`: a fixed or time-varying
//!   MCS (link adaptation), or a capacity trace giving bytes per interval
//!   directly (mahimahi, the thesis packets-per-10-ms traces, the UCC 5G
//!   dataset).
//! - [`mac::ue`]: a UE's uplink MAC (TS 38.321 §5.4): buffer status
//!   reports with the Table 6.1.3.1-1/-2 quantisation, scheduling requests
//!   and logical channel prioritisation with PBR buckets; [`mac::ul`]: the
//!   gNB's uplink scheduler granting PUSCH from SRs and BSRs (round robin,
//!   proportional fair) on the uplink slots, with uplink HARQ.
//! - [`mobility`]: TR 38.901 path loss and shadowing, and TS 38.331
//!   measurement events (A2, A3, A5) with layer-3 filtering, hysteresis and
//!   time-to-trigger: the parts a multi-cell model builds handover on.
//!
//! All 3GPP tables are compiled in (`data/3gpp/*.csv`, unmodified copies of
//! the project's shared tables) and parsed once on first use.

pub mod channel;
pub mod mac;
pub mod mobility;
pub mod pdcp;
pub mod phy;
pub mod rlc;
pub mod sdap;
pub mod tables;

pub use channel::{AnyChannel, Channel, ChannelSample, TraceError, TraceFormat, TraceInfo};
pub use phy::mcs::{CqiTable, Mcs, McsTable};
pub use phy::tbs::{bytes_per_slot, TbScaling, TbsError, TbsInput};
pub use phy::{CodeRate, Modulation};
pub use rlc::{
    BufferStatus, RlcAqmConfig, RlcConfig, RlcMode, RlcPdu, RlcRx, RlcTx, SduDeparture, StatusPdu,
};
