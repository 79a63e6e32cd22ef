//! FlexRIC's SLICE service model (RAN function 145), PLAIN encoding:
//! variable length, no padding, strings as `u32 len | bytes` without NUL
//! (FLEXRIC-SMS.md section 7). Sans-IO encode/decode only; every value is
//! read and written by the one [`Wire`] implementation of its type, so the
//! encoder and the decoder follow the same layout by construction.

use thiserror::Error;

/// Why bytes are not a SLICE message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SliceDecodeError {
    #[error("SLICE message ends at byte {at} of {len} while reading {what}")]
    Truncated {
        what: &'static str,
        at: usize,
        len: usize,
    },
    #[error("SLICE message: {what} = {value} unknown (allowed: {allowed})")]
    Unknown {
        what: &'static str,
        value: u32,
        allowed: &'static str,
    },
    #[error("SLICE message: {0} bytes left over after the message")]
    Trailing(usize),
}

/// A little-endian reader that names what it was reading when it ran out.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], SliceDecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or(SliceDecodeError::Truncated {
                what,
                at: self.at,
                len: self.bytes.len(),
            })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, SliceDecodeError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4"),
        ))
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, SliceDecodeError> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?.try_into().expect("2"),
        ))
    }
    fn f32(&mut self, what: &'static str) -> Result<f32, SliceDecodeError> {
        Ok(f32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4"),
        ))
    }
    fn i64(&mut self, what: &'static str) -> Result<i64, SliceDecodeError> {
        Ok(i64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8"),
        ))
    }
    /// A count of items of at least `min_size` bytes each: refused when
    /// the rest of the message cannot hold them (no allocation from a
    /// count alone).
    fn count(&mut self, what: &'static str, min_size: usize) -> Result<usize, SliceDecodeError> {
        let n = self.u32(what)? as usize;
        if n.saturating_mul(min_size) > self.bytes.len() - self.at {
            return Err(SliceDecodeError::Truncated {
                what,
                at: self.at,
                len: self.bytes.len(),
            });
        }
        Ok(n)
    }
    fn string(&mut self, what: &'static str) -> Result<Vec<u8>, SliceDecodeError> {
        let n = self.count(what, 1)?;
        Ok(self.take(n, what)?.to_vec())
    }
    /// Errors unless every byte was read.
    pub fn finish(self) -> Result<(), SliceDecodeError> {
        match self.bytes.len() - self.at {
            0 => Ok(()),
            n => Err(SliceDecodeError::Trailing(n)),
        }
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_f32(out: &mut Vec<u8>, v: f32) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s);
}

/// One SLICE value on the wire.
pub trait Wire: Sized {
    fn write(&self, out: &mut Vec<u8>);
    fn read(r: &mut Reader) -> Result<Self, SliceDecodeError>;
}

/// A slice's algorithm and parameters (`params`).
#[derive(Debug, Clone, PartialEq)]
pub enum SliceParams {
    None,
    /// PRB positions [low, high] (high is first on the wire).
    Static {
        pos_high: u32,
        pos_low: u32,
    },
    /// NVS rate: reference first on the wire.
    NvsRate {
        mbps_reference: f32,
        mbps_required: f32,
    },
    NvsCapacity {
        pct_reserved: f32,
    },
    Scn19Dynamic {
        mbps_reference: f32,
        mbps_required: f32,
    },
    Scn19Fixed {
        pos_high: u32,
        pos_low: u32,
    },
    Scn19OnDemand {
        log_delta: f32,
        pct_reserved: f32,
        tau: u32,
    },
    Edf {
        deadline: u32,
        guaranteed_prbs: u32,
        max_replenish: u32,
        over: Vec<u32>,
    },
}

