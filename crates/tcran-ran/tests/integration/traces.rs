//! Trace readers against the statistics their READMEs state, on the copies in
//! `data/traces` (the UCC CSVs too, kept there for these tests).

use crate::common;

use common::{oracle, read, repo_traces};
use tcran_core::{Duration, Instant};
use tcran_ran::channel::{
    AnyChannel, Channel, ChannelSample, MahimahiTrace, ThesisTrace, TraceFormat, UccTrace,
};
use tcran_ran::phy::mcs::CqiTable;

fn stats(v: &[u32]) -> (f64, u32, u32) {
    let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
    (mean, *v.iter().min().unwrap(), *v.iter().max().unwrap())
}

#[test]
fn thesis_traces_first_200_samples_match_the_readme() {
    for (file, n, mean, min, max) in [
        ("packets_pedestrian.txt", 1571, 4.01, 1, 9),
        ("packets_train.txt", 4209, 4.65, 1, 15),
    ] {
        let p = repo_traces(&format!("dynamic-buffer-tmc/{file}"));
        let text = read(&p);
        assert_eq!(TraceFormat::detect(&text), Some(TraceFormat::ThesisPackets));
        let t = ThesisTrace::parse(file, &text).unwrap();
        assert_eq!(t.samples().len(), n);
        let (m, lo, hi) = stats(&t.samples()[..200]);
        assert!((m - mean).abs() < 0.005, "{file}: mean {m}");
        assert_eq!((lo, hi), (min, max), "{file}");
        // The same through the channel: 200 s of 10-ms ticks.
        let bytes: u64 = t.samples()[..200]
            .iter()
            .map(|&s| u64::from(s) * 100 * 1460)
            .sum();
        assert_eq!(
            t.bytes_between(Instant::ZERO, Instant::from_millis(200_000)),
            bytes
        );
        let mbps = bytes as f64 * 8.0 / 200.0 / 1e6;
        // README: "≈4.7 Mbit/s" (pedestrian) and "≈5.4 Mbit/s" (train).
        assert!((mbps - mean * 1460.0 * 8.0 / 0.01 / 1e6).abs() < 0.01);
        let i = t.info();
        assert_eq!(i.duration, Duration::from_secs(n as u64));
        assert!(i.min_mbps <= i.mean_mbps && i.mean_mbps <= i.max_mbps);
        let from_path = ThesisTrace::from_path(&p).unwrap();
        assert_eq!(from_path.samples(), t.samples());
        assert_eq!(from_path.name(), p.display().to_string());
    }
}

#[test]
fn mahimahi_mean_rates_match_the_readme() {
    for (file, mean) in [
        ("Verizon-LTE-short.down", 5.03),
        ("TMobile-LTE-short.down", 16.70),
    ] {
        let p = repo_traces(&format!("mahimahi/{file}"));
        let t = MahimahiTrace::from_path(&p).unwrap();
        let text = read(&p);
        assert_eq!(TraceFormat::detect(&text), Some(TraceFormat::Mahimahi));
        let i = t.info();
        assert!(
            (i.duration.as_secs_f64() - 140.0).abs() < 0.02,
            "{file}: {i}"
        );
        assert!((i.mean_mbps - mean).abs() < 0.005, "{file}: {i}");
        assert!(
            i.min_mbps <= i.mean_mbps && i.mean_mbps <= i.max_mbps,
            "{i}"
        );
        // Slot-by-slot sampling over 3 passes conserves every opportunity.
        let mut c = AnyChannel::Mahimahi(t.clone());
        let slot = Duration::from_micros(500);
        let mut sum = 0u64;
        let mut now = Instant::ZERO;
        let end = Instant::ZERO + Duration::from_nanos(3 * t.period().as_nanos());
        while now < end {
            match c.sample(now, slot) {
                ChannelSample::Bytes(b) => sum += b,
                other => panic!("{other:?}"),
            }
            now += slot;
        }
        assert_eq!(sum, t.bytes_between(Instant::ZERO, end));
        let expect = 3 * t.opportunities() as u64 * 1500;
        // Only the opportunities at exactly t = 3·period fall outside.
        assert!(expect - sum < 100 * 1500, "{sum} vs {expect}");
    }
}

#[test]
fn wrong_formats_are_detected_on_the_real_files() {
    let thesis = read(&repo_traces("dynamic-buffer-tmc/packets_pedestrian.txt"));
    let e = MahimahiTrace::parse("packets_pedestrian.txt", &thesis).unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(e.problem.contains("thesis"), "{e}");

    let mm = read(&repo_traces("mahimahi/Verizon-LTE-short.down"));
    let e = ThesisTrace::parse("Verizon-LTE-short.down", &mm).unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(e.problem.contains("mahimahi"), "{e}");
    let e = UccTrace::parse("Verizon-LTE-short.down", &mm).unwrap_err();
    assert_eq!(e.line, Some(1));

    let ucc = read(&oracle(
        "traces/uccmisl-5Gdataset/Download/Static/B_2020.02.14_13.21.26.csv",
    ));
    assert_eq!(TraceFormat::detect(&ucc), Some(TraceFormat::Ucc5g));
    let e = MahimahiTrace::parse("B.csv", &ucc).unwrap_err();
    assert_eq!(e.line, Some(1));
    assert!(e.to_string().starts_with("B.csv:1: \"Timestamp,"), "{e}");
    assert!(ThesisTrace::parse("B.csv", &ucc)
        .unwrap_err()
        .problem
        .contains("CSV"));
}

#[test]
fn malformed_line_in_a_real_trace_is_named() {
    let mut mm = read(&repo_traces("mahimahi/Verizon-LTE-short.down"));
    mm = mm.replacen("\n1\n", "\n1x\n", 1);
    let e = MahimahiTrace::parse("v.down", &mm).unwrap_err();
    assert_eq!((e.line, e.value.as_deref()), (Some(3), Some("1x")));
}

#[test]
fn ucc_dl_bitrate_means_match_the_readme() {
    for (file, rows, mean) in [
        ("Driving/B_2019.12.16_07.22.43.csv", 2617, 23.2),
        ("Driving/B_2020.01.16_09.56.56.csv", 1741, 40.0),
        ("Static/B_2019.12.16_13.40.04.csv", 2143, 50.4),
        ("Static/B_2020.02.14_13.21.26.csv", 1013, 121.0),
    ] {
        let p = oracle(&format!("traces/uccmisl-5Gdataset/Download/{file}"));
        let t = UccTrace::from_path(&p).unwrap();
        assert_eq!(t.rows(), rows);
        assert_eq!(t.missing_cqi(), 0);
        let r = t.dl_rate_series().unwrap();
        let i = r.info();
        assert!((i.mean_mbps - mean).abs() / mean < 0.005, "{file}: {i}");
        assert_eq!(i.duration, Duration::from_secs(rows as u64));
        let mut c = t.cqi_series(CqiTable::Table1).unwrap();
        // First row of every file has a CQI (12, 11, 15, 12 respectively).
        assert!(matches!(
            c.sample(Instant::ZERO, Duration::ZERO),
            ChannelSample::Mcs(_)
        ));
    }
}
