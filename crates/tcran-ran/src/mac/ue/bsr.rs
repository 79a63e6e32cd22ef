//! Buffer status report MAC CEs (TS 38.321 §6.1.3.1) and their buffer-size
//! quantisation (Tables 6.1.3.1-1 and 6.1.3.1-2).
//!
//! Contract: a buffer size in bytes (the data available for transmission
//! across the logical channels of one LCG, TS 38.321 §5.4.5) maps to the
//! smallest table index whose level holds it (index 0: no data; the last
//! index: more than the table's largest level); the gNB reads an index back
//! as the upper end of its level, the most the UE can have, which is what a
//! grant must hold to empty the LCG. The CE sizes are those of §6.1.3.1:
//! a Short (Truncated) BSR is one octet behind a one-octet fixed-size
//! subheader (§6.1.2, R/LCID); a Long (Truncated) BSR is a bitmap octet
//! plus one octet per reported LCG behind a two-octet variable-size
//! subheader (R/F/LCID/L with an 8-bit L).

/// Upper ends in bytes of the levels of the 5-bit Buffer Size field (Short
/// and Short Truncated BSR), TS 38.321 Table 6.1.3.1-1, index 1..=30
/// ("BS <= value"); index 0 is "BS = 0" and index 31 is "BS > 150000".
const SHORT_LEVELS: [u32; 30] = [
    10, 14, 20, 28, 38, 53, 74, 102, 142, 198, 276, 384, 535, 745, 1038, 1446, 2014, 2806, 3909,
    5446, 7587, 10570, 14726, 20516, 28581, 39818, 55474, 77284, 107669, 150000,
];

/// Upper ends in bytes of the levels of the 8-bit Buffer Size field (Long
/// and Long Truncated BSR), TS 38.321 Table 6.1.3.1-2, index 1..=253
/// ("BS <= value"); index 0 is "BS = 0", index 254 is "BS > 81338368" and
/// index 255 is reserved.
const LONG_LEVELS: [u32; 253] = [
    10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 23, 25, 26, 28, 30, 32, 34, 36, 38, 40, 43, 46,
    49, 52, 55, 59, 62, 66, 71, 75, 80, 85, 91, 97, 103, 110, 117, 124, 132, 141, 150, 160, 170,
    181, 193, 205, 218, 233, 248, 264, 281, 299, 318, 339, 361, 384, 409, 436, 464, 494, 526, 560,
    597, 635, 677, 720, 767, 817, 870, 926, 987, 1051, 1119, 1191, 1269, 1351, 1439, 1532, 1631,
    1737, 1850, 1970, 2098, 2234, 2379, 2533, 2698, 2873, 3059, 3258, 3469, 3694, 3934, 4189, 4461,
    4751, 5059, 5387, 5737, 6109, 6506, 6928, 7378, 7857, 8367, 8910, 9488, 10104, 10760, 11458,
    12202, 12994, 13838, 14736, 15692, 16711, 17795, 18951, 20181, 21491, 22885, 24371, 25953,
    27638, 29431, 31342, 33376, 35543, 37850, 40307, 42923, 45709, 48676, 51836, 55200, 58784,
    62599, 66663, 70990, 75598, 80505, 85730, 91295, 97221, 103532, 110252, 117409, 125030, 133146,
    141789, 150992, 160793, 171231, 182345, 194182, 206786, 220209, 234503, 249725, 265935, 283197,
    301579, 321155, 342002, 364202, 387842, 413018, 439827, 468377, 498780, 531156, 565634, 602350,
    641449, 683087, 727427, 774645, 824928, 878475, 935498, 996222, 1060888, 1129752, 1203085,
    1281179, 1364342, 1452903, 1547213, 1647644, 1754595, 1868488, 1989774, 2118933, 2256475,
    2402946, 2558924, 2725027, 2901912, 3090279, 3290873, 3504487, 3731968, 3974215, 4232186,
    4506902, 4799451, 5110989, 5442750, 5796046, 6172275, 6572925, 6999582, 7453933, 7937777,
    8453028, 9001725, 9586039, 10208280, 10870913, 11576557, 12328006, 13128233, 13980403,
    14887889, 15854280, 16883401, 17979324, 19146385, 20389201, 21712690, 23122088, 24622972,
    26221280, 27923336, 29735875, 31666069, 33721553, 35910462, 38241455, 40723756, 43367187,
    46182206, 49179951, 52372284, 55771835, 59392055, 63247269, 67352729, 71724679, 76380419,
    81338368,
];

/// Which Buffer Size field a BSR format carries.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BufferSizeTable {
    /// 5 bits, Table 6.1.3.1-1 (Short and Short Truncated BSR).
    Short,
    /// 8 bits, Table 6.1.3.1-2 (Long and Long Truncated BSR).
    Long,
}

