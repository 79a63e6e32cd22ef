//! The embedded tables, read through the public API, equal their CSVs row
//! by row (which checks our parser). That the CSVs are unmodified copies of
//! the project's reference collection is `oracle_copies.rs`.

use crate::common;

use common::{csv_rows, oracle, read};
use tcran_ran::phy::bandwidth::{lte_n_rb, max_n_rb, FrequencyRange};
use tcran_ran::phy::mcs::{lte_cqi_to_mcs_oai, lte_mcs, CqiTable, McsTable};
use tcran_ran::phy::numerology::Numerology;
use tcran_ran::phy::tbs::lte_tbs;

fn opt<T: std::str::FromStr>(s: &str) -> Option<T> {
    (!s.is_empty()).then(|| s.parse().ok().unwrap())
}

#[test]
fn nr_mcs_tables_row_by_row() {
    let files = [
        (McsTable::Qam64, "nr_mcs_table1_64qam_38214_t5.1.3.1-1.csv"),
        (
            McsTable::Qam256,
            "nr_mcs_table2_256qam_38214_t5.1.3.1-2.csv",
        ),
        (
            McsTable::Qam64LowSe,
            "nr_mcs_table3_64qam_lowse_38214_t5.1.3.1-3.csv",
        ),
    ];
    for (t, f) in files {
        let rows = csv_rows(&read(&oracle(&format!("3gpp/{f}"))));
        assert_eq!(rows.len(), 32);
        for r in rows {
            let e = t.entry(r[0].parse().unwrap()).unwrap();
            assert_eq!(e.modulation.spec_name(), r[1], "{f} {r:?}");
            assert_eq!(e.qm().to_string(), r[2]);
            assert_eq!(e.rate.map(|x| x.x1024()), opt::<f64>(&r[3]), "{f} {r:?}");
            assert_eq!(e.spectral_efficiency, opt::<f64>(&r[4]));
            assert_eq!(e.is_reserved(), r[5] == "1");
        }
    }
}

#[test]
fn nr_cqi_tables_and_mapping_row_by_row() {
    let files = [
        (CqiTable::Table1, "nr_cqi_table1_38214_t5.2.2.1-2.csv"),
        (CqiTable::Table2, "nr_cqi_table2_38214_t5.2.2.1-3.csv"),
        (CqiTable::Table3, "nr_cqi_table3_38214_t5.2.2.1-4.csv"),
    ];
    for (t, f) in files {
        let rows = csv_rows(&read(&oracle(&format!("3gpp/{f}"))));
        assert_eq!(rows.len(), 16);
        for r in rows {
            let e = t.entry(r[0].parse().unwrap()).unwrap();
            match e {
                None => assert_eq!(r[1], "out of range"),
                Some(e) => {
                    assert_eq!(e.modulation.spec_name(), r[1]);
                    assert_eq!(e.modulation.qm().to_string(), r[2]);
                    assert_eq!(e.rate.x1024(), r[3].parse::<f64>().unwrap());
                    assert_eq!(e.efficiency, r[4].parse::<f64>().unwrap());
                }
            }
        }
    }
    let rows = csv_rows(&read(&oracle("3gpp/nr_cqi_to_mcs_mappings.csv")));
    assert_eq!(rows.len(), 45);
    for r in rows {
        let t = CqiTable::from_number(r[0].parse().unwrap()).unwrap();
        let m = t.to_mcs(r[1].parse().unwrap()).unwrap().unwrap();
        assert_eq!(m.table, t.mcs_table());
        for col in &r[2..5] {
            assert_eq!(m.index.to_string(), *col, "{r:?}");
        }
    }
}

#[test]
fn n_rb_tables_row_by_row() {
    for (fr, f, scs) in [
        (
            FrequencyRange::Fr1,
            "nr_max_nrb_fr1_38101-1_t5.3.2-1.csv",
            vec![15, 30, 60],
        ),
        (
            FrequencyRange::Fr2,
            "nr_max_nrb_fr2_38101-2_t5.3.2-1.csv",
            vec![60, 120],
        ),
    ] {
        for r in csv_rows(&read(&oracle(&format!("3gpp/{f}")))) {
            let bw: u32 = r[0].parse().unwrap();
            for (c, s) in scs.iter().enumerate() {
                let got = max_n_rb(fr, bw, Numerology::from_scs_khz(*s).unwrap()).ok();
                assert_eq!(got, opt::<u16>(&r[c + 1]), "{f} {bw} MHz {s} kHz");
            }
        }
    }
    for r in csv_rows(&read(&oracle("3gpp/lte_nrb_36101_t5.6-1.csv"))) {
        let khz = (r[0].parse::<f64>().unwrap() * 1000.0).round() as u32;
        assert_eq!(lte_n_rb(khz).unwrap().to_string(), r[1]);
    }
}

#[test]
fn lte_tables_row_by_row() {
    for r in csv_rows(&read(&oracle(
        "3gpp/lte_pdsch_mcs_table_36213_t7.1.7.1-1.csv",
    ))) {
        let e = lte_mcs(r[0].parse().unwrap()).unwrap();
        assert_eq!(e.modulation.spec_name(), r[1]);
        assert_eq!(e.modulation.qm().to_string(), r[2]);
        assert_eq!(e.i_tbs, opt::<u8>(&r[3]));
        assert_eq!(e.i_tbs.is_none(), r[4] == "1");
    }
    let rows = csv_rows(&read(&oracle("3gpp/lte_tbs_table_36213_t7.1.7.2.1-1.csv")));
    assert_eq!(rows.len(), 27);
    for r in rows {
        let i: u8 = r[0].parse().unwrap();
        assert_eq!(r.len(), 111);
        for n in 1..=110u16 {
            assert_eq!(
                lte_tbs(i, n).unwrap().to_string(),
                r[usize::from(n)],
                "I_TBS {i} N_PRB {n}"
            );
        }
    }
    for r in csv_rows(&read(&oracle("3gpp/lte_cqi_to_mcs_oai.csv"))) {
        assert_eq!(
            lte_cqi_to_mcs_oai(r[0].parse().unwrap())
                .unwrap()
                .to_string(),
            r[1]
        );
    }
}

#[test]
fn numerology_rows_0_to_3() {
    for r in csv_rows(&read(&oracle("3gpp/nr_numerology_38211.csv"))) {
        let mu: u8 = r[0].parse().unwrap();
        match Numerology::new(mu) {
            Ok(n) => {
                assert_eq!(n.scs_khz().to_string(), r[1]);
                assert_eq!(n.slots_per_subframe().to_string(), r[3]);
                assert_eq!(n.slot_duration().as_micros_f64().to_string(), r[5]);
            }
            Err(_) => assert!(mu > 3),
        }
    }
}
