//! Web browsing (thesis-brunello-l4s-5g.txt §4.4): a main object, then a
//! number of embedded objects, then a reading time, repeated.
//!
//! Parameters (defaults) as the thesis states them: main object mean 10 710 B
//! and spread 25 032 B; embedded objects mean 7 758 B, standard deviation
//! 126 168 B; number of embedded objects Pareto(location 15, shape 3.1);
//! reading time exponential with mean 5 s, at most 7 s.
//!
//! Deviations, deliberately:
//! - The thesis says "normal" for the object sizes, but a normal with
//!   standard deviation 126 168 B around a 7 758 B mean is negative most of
//!   the time. These are the NGMN/3GPP HTTP model numbers, where the sizes
//!   are *truncated log-normal* with that mean and deviation; that is what we
//!   draw (main object within [100 B, 2 MB], embedded within [50 B, 2 MB],
//!   as NGMN), and we read the thesis' "variance of 25032 bytes" as the
//!   standard deviation.
//! - The Pareto count is floored to an integer and capped at `max_embedded`
//!   (default 53, the NGMN cap) so the mean stays finite in practice.
//! - Transport: one persistent TCP connection per user (HTTP/2 multiplexes
//!   the "parallel" embedded objects on one connection anyway), served by a
//!   [`DownloadServer`](super::downloads::DownloadServer) with
//!   [`Demand::Pages`](super::downloads::Demand::Pages): the page is
//!   written to the server's socket in one go (main + embedded), the request
//!   uplink is not simulated. The server learns the page is complete when the
//!   last byte is ACKed, then waits the reading time and sends the next page,
//!   so the request's uplink delay is stood in for by the ACK's.

use crate::dist::{exponential, lognormal_mean_sd, pareto};
use tcran_core::rng::RngStream;
use tcran_core::Duration;

/// Page-size and reading-time distribution parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct WebPageModel {
    pub main_mean: f64,
    pub main_sd: f64,
    pub main_min: f64,
    pub main_max: f64,
    pub embedded_mean: f64,
    pub embedded_sd: f64,
    pub embedded_min: f64,
    pub embedded_max: f64,
    pub embedded_count_location: f64,
    pub embedded_count_shape: f64,
    pub max_embedded: u32,
    pub reading_mean: Duration,
    pub reading_max: Duration,
}

impl Default for WebPageModel {
    fn default() -> Self {
        WebPageModel {
            main_mean: 10_710.0,
            main_sd: 25_032.0,
            main_min: 100.0,
            main_max: 2_000_000.0,
            embedded_mean: 7_758.0,
            embedded_sd: 126_168.0,
            embedded_min: 50.0,
            embedded_max: 2_000_000.0,
            embedded_count_location: 15.0,
            embedded_count_shape: 3.1,
            max_embedded: 53,
            reading_mean: Duration::from_secs(5),
            reading_max: Duration::from_secs(7),
        }
    }
}

/// One page as drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSpec {
    pub main_bytes: u64,
    pub embedded: u32,
    pub total_bytes: u64,
}

fn truncated_lognormal(rng: &mut RngStream, mean: f64, sd: f64, lo: f64, hi: f64) -> u64 {
    for _ in 0..1000 {
        let x = lognormal_mean_sd(rng, mean, sd);
        if (lo..=hi).contains(&x) {
            return x.round() as u64;
        }
    }
    mean.round() as u64
}

impl WebPageModel {
    pub fn draw_page(&self, rng: &mut RngStream) -> PageSpec {
        let main_bytes = truncated_lognormal(
            rng,
            self.main_mean,
            self.main_sd,
            self.main_min,
            self.main_max,
        );
        let embedded = (pareto(rng, self.embedded_count_location, self.embedded_count_shape).floor()
            as u64)
            .min(self.max_embedded as u64) as u32;
        let mut total_bytes = main_bytes;
        for _ in 0..embedded {
            total_bytes += truncated_lognormal(
                rng,
                self.embedded_mean,
                self.embedded_sd,
                self.embedded_min,
                self.embedded_max,
            );
        }
        PageSpec {
            main_bytes,
            embedded,
            total_bytes,
        }
    }
    /// Exponential reading time, capped at `reading_max`.
    pub fn draw_reading_time(&self, rng: &mut RngStream) -> Duration {
        let s = exponential(rng, self.reading_mean.as_secs_f64());
        Duration::from_secs_f64(s).min(self.reading_max)
    }
}
