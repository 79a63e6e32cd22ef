//! FlexRIC's monitoring service models MAC (142), RLC (143), PDCP (144)
//! and GTP (148), PLAIN encoding (FLEXRIC-SMS.md sections 2-6), from the
//! node's real counters ([`RanNode::bearer`]).
//!
//! - RAN function definition: the ASCII name (`MAC_STATS_V0`, ...), OID
//!   `0.0.0.0.0.0.0.0.1.<id>.0`, revision 1.
//! - Subscription: event trigger `u32` period in ms (FlexRIC's xApps use
//!   1, 2, 5 or 10; any period from 1 ms is taken), one REPORT action
//!   without definition.
//! - Indication: header `u32 0`; message `u32 n | n records | i64
//!   tstamp_us` ([`PlainList`]), `tstamp_us` the node's clock plus
//!   `time_offset_us` (µs since the Unix epoch with the wall clock's
//!   offset). MAC has one record per UE, RLC and PDCP one per DRB, GTP one
//!   per DRB (tcran has one NG-U tunnel per DRB's QoS flows). A list
//!   larger than [`MAX_MESSAGE`] (about 90 UEs of MAC, 105 DRBs of RLC) is
//!   sent as several indications of the same period, each a complete
//!   list of its own records (E2AP's OCTET STRING is not fragmented).
//! - Control: MAC's only control in FlexRIC (header dummy 1, action 42)
//!   changes nothing and is acknowledged without outcome, as FlexRIC's own
//!   node does; every other control is refused (FlexRIC's node aborts on
//!   them; tcran refuses and, under FlexRIC's rules, acknowledges).
//!
//! How each field is filled (the others are zero: tcran does not model
//! them, listed in docs/e2.md):
//!
//! | record | field | from the node |
//! |---|---|---|
//! | MAC (per UE) | `dl_aggr_tbs` | MAC bytes pulled from the UE's RLC entities, cumulative |
//! | | `dl_curr_tbs` | of those, since the previous report of this subscription |
//! | | `dl_aggr_bytes_sdus`, `dl_aggr_sdus` | RLC SDU bytes and SDUs sent |
//! | | `dl_aggr_prb`, `dl_sched_rb` | PRB·slots granted, cumulative and since the previous report |
//! | | `bsr` | RLC buffer bytes of the UE (what a BSR would report) |
//! | | `dl_mcs1` | MCS of the last scheduling decision |
//! | | `dl_bler` | share of the UE's transport blocks not decoded (HARQ NACKs over ACKs + NACKs), so far |
//! | | `rnti` | the RNTI |
//! | RLC (per DRB) | `txpdu_bytes` | bytes the MAC pulled (RLC PDUs) |
//! | | `txbuf_occ_bytes`, `txbuf_occ_pkts` | RLC buffer bytes, SDUs not completely sent |
//! | | `txsdu_pkts`, `txsdu_bytes` | SDUs and bytes sent completely |
//! | | `txsdu_avg_time_to_tx` | mean SDU sojourn in RLC so far, µs |
//! | | `txsdu_wt_us` | age of the oldest SDU with bytes to send, µs |
//! | | `rnti`, `mode`, `rbid` | RNTI, AM 0 / UM 1, DRB id |
//! | PDCP (per DRB) | `txsdu_bytes` | PDCP SDU bytes received for transmission |
//! | | `rnti`, `mode`, `rbid` | as RLC |
//! | GTP (per DRB) | `rnti`, `qfi` | RNTI, lowest QFI SDAP maps onto the DRB |
//!
//! Counters FlexRIC declares as `u32` wrap around at 2^32 (FlexRIC's own
//! node does the same with its C counters); the 64-bit ones do not.

use super::plain::{plain_record, PlainList, PlainRecord};
use super::{
    ControlOutcome, Indication, Job, JobState, Refusal, ServiceModel, MAX_MESSAGE, MIN_PERIOD,
};
use crate::e2ap::{Action, ActionType, RanFunction};
use tcran_control::{Bearer, DrbKey, RanNode, RlcMode};
use tcran_core::{Duration, Instant};

