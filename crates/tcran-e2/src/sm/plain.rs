//! FlexRIC's PLAIN encoding of fixed-size records: raw little-endian
//! x86-64 C structs (FLEXRIC-SMS.md section 2), described once per record
//! type by [`plain_record!`] as a table of (field, type, byte offset) from
//! which both the encoder and the decoder are generated, so the two cannot
//! drift.
//!
//! Padding travels on the wire with unspecified content (FLEXRIC-SMS.md
//! notation): a record keeps its padding bytes as `pad*` fields, so a
//! decoded record re-encodes to the very bytes it came from; tcran writes
//! zeros.
//!
//! The monitoring messages of MAC, RLC, PDCP and GTP share one frame,
//! [`PlainList`]: `u32 n | n records | i64 tstamp_us`, and the receiver
//! requires the counts to use up the message exactly (FlexRIC's RIC asserts
//! it).

use thiserror::Error;

/// Why bytes are not a PLAIN message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlainListError {
    #[error("{what}: message of {len} bytes, shorter than the 12 of an empty list")]
    Short { what: &'static str, len: usize },
    #[error("{what}: {n} records of {size} bytes and 12 bytes of count and timestamp need {need} bytes, the message has {len}")]
    Length {
        what: &'static str,
        n: u32,
        size: usize,
        need: u64,
        len: usize,
    },
}

/// A little-endian value at a fixed offset of a record.
pub trait Le: Sized + Copy {
    const SIZE: usize;
    fn put(self, out: &mut [u8]);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! le_num {
    ($($t:ty),*) => {$(
        impl Le for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut [u8]) {
                out[..Self::SIZE].copy_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes[..Self::SIZE].try_into().expect("sized"))
            }
        }
    )*};
}
le_num!(u8, u16, u32, u64, i8, i64, f32, f64);

impl<T: Le + Default, const N: usize> Le for [T; N] {
    const SIZE: usize = T::SIZE * N;
    fn put(self, out: &mut [u8]) {
        for (i, v) in self.into_iter().enumerate() {
            v.put(&mut out[i * T::SIZE..]);
        }
    }
    fn get(bytes: &[u8]) -> Self {
        std::array::from_fn(|i| T::get(&bytes[i * T::SIZE..]))
    }
}

/// A fixed-size PLAIN record.
pub trait PlainRecord: Sized {
    /// Bytes on the wire (the C struct's `sizeof`).
    const SIZE: usize;
    /// Writes the record over `out[..SIZE]`.
    fn write(&self, out: &mut [u8]);
    /// Reads a record from `bytes[..SIZE]`.
    fn read(bytes: &[u8]) -> Self;
}

/// Declares a record struct and its [`PlainRecord`] codec from one table
/// of `field: type @ offset`; a compile-time check asserts the fields tile
/// the record exactly (no gap, no overlap, nothing past its size).
macro_rules! plain_record {
    ($(#[$meta:meta])* $name:ident, $size:expr, { $($(#[$fm:meta])* $field:ident : $ty:ty = $off:expr),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub struct $name {
            $($(#[$fm])* pub $field: $ty,)*
        }
        impl $crate::sm::plain::PlainRecord for $name {
            const SIZE: usize = $size;
            fn write(&self, out: &mut [u8]) {
                use $crate::sm::plain::Le;
                $(self.$field.put(&mut out[$off..]);)*
            }
            fn read(bytes: &[u8]) -> Self {
                use $crate::sm::plain::Le;
                $name { $($field: <$ty>::get(&bytes[$off..]),)* }
            }
        }
        const _: () = {
            use $crate::sm::plain::Le;
            let mut next = 0usize;
            $(
                assert!($off == next, concat!(stringify!($name), ".", stringify!($field), ": offset leaves a gap or overlaps"));
                next = $off + <$ty as Le>::SIZE;
            )*
            assert!(next == $size, concat!(stringify!($name), ": fields do not add up to its size"));
        };
    };
}
pub(crate) use plain_record;

/// `u32 n | n records | i64 tstamp_us`: the indication message of
/// FlexRIC's MAC, RLC, PDCP and GTP models.
#[derive(Debug, Clone, PartialEq)]
pub struct PlainList<R> {
    pub records: Vec<R>,
    /// Microseconds since the Unix epoch.
    pub tstamp_us: i64,
}

impl<R: PlainRecord> PlainList<R> {
    /// The message's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; 12 + self.records.len() * R::SIZE];
        encode_into(&self.records, self.tstamp_us, &mut out);
        out
    }

    /// Reads a message; `what` names the model in errors.
    pub fn decode(what: &'static str, bytes: &[u8]) -> Result<PlainList<R>, PlainListError> {
        if bytes.len() < 12 {
            return Err(PlainListError::Short {
                what,
                len: bytes.len(),
            });
        }
        let n = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
        let need = 12 + n as u64 * R::SIZE as u64;
        if need != bytes.len() as u64 {
            return Err(PlainListError::Length {
                what,
                n,
                size: R::SIZE,
                need,
                len: bytes.len(),
            });
        }
        let records = bytes[4..bytes.len() - 8]
            .chunks_exact(R::SIZE)
            .map(R::read)
            .collect();
        let tstamp_us = i64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8 bytes"));
        Ok(PlainList { records, tstamp_us })
    }
}

/// Writes `records` and `tstamp_us` as a [`PlainList`] over `out`, which
/// must be exactly `12 + records.len() * R::SIZE` bytes.
pub fn encode_into<R: PlainRecord>(records: &[R], tstamp_us: i64, out: &mut [u8]) {
    out[..4].copy_from_slice(&(records.len() as u32).to_le_bytes());
    for (r, chunk) in records.iter().zip(out[4..].chunks_exact_mut(R::SIZE)) {
        r.write(chunk);
    }
    let end = out.len();
    out[end - 8..].copy_from_slice(&tstamp_us.to_le_bytes());
}