impl Wire for SliceParams {
    fn write(&self, out: &mut Vec<u8>) {
        use SliceParams as P;
        match self {
            P::None => put_u32(out, 0),
            P::Static { pos_high, pos_low } => {
                put_u32(out, 1);
                put_u32(out, *pos_high);
                put_u32(out, *pos_low);
            }
            P::NvsRate {
                mbps_reference,
                mbps_required,
            } => {
                put_u32(out, 2);
                put_u32(out, 0);
                put_f32(out, *mbps_reference);
                put_f32(out, *mbps_required);
            }
            P::NvsCapacity { pct_reserved } => {
                put_u32(out, 2);
                put_u32(out, 1);
                put_f32(out, *pct_reserved);
            }
            P::Scn19Dynamic {
                mbps_reference,
                mbps_required,
            } => {
                put_u32(out, 3);
                put_u32(out, 0);
                put_f32(out, *mbps_reference);
                put_f32(out, *mbps_required);
            }
            P::Scn19Fixed { pos_high, pos_low } => {
                put_u32(out, 3);
                put_u32(out, 1);
                put_u32(out, *pos_high);
                put_u32(out, *pos_low);
            }
            P::Scn19OnDemand {
                log_delta,
                pct_reserved,
                tau,
            } => {
                put_u32(out, 3);
                put_u32(out, 2);
                put_f32(out, *log_delta);
                put_f32(out, *pct_reserved);
                put_u32(out, *tau);
            }
            P::Edf {
                deadline,
                guaranteed_prbs,
                max_replenish,
                over,
            } => {
                put_u32(out, 4);
                put_u32(out, *deadline);
                put_u32(out, *guaranteed_prbs);
                put_u32(out, *max_replenish);
                put_u32(out, over.len() as u32);
                over.iter().for_each(|v| put_u32(out, *v));
            }
        }
    }
    fn read(r: &mut Reader) -> Result<Self, SliceDecodeError> {
        use SliceParams as P;
        let unknown = |what, value, allowed| SliceDecodeError::Unknown {
            what,
            value,
            allowed,
        };
        Ok(match r.u32("algorithm")? {
            0 => P::None,
            1 => P::Static {
                pos_high: r.u32("pos_high")?,
                pos_low: r.u32("pos_low")?,
            },
            2 => match r.u32("NVS conf")? {
                0 => P::NvsRate {
                    mbps_reference: r.f32("mbps_reference")?,
                    mbps_required: r.f32("mbps_required")?,
                },
                1 => P::NvsCapacity {
                    pct_reserved: r.f32("pct_reserved")?,
                },
                v => return Err(unknown("NVS conf", v, "0 rate, 1 capacity")),
            },
            3 => match r.u32("SCN19 conf")? {
                0 => P::Scn19Dynamic {
                    mbps_reference: r.f32("mbps_reference")?,
                    mbps_required: r.f32("mbps_required")?,
                },
                1 => P::Scn19Fixed {
                    pos_high: r.u32("pos_high")?,
                    pos_low: r.u32("pos_low")?,
                },
                2 => P::Scn19OnDemand {
                    log_delta: r.f32("log_delta")?,
                    pct_reserved: r.f32("pct_reserved")?,
                    tau: r.u32("tau")?,
                },
                v => return Err(unknown("SCN19 conf", v, "0 dynamic, 1 fixed, 2 on demand")),
            },
            4 => {
                let deadline = r.u32("deadline")?;
                let guaranteed_prbs = r.u32("guaranteed_prbs")?;
                let max_replenish = r.u32("max_replenish")?;
                let k = r.count("EDF over", 4)?;
                let over = (0..k)
                    .map(|_| r.u32("EDF over"))
                    .collect::<Result<_, _>>()?;
                P::Edf {
                    deadline,
                    guaranteed_prbs,
                    max_replenish,
                    over,
                }
            }
            v => {
                return Err(unknown(
                    "algorithm",
                    v,
                    "0 none, 1 static, 2 NVS, 3 SCN19, 4 EDF",
                ))
            }
        })
    }
}

/// One slice: `u32 id | string label | string sched | params`.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    pub id: u32,
    pub label: Vec<u8>,
    pub sched: Vec<u8>,
    pub params: SliceParams,
}

impl Wire for Slice {
    fn write(&self, out: &mut Vec<u8>) {
        put_u32(out, self.id);
        put_string(out, &self.label);
        put_string(out, &self.sched);
        self.params.write(out);
    }
    fn read(r: &mut Reader) -> Result<Self, SliceDecodeError> {
        Ok(Slice {
            id: r.u32("slice id")?,
            label: r.string("slice label")?,
            sched: r.string("slice scheduler")?,
            params: SliceParams::read(r)?,
        })
    }
}

/// One direction's slicing: `string sched_name | u32 n | n slices`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SliceConf {
    pub sched_name: Vec<u8>,
    pub slices: Vec<Slice>,
}

impl Wire for SliceConf {
    fn write(&self, out: &mut Vec<u8>) {
        put_string(out, &self.sched_name);
        put_u32(out, self.slices.len() as u32);
        self.slices.iter().for_each(|s| s.write(out));
    }
    fn read(r: &mut Reader) -> Result<Self, SliceDecodeError> {
        let sched_name = r.string("scheduler name")?;
        // A slice is at least 16 bytes (id, two empty strings, algorithm).
        let n = r.count("slices", 16)?;
        let slices = (0..n).map(|_| Slice::read(r)).collect::<Result<_, _>>()?;
        Ok(SliceConf { sched_name, slices })
    }
}