impl BufferSizeTable {
    fn levels(self) -> &'static [u32] {
        match self {
            BufferSizeTable::Short => &SHORT_LEVELS,
            BufferSizeTable::Long => &LONG_LEVELS,
        }
    }

    /// The index a UE reports for `bytes`: 0 for none, else the smallest
    /// index whose level's upper end is at least `bytes`, else the "more
    /// than the largest level" index (31 or 254).
    pub fn index(self, bytes: u64) -> u8 {
        if bytes == 0 {
            return 0;
        }
        let levels = self.levels();
        let above = levels.partition_point(|&upper| u64::from(upper) < bytes);
        // `above` < levels.len() names level `above + 1`; == len is the
        // open-ended top index. Both tables have fewer than 255 levels.
        u8::try_from(above + 1).expect("tables have < 255 levels")
    }

    /// The most bytes index `index` can stand for (what a gNB schedules
    /// for): 0 for index 0, the level's upper end, and for the open-ended
    /// top index the table's largest level (the UE has more, the gNB cannot
    /// know how much). `None` for an index outside the table (255 in the
    /// long table is reserved).
    pub fn upper_bound(self, index: u8) -> Option<u64> {
        let levels = self.levels();
        let i = usize::from(index);
        match i {
            0 => Some(0),
            _ if i <= levels.len() => Some(u64::from(levels[i - 1])),
            _ if i == levels.len() + 1 => levels.last().map(|&b| u64::from(b)),
            _ => None,
        }
    }
}

/// A logical channel group id (TS 38.331 `logicalChannelGroup`, 0..=7).
pub type LcgId = u8;

/// Number of LCGs a Long BSR bitmap can name (TS 38.321 §6.1.3.1, LCG_0..7).
pub const MAX_LCGS: usize = 8;

/// The four BSR MAC CE formats of TS 38.321 §6.1.3.1.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BsrFormat {
    /// One LCG, 5-bit buffer size.
    Short,
    /// Padding BSR that could not hold every LCG with data: the LCG of the
    /// highest-priority logical channel with data, 5-bit buffer size.
    ShortTruncated,
    /// Every LCG with data, 8-bit buffer sizes.
    Long,
    /// As many LCGs with data as fit, in decreasing priority of their
    /// highest-priority logical channel, 8-bit buffer sizes.
    LongTruncated,
}

impl BsrFormat {
    /// The table of its Buffer Size fields.
    pub fn table(self) -> BufferSizeTable {
        match self {
            BsrFormat::Short | BsrFormat::ShortTruncated => BufferSizeTable::Short,
            BsrFormat::Long | BsrFormat::LongTruncated => BufferSizeTable::Long,
        }
    }

    /// A truncated format does not cancel triggered BSRs or pending SRs and
    /// does not restart periodicBSR-Timer (TS 38.321 §5.4.5).
    pub fn is_truncated(self) -> bool {
        matches!(self, BsrFormat::ShortTruncated | BsrFormat::LongTruncated)
    }

    /// Bytes of the CE and its MAC subheader with `lcgs` buffer sizes.
    pub fn bytes_with_subheader(self, lcgs: usize) -> u32 {
        match self {
            BsrFormat::Short | BsrFormat::ShortTruncated => SHORT_BSR_WITH_SUBHEADER,
            BsrFormat::Long | BsrFormat::LongTruncated => long_bsr_with_subheader(lcgs),
        }
    }
}

/// A Short (Truncated) BSR and its one-octet subheader.
pub const SHORT_BSR_WITH_SUBHEADER: u32 = 2;

/// A Long (Truncated) BSR naming `lcgs` LCGs, with its two-octet subheader.
pub fn long_bsr_with_subheader(lcgs: usize) -> u32 {
    2 + 1 + u32::try_from(lcgs).unwrap_or(u32::MAX)
}

/// A BSR MAC CE as the UE built it: per LCG the buffer-size index, or
/// `None` for an LCG it does not report (the Long BSR bitmap's 0 bits; a
/// Short BSR reports exactly one LCG). Fixed size, so building one does
/// not allocate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct BsrCe {
    pub format: BsrFormat,
    pub sizes: [Option<u8>; MAX_LCGS],
}

impl BsrCe {
    /// Number of LCGs it reports.
    pub fn reported(&self) -> usize {
        self.sizes.iter().flatten().count()
    }

    /// Bytes of the CE with its subheader.
    pub fn bytes(&self) -> u32 {
        self.format.bytes_with_subheader(self.reported())
    }