plain_record!(
    /// FlexRIC's `mac_ue_stats_impl_t` (176 bytes).
    MacUe, 176, {
        dl_aggr_tbs: u64 = 0,
        ul_aggr_tbs: u64 = 8,
        dl_aggr_bytes_sdus: u64 = 16,
        ul_aggr_bytes_sdus: u64 = 24,
        dl_curr_tbs: u64 = 32,
        ul_curr_tbs: u64 = 40,
        dl_sched_rb: u64 = 48,
        ul_sched_rb: u64 = 56,
        pusch_snr: f32 = 64,
        pucch_snr: f32 = 68,
        dl_bler: f32 = 72,
        ul_bler: f32 = 76,
        dl_harq: [u32; 5] = 80,
        ul_harq: [u32; 5] = 100,
        dl_num_harq: u32 = 120,
        ul_num_harq: u32 = 124,
        rnti: u32 = 128,
        dl_aggr_prb: u32 = 132,
        ul_aggr_prb: u32 = 136,
        dl_aggr_sdus: u32 = 140,
        ul_aggr_sdus: u32 = 144,
        dl_aggr_retx_prb: u32 = 148,
        ul_aggr_retx_prb: u32 = 152,
        bsr: u32 = 156,
        frame: u16 = 160,
        slot: u16 = 162,
        wb_cqi: u8 = 164,
        dl_mcs1: u8 = 165,
        ul_mcs1: u8 = 166,
        dl_mcs2: u8 = 167,
        ul_mcs2: u8 = 168,
        phr: i8 = 169,
        pad: [u8; 6] = 170,
    }
);

plain_record!(
    /// FlexRIC's `rlc_radio_bearer_stats_t` (152 bytes).
    RlcBearer, 152, {
        txpdu_pkts: u32 = 0,
        txpdu_bytes: u32 = 4,
        txpdu_wt_ms: u32 = 8,
        txpdu_dd_pkts: u32 = 12,
        txpdu_dd_bytes: u32 = 16,
        txpdu_retx_pkts: u32 = 20,
        txpdu_retx_bytes: u32 = 24,
        txpdu_segmented: u32 = 28,
        txpdu_status_pkts: u32 = 32,
        txpdu_status_bytes: u32 = 36,
        txbuf_occ_bytes: u32 = 40,
        txbuf_occ_pkts: u32 = 44,
        rxpdu_pkts: u32 = 48,
        rxpdu_bytes: u32 = 52,
        rxpdu_dup_pkts: u32 = 56,
        rxpdu_dup_bytes: u32 = 60,
        rxpdu_dd_pkts: u32 = 64,
        rxpdu_dd_bytes: u32 = 68,
        rxpdu_ow_pkts: u32 = 72,
        rxpdu_ow_bytes: u32 = 76,
        rxpdu_status_pkts: u32 = 80,
        rxpdu_status_bytes: u32 = 84,
        rxbuf_occ_bytes: u32 = 88,
        rxbuf_occ_pkts: u32 = 92,
        txsdu_pkts: u32 = 96,
        pad1: [u8; 4] = 100,
        txsdu_bytes: u64 = 104,
        /// Microseconds.
        txsdu_avg_time_to_tx: f64 = 112,
        /// Head-of-line delay, microseconds.
        txsdu_wt_us: u32 = 120,
        rxsdu_pkts: u32 = 124,
        rxsdu_bytes: u64 = 128,
        rxsdu_dd_pkts: u32 = 136,
        rxsdu_dd_bytes: u32 = 140,
        rnti: u32 = 144,
        /// 0 AM, 1 UM, 2 TM.
        mode: u8 = 148,
        rbid: u8 = 149,
        pad2: [u8; 2] = 150,
    }
);