/// A UE's slices: 10 bytes, no padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UeSlice {
    pub dl_id: u32,
    pub ul_id: u32,
    pub rnti: u16,
}

/// `u32 n | n UE associations`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UeAssoc(pub Vec<UeSlice>);

impl Wire for UeAssoc {
    fn write(&self, out: &mut Vec<u8>) {
        put_u32(out, self.0.len() as u32);
        for u in &self.0 {
            put_u32(out, u.dl_id);
            put_u32(out, u.ul_id);
            out.extend_from_slice(&u.rnti.to_le_bytes());
        }
    }
    fn read(r: &mut Reader) -> Result<Self, SliceDecodeError> {
        let n = r.count("UE associations", 10)?;
        (0..n)
            .map(|_| {
                Ok(UeSlice {
                    dl_id: r.u32("dl_id")?,
                    ul_id: r.u32("ul_id")?,
                    rnti: r.u16("rnti")?,
                })
            })
            .collect::<Result<_, _>>()
            .map(UeAssoc)
    }
}

/// Indication message: `dl | ul | ue_assoc | i64 tstamp_us`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SliceIndication {
    pub dl: SliceConf,
    pub ul: SliceConf,
    pub ues: UeAssoc,
    pub tstamp_us: i64,
}

impl Wire for SliceIndication {
    fn write(&self, out: &mut Vec<u8>) {
        self.dl.write(out);
        self.ul.write(out);
        self.ues.write(out);
        out.extend_from_slice(&self.tstamp_us.to_le_bytes());
    }
    fn read(r: &mut Reader) -> Result<Self, SliceDecodeError> {
        Ok(SliceIndication {
            dl: SliceConf::read(r)?,
            ul: SliceConf::read(r)?,
            ues: UeAssoc::read(r)?,
            tstamp_us: r.i64("tstamp")?,
        })
    }
}

/// Control message: `u32 type` then the body.
#[derive(Debug, Clone, PartialEq)]
pub enum SliceControl {
    /// 0: add or modify (the same message does both).
    AddMod { dl: SliceConf, ul: SliceConf },
    /// 1: delete these slice ids.
    Del { dl: Vec<u32>, ul: Vec<u32> },
    /// 2: associate UEs with slices.
    UeSliceAssoc(UeAssoc),
}

fn ids(r: &mut Reader, what: &'static str) -> Result<Vec<u32>, SliceDecodeError> {
    let n = r.count(what, 4)?;
    (0..n).map(|_| r.u32(what)).collect()
}

impl Wire for SliceControl {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            SliceControl::AddMod { dl, ul } => {
                put_u32(out, 0);
                dl.write(out);
                ul.write(out);
            }
            SliceControl::Del { dl, ul } => {
                put_u32(out, 1);
                for list in [dl, ul] {
                    put_u32(out, list.len() as u32);
                    list.iter().for_each(|v| put_u32(out, *v));
                }
            }
            SliceControl::UeSliceAssoc(a) => {
                put_u32(out, 2);
                a.write(out);
            }
        }
    }
    fn read(r: &mut Reader) -> Result<Self, SliceDecodeError> {
        Ok(match r.u32("control type")? {
            0 => SliceControl::AddMod {
                dl: SliceConf::read(r)?,
                ul: SliceConf::read(r)?,
            },
            1 => SliceControl::Del {
                dl: ids(r, "DL slice ids")?,
                ul: ids(r, "UL slice ids")?,
            },
            2 => SliceControl::UeSliceAssoc(UeAssoc::read(r)?),
            v => {
                return Err(SliceDecodeError::Unknown {
                    what: "control type",
                    value: v,
                    allowed: "0 add/modify, 1 delete, 2 UE-slice association",
                })
            }
        })
    }
}

/// The bytes of `v`.
pub fn encode<T: Wire>(v: &T) -> Vec<u8> {
    let mut out = Vec::new();
    v.write(&mut out);
    out
}

/// `T` from exactly `bytes`.
pub fn decode<T: Wire>(bytes: &[u8]) -> Result<T, SliceDecodeError> {
    let mut r = Reader::new(bytes);
    let v = T::read(&mut r)?;
    r.finish()?;
    Ok(v)
}

/// Control outcome: `u32 len | diagnostic` (FlexRIC encodes no ok/error
/// value; its node sends an empty diagnostic).
pub fn outcome(diagnostic: &str) -> Vec<u8> {
    let mut out = Vec::new();
    put_string(&mut out, diagnostic.as_bytes());
    out
}