    /// What the gNB learns: per reported LCG the most bytes it may hold.
    pub fn decoded(&self) -> impl Iterator<Item = (LcgId, u64)> + '_ {
        let table = self.format.table();
        (0..MAX_LCGS as u8).filter_map(move |lcg| {
            self.sizes[usize::from(lcg)].map(|i| (lcg, table.upper_bound(i).unwrap_or(0)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Oracle rows of TS 38.321 Table 6.1.3.1-1 (5-bit field): index and the
    // level's upper end, at the table's edges and a few inner rows.
    #[test]
    fn short_table_rows_at_the_boundaries() {
        let t = BufferSizeTable::Short;
        assert_eq!(t.index(0), 0);
        assert_eq!(t.index(1), 1);
        assert_eq!(t.index(10), 1);
        assert_eq!(t.index(11), 2);
        assert_eq!(t.index(14), 2);
        assert_eq!(t.index(15), 3);
        assert_eq!(t.index(1038), 15);
        assert_eq!(t.index(1039), 16);
        assert_eq!(t.index(1446), 16);
        assert_eq!(t.index(107_669), 29);
        assert_eq!(t.index(107_670), 30);
        assert_eq!(t.index(150_000), 30);
        assert_eq!(t.index(150_001), 31);
        assert_eq!(t.index(u64::MAX), 31);
    }

    // Oracle rows of TS 38.321 Table 6.1.3.1-2 (8-bit field).
    #[test]
    fn long_table_rows_at_the_boundaries() {
        let t = BufferSizeTable::Long;
        assert_eq!(t.index(0), 0);
        assert_eq!(t.index(10), 1);
        assert_eq!(t.index(11), 2);
        assert_eq!(t.index(20), 11);
        assert_eq!(t.index(21), 12);
        assert_eq!(t.index(22), 12);
        assert_eq!(t.index(1500), 80);
        assert_eq!(t.index(1532), 80);
        assert_eq!(t.index(1533), 81);
        assert_eq!(t.index(150_000), 153);
        assert_eq!(t.index(5_000_000), 209);
        assert_eq!(t.index(76_380_420), 253);
        assert_eq!(t.index(81_338_368), 253);
        assert_eq!(t.index(81_338_369), 254);
    }

    #[test]
    fn the_gnb_reads_an_index_as_the_top_of_its_level() {
        assert_eq!(BufferSizeTable::Short.upper_bound(0), Some(0));
        assert_eq!(BufferSizeTable::Short.upper_bound(1), Some(10));
        assert_eq!(BufferSizeTable::Short.upper_bound(30), Some(150_000));
        assert_eq!(BufferSizeTable::Short.upper_bound(31), Some(150_000));
        assert_eq!(BufferSizeTable::Short.upper_bound(32), None);
        assert_eq!(BufferSizeTable::Long.upper_bound(253), Some(81_338_368));
        assert_eq!(BufferSizeTable::Long.upper_bound(254), Some(81_338_368));
        assert_eq!(BufferSizeTable::Long.upper_bound(255), None);
    }

    #[test]
    fn the_tables_are_strictly_increasing_and_the_long_one_is_finer() {
        for levels in [&SHORT_LEVELS[..], &LONG_LEVELS[..]] {
            assert!(levels.windows(2).all(|w| w[0] < w[1]));
        }
        // The two tables share their ends (10 and the short table's top,
        // which lies inside the long table's level 153: 141789 < 150000 <= 150992).
        assert_eq!(SHORT_LEVELS[0], LONG_LEVELS[0]);
        assert_eq!(BufferSizeTable::Long.index(150_000), 153);
    }

    #[test]
    fn ce_sizes_follow_the_subheader_formats() {
        assert_eq!(BsrFormat::Short.bytes_with_subheader(1), 2);
        assert_eq!(BsrFormat::ShortTruncated.bytes_with_subheader(1), 2);
        // Bitmap + 3 buffer sizes + 2-octet subheader.
        assert_eq!(BsrFormat::Long.bytes_with_subheader(3), 6);
        assert_eq!(BsrFormat::LongTruncated.bytes_with_subheader(0), 3);
    }

    proptest::proptest! {
        // Quantisation never under-reports: the level an index names holds
        // the buffer (up to the open-ended top level), and the level below
        // does not.
        #[test]
        fn an_index_covers_its_buffer(bytes in 0u64..100_000_000) {
            for t in [BufferSizeTable::Short, BufferSizeTable::Long] {
                let i = t.index(bytes);
                let top = t.upper_bound(i).unwrap();
                let open_top = usize::from(i) == t.levels().len() + 1;
                proptest::prop_assert!(bytes <= top || open_top);
                if i > 0 {
                    proptest::prop_assert!(bytes > t.upper_bound(i - 1).unwrap() || i == 1);
                }
            }
        }
    }
}
