//! One TCP engine (sender side, [`TcpSender`]) and its peer ([`TcpReceiver`]).
//!
//! ## What is modelled
//!
//! - Byte-counted sequence numbers from 0 in [`TcpMeta`](tcran_core::packet::TcpMeta)`.seq/ack`.
//!   The connection **starts established**: no SYN/SYN-ACK is simulated, the
//!   first data segment leaves at the first `poll_transmit`. (A handshake
//!   would only delay the start by one RTT and seed SRTT; callers who care
//!   can start the flow one RTT later.)
//! - Header size: **52 bytes** per packet = 20 IPv4 + 20 TCP + 12 timestamp
//!   option (RFC 7323, on by default in Linux). A data packet is
//!   `payload + 52` bytes, so the default MSS of 1448 makes 1500-byte IP
//!   packets. Pure ACKs are 52 bytes plus the SACK option (2 + 8·n bytes,
//!   padded to 4, n ≤ 3 blocks).
//! - RTT/RTO: RFC 6298 ([`rtt`]), min RTO 200 ms (Linux), initial 1 s.
//! - Initial window: RFC 6928, 10 segments by default.
//! - Loss recovery: RFC 6675 SACK scoreboard (a segment is lost when 3
//!   segments above it are SACKed, or on 3 duplicate ACKs without SACK),
//!   pipe-based transmission during recovery (cwnd = ssthresh from the start
//!   of recovery, no window inflation, as Linux), RFC 6582 NewReno partial-ACK
//!   rule (a partial ACK marks the next hole lost and retransmits it). Without
//!   SACK each duplicate ACK counts one segment as having left the network
//!   (Linux "Reno SACK" emulation). RTO: exponential back-off, all
//!   outstanding data marked lost, slow start from 1 MSS; lost
//!   retransmissions are only recovered by RTO (no RACK).
//! - Receiver: delayed ACKs (every 2nd full segment or a 40 ms timer, Linux
//!   `TCP_DELACK_MIN`), immediate ACK on out-of-order data and on filling a
//!   hole (RFC 5681 §4.2), up to 3 SACK blocks (RFC 2018, most recent first).
//! - Receive window: **static**. `TcpMeta` has no window field, so the
//!   receiver's advertised window is the configured `receive_window`
//!   (default 6 MB), known to the sender from the shared configuration.
//!   Linux grows its advertised window by receive-buffer autotuning
//!   (`tcp_rcv_space_adjust`: about twice what the application read in
//!   the last RTT); a capture of the emulator (docs/emulator.md) shows it
//!   stays about twice the bytes in flight, so the real sender is never
//!   limited by it and a static window large enough gives the same flight.
//! - Send buffer (`send_buffer = "auto"`, the default; `"unlimited"` = an
//!   application that always has data in the socket). Linux keeps sent
//!   data in the socket until it is cumulatively ACKed, and the
//!   application can only write while the socket's charged memory
//!   (`sk_wmem_queued`) is below `sk_sndbuf`:
//!   - charge: payload plus `skb_overhead` (832 B on 6.18 x86-64:
//!     `sk_buff` 256 B + the small head cache, `MAX_TCP_HEADER` 256 B +
//!     `skb_shared_info` 320 B) per skb; sent data is in skbs of
//!     `tcp_tso_autosize` segments (pacing rate / 1024 per skb, at least
//!     `min_tso_segs`, Linux `tcp_min_tso_segs` = 2), unsent data in 64 KB
//!     skbs. At 18 Mbit/s that is 416 B per 1448-B segment, as `ss -tmi`
//!     shows on the emulator (`w` minus payload with nothing unsent).
//!   - size (`tcp_sndbuf_expand`, from `tcp_init_buffer_space` and on
//!     ACKs while cwnd is not full, `tcp_should_expand_sndbuf`: "if we
//!     filled the congestion window, do not expand"): 2 · max(cwnd, 10) ·
//!     per_mss, per_mss = roundup_pow_of_two(MSS + 12 + 576) + 256 (2304 B
//!     for MSS 1448: `ss` shows `tb` = 4608 · cwnd), at most
//!     `send_buffer_max` (Linux `tcp_wmem[2]`, 4 MiB); never shrinks.
//!   - the application (iperf3) writes while the charge is below the
//!     buffer; once refused it waits until a third is free
//!     (`sk_stream_write_space`/`tcp_poll`: free ≥ charge/2). In a deep
//!     buffer the flight therefore saws between 2/3 of `tcp_wmem[2]` in
//!     sent skbs (2.2 MB of payload for 4 MiB) and a full buffer.
//!
//!   The sender is then neither cwnd- nor window-limited, cwnd stops
//!   growing (RFC 7661 / `tcp_is_cwnd_limited`), and no loss happens in a
//!   buffer deeper than the send buffer.
//! - ECN: classic (RFC 3168: ECT(0) on new data, the receiver's ECE sticks
//!   until it sees CWR, the sender reduces once per window and sets CWR) or
//!   accurate per-packet echo for DCTCP/Prague (RFC 8257 §3.2 as ns-3/Linux
//!   DCTCP: ECE on exactly the ACKs that cover CE data; a pending delayed ACK
//!   is sent first when the CE state changes).
//! - Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation) for
//!   BBR, packet-timed rounds for all controls.
//! - Pacing of payload bytes as Linux does it: BBR and Prague always pace
//!   at their own rate (they ask the stack for pacing, `SK_PACING_NEEDED`,
//!   so Linux paces them whatever the qdisc). The others (Reno, CUBIC,
//!   DCTCP) are paced only when the server's qdisc is `fq` (`pacing =
//!   true`; sch_fq applies `sk_pacing_rate`), at Linux's default
//!   2·cwnd/SRTT while cwnd < ssthresh/2 and 1.2·cwnd/SRTT above
//!   (`tcp_pacing_ss_ratio`/`ca_ratio`, algorithms.md §2.10); under the
//!   default qdiscs (pfifo_fast, fq_codel) they send as ACKs clock them,
//!   the default here. Nothing is paced before the first RTT sample (the
//!   initial window leaves back to back, as ns-3 `PaceInitialWindow =
//!   false`).
//! - Restart after idle (RFC 2861; Linux `tcp_cwnd_restart`, checked as
//!   `tcp_slow_start_after_idle_check` does): new data after more than one
//!   RTO with nothing outstanding since the last data segment left sets
//!   ssthresh to max(ssthresh, 3/4 cwnd) (unless in recovery or CWR) and
//!   halves cwnd once per whole RTO of the idle time, not below the initial
//!   window. Controls with their own `cong_control` in Linux (BBR, Prague)
//!   handle idle themselves and are left alone. `slow_start_after_idle =
//!   false` turns it off, as the sysctl does.