plain_record!(
    /// FlexRIC's `pdcp_radio_bearer_stats_t` (68 bytes).
    PdcpBearer, 68, {
        txpdu_pkts: u32 = 0,
        txpdu_bytes: u32 = 4,
        txpdu_sn: u32 = 8,
        rxpdu_pkts: u32 = 12,
        rxpdu_bytes: u32 = 16,
        rxpdu_sn: u32 = 20,
        rxpdu_oo_pkts: u32 = 24,
        rxpdu_oo_bytes: u32 = 28,
        rxpdu_dd_pkts: u32 = 32,
        rxpdu_dd_bytes: u32 = 36,
        rxpdu_ro_count: u32 = 40,
        txsdu_pkts: u32 = 44,
        txsdu_bytes: u32 = 48,
        rxsdu_pkts: u32 = 52,
        rxsdu_bytes: u32 = 56,
        rnti: u32 = 60,
        /// 0 AM, 1 UM, 2 TM.
        mode: u8 = 64,
        rbid: u8 = 65,
        pad: [u8; 2] = 66,
    }
);

plain_record!(
    /// FlexRIC's `gtp_ngu_t_stats_t` (12 bytes).
    GtpTunnel, 12, {
        rnti: u32 = 0,
        teidgnb: u32 = 4,
        qfi: u8 = 8,
        teidupf: u8 = 9,
        pad: [u8; 2] = 10,
    }
);

/// Which of FlexRIC's monitoring models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StatsKind {
    Mac,
    Rlc,
    Pdcp,
    Gtp,
}

impl StatsKind {
    pub const ALL: [StatsKind; 4] = [
        StatsKind::Mac,
        StatsKind::Rlc,
        StatsKind::Pdcp,
        StatsKind::Gtp,
    ];

    /// (RAN function id, definition, OID), FLEXRIC-SMS.md section 1.
    pub const fn function(self) -> (u16, &'static str, &'static str) {
        match self {
            StatsKind::Mac => (142, "MAC_STATS_V0", "0.0.0.0.0.0.0.0.1.142.0"),
            StatsKind::Rlc => (143, "RLC_STATS_V0", "0.0.0.0.0.0.0.0.1.143.0"),
            StatsKind::Pdcp => (144, "PDCP_STATS_V0", "0.0.0.0.0.0.0.0.1.144.0"),
            StatsKind::Gtp => (148, "GTP_STATS_V0", "0.0.0.0.0.0.0.0.1.148.0"),
        }
    }

    pub fn of_function(id: u16) -> Option<StatsKind> {
        StatsKind::ALL.into_iter().find(|k| k.function().0 == id)
    }

    /// Bytes of one record.
    pub const fn record_size(self) -> usize {
        match self {
            StatsKind::Mac => MacUe::SIZE,
            StatsKind::Rlc => RlcBearer::SIZE,
            StatsKind::Pdcp => PdcpBearer::SIZE,
            StatsKind::Gtp => GtpTunnel::SIZE,
        }
    }
}

/// One of FlexRIC's monitoring models.
#[derive(Debug, Clone)]
pub struct FlexricStats {
    pub kind: StatsKind,
    /// Microseconds from the node's clock to the Unix epoch.
    pub time_offset_us: i64,
}

impl FlexricStats {
    /// The four models, one per [`StatsKind`].
    pub fn all(time_offset_us: i64) -> [FlexricStats; 4] {
        StatsKind::ALL.map(|kind| FlexricStats {
            kind,
            time_offset_us,
        })
    }
}

/// The state of one subscription: what the previous report said of each
/// UE (MAC `dl_curr_tbs` and `dl_sched_rb` are per report), and the DRB
/// list and bearers reused from period to period.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsJob {
    /// (RNTI, MAC bytes, PRBs) at the previous report, in RNTI order.
    previous: Vec<(u16, u64, u64)>,
    drbs: Vec<DrbKey>,
}