pub mod receiver;
pub mod rtt;
pub mod sender;

pub use receiver::TcpReceiver;
pub use rtt::RttEstimator;
pub use sender::{TcpSender, TcpStats};

use crate::cc::CcKind;
use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{ByteSize, ConfigError, Duration};

/// IPv4 (20) + TCP (20) + timestamp option (12) bytes.
pub const HEADER_BYTES: u32 = 52;

/// Linux `tcp_wmem[1]`: the send buffer before `tcp_init_buffer_space`.
pub const LINUX_WMEM_DEFAULT: u64 = 16_384;
/// Linux `tcp_wmem[2]` (default and this machine's): the autotuned send
/// buffer's maximum.
pub const LINUX_WMEM_MAX: u64 = 4 * 1024 * 1024;
/// Linux `TCP_INIT_CWND`: `tcp_sndbuf_expand` counts at least this many segments.
pub const TCP_INIT_CWND: u64 = 10;
/// Largest GSO skb (`sk_gso_max_size`, 64 KB).
pub const GSO_MAX_SIZE: u64 = 65_536;
/// `MAX_TCP_HEADER` + `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` on
/// x86-64 (256 + 320 bytes).
const SKB_HEAD_EXTRA: u64 = 576;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` on x86-64.
const SK_BUFF_BYTES: u64 = 256;

/// `tcp_sndbuf_expand`'s `per_mss`: the truesize of a one-segment skb,
/// roundup_pow_of_two(MSS option + `MAX_TCP_HEADER` + shared info) +
/// `sk_buff`. The MSS option is the payload MSS plus the 12-byte
/// timestamp option (1460 for 1448).
pub fn sndbuf_per_mss(mss: u64) -> u64 {
    (mss + 12 + SKB_HEAD_EXTRA).next_power_of_two() + SK_BUFF_BYTES
}

/// How the sender's socket buffer limits what the application has written
/// into it (`send_buffer`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SendBuffer {
    /// Linux: autotuned (`tcp_sndbuf_expand`) up to `send_buffer_max`,
    /// sent data held until ACKed, skb truesize charged (module docs).
    #[default]
    Auto,
    /// No limit: the application always has data in the socket (the
    /// model before the send buffer; a sender with a huge `SO_SNDBUF`).
    Unlimited,
}

/// TCP configuration (`[flows.tcp]` in a scenario). Every field has a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Congestion control: `newreno`, `cubic` (default), `bbr`, `dctcp`, `prague`.
    pub cc: CcKind,
    /// Payload bytes per segment. Default 1448 B (1500 B IP packets).
    pub mss: ByteSize,
    /// Initial window in segments (RFC 6928: 10).
    pub initial_window: u32,
    /// Initial slow-start threshold; absent = infinite (RFC 5681 §3.1).
    pub initial_ssthresh: Option<ByteSize>,
    /// Lower bound of the RTO (Linux 200 ms; RFC 6298 says 1 s).
    pub min_rto: Duration,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: Duration,
    /// Upper bound of the backed-off RTO (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// The receiver's (static) advertised window. Default 6 MB.
    pub receive_window: ByteSize,
    /// ACK every this many full-sized segments (1 = no delayed ACKs). Default 2.
    pub delayed_ack_segments: u32,
    /// Delayed-ACK timer (Linux 40 ms).
    pub delayed_ack_timeout: Duration,
    /// Selective acknowledgements (RFC 2018). Default on.
    pub sack: bool,
    /// Classic ECN (RFC 3168) for newreno/cubic/bbr. DCTCP and Prague always
    /// use ECN. Default off.
    pub ecn: bool,
    /// The server's qdisc is `fq`, so Reno/CUBIC/DCTCP are paced (see the
    /// module docs). Default off, as under Linux's default qdiscs; BBR and
    /// Prague pace themselves either way.
    pub pacing: bool,
    /// HyStart delay detection in CUBIC slow start. Default on.
    pub hystart: bool,
    /// Duplicate ACKs (or SACKed segments above a hole) that mean loss. Default 3.
    pub dup_ack_threshold: u32,
    /// Restart after idle (RFC 2861, RFC 5681 §4.1; Linux
    /// `tcp_slow_start_after_idle`, default 1): data sent after more than an
    /// RTO with nothing outstanding halves cwnd per RTO of idle time, down
    /// to the initial window. Default on.
    pub slow_start_after_idle: bool,
    /// CUBIC's least growth per RTT, as a fraction of cwnd, before the
    /// first congestion event (Linux `bictcp_update`: `ca->cnt` at most 20,
    /// i.e. 0.05; 0 = RFC 9438 only). Range 0..=0.5.
    pub cubic_loss_free_growth: f64,
    /// The sender's socket buffer: `auto` (Linux autotuning, the default)
    /// or `unlimited` (the application always has data in the socket).
    pub send_buffer: SendBuffer,
    /// Largest autotuned send buffer, bytes of skb truesize (Linux
    /// `tcp_wmem[2]`, default 4 MiB = 4194304 B).
    pub send_buffer_max: ByteSize,
    /// Bytes the send buffer charges per skb beyond its payload (Linux 6.18
    /// x86-64: 832 B). Default 832 B.
    pub skb_overhead: ByteSize,
    /// Fewest segments per skb (Linux `tcp_min_tso_segs`, default 2).
    pub min_tso_segs: u32,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcKind::Cubic,
            mss: ByteSize(1448),
            initial_window: 10,
            initial_ssthresh: None,
            min_rto: Duration::from_millis(200),
            initial_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            receive_window: ByteSize(6_000_000),
            delayed_ack_segments: 2,
            delayed_ack_timeout: Duration::from_millis(40),
            sack: true,
            ecn: false,
            pacing: false,
            hystart: true,
            dup_ack_threshold: 3,
            slow_start_after_idle: true,
            cubic_loss_free_growth: crate::cc::cubic::LINUX_LOSS_FREE_GROWTH,
            send_buffer: SendBuffer::Auto,
            send_buffer_max: ByteSize(LINUX_WMEM_MAX),
            skb_overhead: ByteSize(832),
            min_tso_segs: 2,
        }
    }
}

/// Validated TCP parameters, shared by both ends of a connection.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpParams {
    pub cc: CcKind,
    pub mss: u32,
    pub initial_window: u32,
    pub initial_ssthresh: u64,
    pub min_rto: Duration,
    pub initial_rto: Duration,
    pub max_rto: Duration,
    pub receive_window: u64,
    pub delayed_ack_segments: u32,
    pub delayed_ack_timeout: Duration,
    pub sack: bool,
    /// ECN in use (classic `ecn = true`, or DCTCP/Prague).
    pub ecn: bool,
    /// Receiver echoes CE per packet (DCTCP/Prague) instead of RFC 3168.
    pub accurate_ecn: bool,
    pub pacing: bool,
    pub hystart: bool,
    pub dup_ack_threshold: u32,
    pub slow_start_after_idle: bool,
    pub cubic_loss_free_growth: f64,
    pub send_buffer: SendBuffer,
    /// Bytes of truesize.
    pub send_buffer_max: u64,
    pub skb_overhead: u64,
    pub min_tso_segs: u32,
}

impl TcpConfig {
    /// Validates every field; the error names the field and the allowed range.
    pub fn build(&self) -> Result<TcpParams, ConfigError> {
        // 536 B is the IPv4 default MSS (RFC 9293 §3.7.1); 9000 B jumbo frames.
        let mss = check_range("mss", self.mss, ByteSize(64), ByteSize(9000))?.0 as u32;
        let initial_window = check_range("initial_window", self.initial_window, 1, 1000)?;
        let initial_ssthresh = match self.initial_ssthresh {
            None => u64::MAX,
            Some(b) => {
                check_range(
                    "initial_ssthresh",
                    b,
                    ByteSize(2 * mss as u64),
                    ByteSize(u64::MAX / 2),
                )?
                .0
            }
        };
        let min_rto = check_range(
            "min_rto",
            self.min_rto,
            Duration::from_millis(1),
            Duration::from_secs(10),
        )?;
        let initial_rto = check_range(
            "initial_rto",
            self.initial_rto,
            min_rto,
            Duration::from_secs(60),
        )?;
        let max_rto = check_range(
            "max_rto",
            self.max_rto,
            min_rto.max(initial_rto),
            Duration::from_secs(600),
        )?;
        let receive_window = check_range(
            "receive_window",
            self.receive_window,
            ByteSize(2 * mss as u64),
            ByteSize(1 << 30),
        )?
        .0;
        let delayed_ack_segments =
            check_range("delayed_ack_segments", self.delayed_ack_segments, 1, 64)?;
        let delayed_ack_timeout = check_range(
            "delayed_ack_timeout",
            self.delayed_ack_timeout,
            Duration::from_millis(1),
            Duration::from_millis(500),
        )?;
        let dup_ack_threshold = check_range("dup_ack_threshold", self.dup_ack_threshold, 1, 100)?;
        let cubic_loss_free_growth = check_range(
            "cubic_loss_free_growth",
            self.cubic_loss_free_growth,
            0.0,
            0.5,
        )?;
        // At least the initial buffer (tcp_sndbuf_expand of the initial
        // window) so that a connection can start; Linux caps SO_SNDBUF at
        // INT_MAX/2, 1 GiB is ample.
        let send_buffer_max = check_range(
            "send_buffer_max",
            self.send_buffer_max,
            ByteSize(2 * TCP_INIT_CWND * sndbuf_per_mss(mss as u64)),
            ByteSize(1 << 30),
        )?
        .0;
        let skb_overhead = check_range(
            "skb_overhead",
            self.skb_overhead,
            ByteSize(0),
            ByteSize(4096),
        )?
        .0;
        // 1..=45: at least one segment, at most a 64 KB skb of 1448 B segments.
        let min_tso_segs = check_range("min_tso_segs", self.min_tso_segs, 1, 45)?;
        let dctcp_like = matches!(self.cc, CcKind::Dctcp | CcKind::Prague);
        Ok(TcpParams {
            cc: self.cc,
            mss,
            initial_window,
            initial_ssthresh,
            min_rto,
            initial_rto,
            max_rto,
            receive_window,
            delayed_ack_segments,
            delayed_ack_timeout,
            sack: self.sack,
            ecn: self.ecn || dctcp_like,
            accurate_ecn: dctcp_like,
            pacing: self.pacing,
            hystart: self.hystart,
            dup_ack_threshold,
            slow_start_after_idle: self.slow_start_after_idle,
            cubic_loss_free_growth,
            send_buffer: self.send_buffer,
            send_buffer_max,
            skb_overhead,
            min_tso_segs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_parses_from_toml_and_rejects_unknown_fields() {
        let c: TcpConfig =
            toml::from_str("cc = \"bbr\"\nmss = \"1400B\"\nmin_rto = \"1s\"").unwrap();
        assert_eq!(c.cc, CcKind::Bbr);
        assert_eq!(c.build().unwrap().mss, 1400);
        assert!(toml::from_str::<TcpConfig>("cwnd = 3").is_err());
        let c: TcpConfig = toml::from_str("cc = \"newreno\"").unwrap();
        assert_eq!(c.cc, CcKind::NewReno);
    }

    #[test]
    fn build_names_the_bad_field() {
        let c = TcpConfig {
            mss: ByteSize(10),
            ..TcpConfig::default()
        };
        let e = c.build().unwrap_err();
        assert_eq!(e.field, "mss");
        assert_eq!(e.to_string(), "mss = 10B: must be in 64B..=9kB");
        let c = TcpConfig {
            delayed_ack_segments: 0,
            ..TcpConfig::default()
        };
        assert_eq!(c.build().unwrap_err().field, "delayed_ack_segments");
    }

    #[test]
    fn build_checks_the_linux_buffer_fields() {
        let bad = |c: TcpConfig| c.build().unwrap_err();
        let e = bad(TcpConfig {
            cubic_loss_free_growth: 0.6,
            ..TcpConfig::default()
        });
        assert_eq!(
            e.to_string(),
            "cubic_loss_free_growth = 0.6: must be in 0..=0.5"
        );
        let e = bad(TcpConfig {
            send_buffer_max: ByteSize(1000),
            ..TcpConfig::default()
        });
        assert_eq!(e.field, "send_buffer_max");
        let e = bad(TcpConfig {
            min_tso_segs: 0,
            ..TcpConfig::default()
        });
        assert_eq!(e.field, "min_tso_segs");
        let e = bad(TcpConfig {
            skb_overhead: ByteSize(5000),
            ..TcpConfig::default()
        });
        assert_eq!(e.field, "skb_overhead");
        let c: TcpConfig =
            toml::from_str("send_buffer = \"unlimited\"\nsend_buffer_max = \"8MiB\"").unwrap();
        assert_eq!(c.send_buffer, SendBuffer::Unlimited);
        let p = TcpConfig::default().build().unwrap();
        assert_eq!(
            (p.send_buffer_max, p.skb_overhead, p.min_tso_segs),
            (4_194_304, 832, 2)
        );
    }

    #[test]
    fn dctcp_and_prague_imply_accurate_ecn() {
        for (cc, acc) in [
            (CcKind::Dctcp, true),
            (CcKind::Prague, true),
            (CcKind::Cubic, false),
        ] {
            let p = TcpConfig {
                cc,
                ..TcpConfig::default()
            }
            .build()
            .unwrap();
            assert_eq!(p.accurate_ecn, acc);
            assert_eq!(p.ecn, acc);
        }
    }
}