/// A DRB's mode as FlexRIC numbers it.
fn mode(m: RlcMode) -> u8 {
    match m {
        RlcMode::Am => 0,
        RlcMode::Um => 1,
    }
}

fn us(d: Duration) -> u64 {
    d.as_nanos() / 1000
}

/// The low 32 bits: FlexRIC's `u32` counters wrap.
fn low32(v: u64) -> u32 {
    v as u32
}

fn sat32(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

/// The RLC record of one DRB.
pub fn rlc_record(key: DrbKey, b: &Bearer) -> RlcBearer {
    let c = &b.counters;
    RlcBearer {
        txpdu_bytes: low32(b.lower.mac_tx_bytes),
        txbuf_occ_bytes: sat32(b.lower.rlc_backlog_bytes),
        txbuf_occ_pkts: b.lower.rlc_backlog_sdus,
        txsdu_pkts: low32(c.rlc_sdus_delivered),
        txsdu_bytes: b.lower.rlc_tx_bytes,
        txsdu_avg_time_to_tx: if c.rlc_sdus_delivered == 0 {
            0.0
        } else {
            us(c.rlc_sdu_delay_sum) as f64 / c.rlc_sdus_delivered as f64
        },
        txsdu_wt_us: sat32(us(b.lower.rlc_sojourn)),
        rnti: key.rnti.0.into(),
        mode: mode(b.rlc_mode),
        rbid: key.drb.0,
        ..RlcBearer::default()
    }
}

/// The PDCP record of one DRB.
pub fn pdcp_record(key: DrbKey, b: &Bearer) -> PdcpBearer {
    PdcpBearer {
        txsdu_bytes: low32(b.counters.pdcp_sdu_bits_dl / 8),
        rnti: key.rnti.0.into(),
        mode: mode(b.rlc_mode),
        rbid: key.drb.0,
        ..PdcpBearer::default()
    }
}

/// The GTP record of one DRB.
pub fn gtp_record(key: DrbKey, b: &Bearer) -> GtpTunnel {
    GtpTunnel {
        rnti: key.rnti.0.into(),
        qfi: b.qfi.unwrap_or(0),
        ..GtpTunnel::default()
    }
}

/// Adds one DRB of a UE to its MAC record (the first DRB starts it).
fn add_to_mac(r: &mut MacUe, key: DrbKey, b: &Bearer) {
    r.rnti = key.rnti.0.into();
    r.dl_aggr_tbs += b.lower.mac_tx_bytes;
    r.dl_aggr_bytes_sdus += b.lower.rlc_tx_bytes;
    // PRBs are the UE's, counted on its first DRB only (the node's rule).
    r.dl_sched_rb += b.lower.mac_prbs;
    r.dl_aggr_sdus = r
        .dl_aggr_sdus
        .wrapping_add(low32(b.counters.rlc_sdus_delivered));
    r.bsr = r.bsr.saturating_add(sat32(b.lower.rlc_backlog_bytes));
    r.dl_mcs1 = b.lower.mcs;
    // HARQ outcomes are the UE's, on its first DRB only (the node's rule).
    if b.harq_acks + b.harq_nacks > 0 {
        r.dl_bler = (b.harq_nacks as f64 / (b.harq_acks + b.harq_nacks) as f64) as f32;
    }
}

impl StatsJob {
    /// The MAC records of every UE at `now`; `dl_curr_tbs` and
    /// `dl_sched_rb` count from the previous call.
    fn mac_records(&mut self, node: &dyn RanNode, now: Instant) -> Vec<MacUe> {
        let mut out: Vec<MacUe> = Vec::new();
        for &key in &self.drbs {
            let Some(b) = node.bearer(key, now) else {
                continue;
            };
            match out.last_mut() {
                Some(r) if r.rnti == u32::from(key.rnti.0) => add_to_mac(r, key, &b),
                _ => {
                    let mut r = MacUe::default();
                    add_to_mac(&mut r, key, &b);
                    out.push(r);
                }
            }
        }
        let mut previous = Vec::with_capacity(out.len());
        for r in &mut out {
            let prbs = r.dl_sched_rb;
            r.dl_aggr_prb = low32(prbs);
            let rnti = r.rnti as u16;
            let before = self
                .previous
                .binary_search_by_key(&rnti, |p| p.0)
                .ok()
                .map(|i| self.previous[i]);
            let (bytes0, prbs0) = before.map_or((0, 0), |p| (p.1, p.2));
            r.dl_curr_tbs = r.dl_aggr_tbs.saturating_sub(bytes0);
            r.dl_sched_rb = prbs.saturating_sub(prbs0);
            previous.push((rnti, r.dl_aggr_tbs, prbs));
        }
        self.previous = previous;
        out
    }
}

/// Records per message: a message stays within [`MAX_MESSAGE`] (E2AP's
/// OCTET STRING without APER fragmentation), so a node with many UEs or
/// DRBs sends several indications per period, each a list of its own.
pub const fn records_per_message(size: usize) -> usize {
    (MAX_MESSAGE - 12) / size
}

/// Messages `[u32 n | records | i64 tstamp_us]` of one record per DRB of
/// `drbs` that exists, each record written straight into its message
/// (1,000 DRBs every millisecond: no vector of records in between).
fn per_drb<R: PlainRecord>(
    drbs: &[DrbKey],
    node: &dyn RanNode,
    now: Instant,
    tstamp_us: i64,
    record: impl Fn(DrbKey, &Bearer) -> R,
) -> Vec<Vec<u8>> {
    let per_message = records_per_message(R::SIZE);
    let mut out = Vec::new();
    let mut message = Vec::new();
    let mut n = 0u32;
    let finish = |message: &mut Vec<u8>, n: u32| {
        message[..4].copy_from_slice(&n.to_le_bytes());
        message.extend_from_slice(&tstamp_us.to_le_bytes());
        std::mem::take(message)
    };
    for &key in drbs {
        let Some(b) = node.bearer(key, now) else {
            continue;
        };
        if message.is_empty() {
            message.reserve(12 + per_message.min(drbs.len()) * R::SIZE);
            message.extend_from_slice(&[0; 4]);
        }
        let at = message.len();
        message.resize(at + R::SIZE, 0);
        record(key, &b).write(&mut message[at..]);
        n += 1;
        if n as usize == per_message {
            out.push(finish(&mut message, n));
            n = 0;
        }
    }
    if !message.is_empty() || out.is_empty() {
        if message.is_empty() {
            message.extend_from_slice(&[0; 4]);
        }
        out.push(finish(&mut message, n));
    }
    out
}

impl FlexricStats {
    /// The indication messages at `now` (each with the header [`HEADER`]):
    /// one, or several of at most [`MAX_MESSAGE`] bytes.
    pub fn messages(&self, job: &mut StatsJob, node: &dyn RanNode, now: Instant) -> Vec<Vec<u8>> {
        job.drbs.clear();
        node.drbs(&mut job.drbs);
        let tstamp_us = us(now.saturating_since(Instant::ZERO)) as i64 + self.time_offset_us;
        match self.kind {
            StatsKind::Mac => {
                let records = job.mac_records(node, now);
                let mut chunks: Vec<Vec<u8>> = records
                    .chunks(records_per_message(MacUe::SIZE))
                    .map(|c| {
                        let mut m = vec![0u8; 12 + c.len() * MacUe::SIZE];
                        super::plain::encode_into(c, tstamp_us, &mut m);
                        m
                    })
                    .collect();
                if chunks.is_empty() {
                    chunks.push(
                        PlainList::<MacUe> {
                            records: Vec::new(),
                            tstamp_us,
                        }
                        .encode(),
                    );
                }
                chunks
            }
            StatsKind::Rlc => per_drb(&job.drbs, node, now, tstamp_us, rlc_record),
            StatsKind::Pdcp => per_drb(&job.drbs, node, now, tstamp_us, pdcp_record),
            StatsKind::Gtp => per_drb(&job.drbs, node, now, tstamp_us, gtp_record),
        }
    }
}

/// The indication header of every PLAIN model: `u32` 0 (FlexRIC asserts
/// it is 4 bytes).
pub const HEADER: [u8; 4] = [0; 4];

/// Reads a PLAIN event trigger: the period in ms, at least 1.
pub fn period_of(trigger: &[u8]) -> Result<Duration, Refusal> {
    let ms = <[u8; 4]>::try_from(trigger)
        .map(u32::from_le_bytes)
        .map_err(|_| {
            Refusal::action_not_supported(format!(
                "event trigger of {} bytes: expected a u32 period in ms (4 bytes)",
                trigger.len()
            ))
        })?;
    if ms == 0 {
        return Err(Refusal::action_not_supported(
            "event trigger period 0 ms: the period is 1 ms or more",
        ));
    }
    Ok(Duration::from_millis(ms.into()).max(MIN_PERIOD))
}

/// Checks a PLAIN subscription's action: REPORT, no definition.
pub fn check_report_action(action: &Action) -> Result<(), Refusal> {
    if action.kind != ActionType::Report {
        return Err(Refusal::action_not_supported(
            "only REPORT actions are supported",
        ));
    }
    Ok(())
}

/// A PLAIN model's RAN function.
pub fn plain_function(id: u16, definition: &str, oid: &str) -> RanFunction {
    RanFunction {
        id,
        definition: definition.as_bytes().to_vec(),
        revision: 1,
        oid: oid.into(),
    }
}

/// FlexRIC's MAC control: dummy header 1, action 42 (FLEXRIC-SMS.md
/// section 3), the only one its node accepts.
pub const MAC_CONTROL: ([u8; 4], [u8; 4]) = ([1, 0, 0, 0], [42, 0, 0, 0]);

impl ServiceModel for FlexricStats {
    fn ran_function_id(&self) -> u16 {
        self.kind.function().0
    }

    fn ran_function(&self, _node: &dyn RanNode) -> RanFunction {
        let (id, definition, oid) = self.kind.function();
        plain_function(id, definition, oid)
    }

    fn subscribe(
        &self,
        trigger: &[u8],
        action: &Action,
        _node: &dyn RanNode,
    ) -> Result<Job, Refusal> {
        check_report_action(action)?;
        Ok(Job {
            period: period_of(trigger)?,
            state: JobState::FlexricStats(StatsJob::default()),
        })
    }

    fn indicate(&self, job: &mut JobState, node: &dyn RanNode, now: Instant) -> Vec<Indication> {
        let JobState::FlexricStats(job) = job else {
            return Vec::new();
        };
        self.messages(job, node, now)
            .into_iter()
            .map(|m| (HEADER.to_vec(), m))
            .collect()
    }

    fn control(
        &mut self,
        header: &[u8],
        message: &[u8],
        _node: &mut dyn RanNode,
        _now: Instant,
    ) -> ControlOutcome {
        let (id, definition, _) = self.kind.function();
        if self.kind == StatsKind::Mac
            && (header, message) == (&MAC_CONTROL.0[..], &MAC_CONTROL.1[..])
        {
            // FlexRIC's placeholder control: nothing to change.
            return ControlOutcome::Read { outcome: None };
        }
        ControlOutcome::Refused {
            refusal: Refusal::ric_request(
                super::cause::CONTROL_MESSAGE_INVALID,
                format!(
                    "{definition} (RAN function {id}): control header {header:02x?} message \
                     {message:02x?} means nothing to tcran (FlexRIC defines only MAC's \
                     header 1 / action 42, which changes nothing)"
                ),
            ),
            outcome: None,
        }
    }
}
