//! The process's memory: VmRSS sampled every second, and whether it grows without bound.
//!
//! The first quarter of the run is warm-up (the allocator's arenas, the SDK's connection
//! pool, the cache filling up to its bound). Over the rest, a least-squares line through
//! the samples gives the slope; the verdict is "unbounded" only when both
//! - the growth the slope projects over the measured window, and
//! - the median of the last quarter of the run less the median of the second quarter
//!   (robust to a single spike, which moves a slope over a short run)
//!
//! exceed [`ALLOWED_GROWTH_KB`] plus a tenth of the post-warm-up RSS (about 7 MB for the
//! 33 MB of a debug run). Requiring both keeps one spike (a burst of large chunked values,
//! the allocator returning memory late) from failing a run: it moves the slope but not
//! the medians. In a 60 s run the window between the two medians is about 30 s, so a
//! leak of some 20 MB a minute fails, and the noise measured (a few hundred KB) never
//! does; over 30 minutes the same bound is about 0.5 MB a minute, so a leak of one
//! kilobyte per operation at a hundred operations a second (6 MB a minute) fails
//! clearly, as would a cache, meter or registry that kept every record.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Growth allowed on top of a tenth of the baseline, in KB.
pub const ALLOWED_GROWTH_KB: f64 = 4_096.0;

/// The samples so far: seconds since the start, VmRSS in KB.
#[derive(Clone, Default)]
pub struct Samples(Arc<Mutex<Vec<(f64, f64)>>>);

/// The process's resident set size in KB (`VmRSS` of `/proc/self/status`).
pub fn vm_rss_kb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

impl Samples {
    /// Samples every second on a thread of its own until `stop` is set.
    pub fn start(&self, stop: Arc<std::sync::atomic::AtomicBool>) -> std::thread::JoinHandle<()> {
        let samples = self.clone();
        let started = Instant::now();
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                if let Some(kb) = vm_rss_kb() {
                    samples.lock().push((started.elapsed().as_secs_f64(), kb));
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(f64, f64)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn verdict(&self) -> Verdict {
        verdict(&self.lock())
    }
}

/// The figures of a run's memory.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    pub samples: usize,
    pub start_kb: f64,
    pub end_kb: f64,
    pub peak_kb: f64,
    /// After warm-up.
    pub baseline_kb: f64,
    pub slope_kb_per_min: f64,
    /// The slope's projection over the measured window.
    pub projected_kb: f64,
    /// Median of the last quarter less the median of the second.
    pub median_growth_kb: f64,
    pub allowed_kb: f64,
    pub unbounded: bool,
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Least-squares slope of `points`, per second.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(x, y), p| (x + p.0 / n, y + p.1 / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(sxy, sxx), p| {
        (sxy + (p.0 - mx) * (p.1 - my), sxx + (p.0 - mx).powi(2))
    });
    if sxx == 0.0 { 0.0 } else { sxy / sxx }
}

fn verdict(samples: &[(f64, f64)]) -> Verdict {
    let n = samples.len();
    if n < 8 {
        return Verdict {
            samples: n,
            ..Verdict::default()
        };
    }
    let quarter = n / 4;
    let measured = &samples[quarter..];
    let per_second = slope(measured);
    let window = measured[measured.len() - 1].0 - measured[0].0;
    let rss: Vec<f64> = samples.iter().map(|s| s.1).collect();
    let baseline = median(&rss[quarter..2 * quarter]);
    let median_growth = median(&rss[n - quarter..]) - baseline;
    let projected = per_second * window;
    let allowed = ALLOWED_GROWTH_KB + baseline / 10.0;
    Verdict {
        samples: n,
        start_kb: rss[0],
        end_kb: rss[n - 1],
        peak_kb: rss.iter().copied().fold(0.0, f64::max),
        baseline_kb: baseline,
        slope_kb_per_min: per_second * 60.0,
        projected_kb: projected,
        median_growth_kb: median_growth,
        allowed_kb: allowed,
        unbounded: projected > allowed && median_growth > allowed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_run_is_bounded_and_a_steady_leak_is_not() {
        let flat: Vec<(f64, f64)> = (0..60)
            .map(|s| (s as f64, 50_000.0 + (s % 3) as f64 * 500.0))
            .collect();
        assert!(!verdict(&flat).unbounded);
        let leak: Vec<(f64, f64)> = (0..60)
            .map(|s| (s as f64, 50_000.0 + s as f64 * 1_000.0))
            .collect();
        let v = verdict(&leak);
        assert!(v.unbounded, "{v:?}");
        assert!((v.slope_kb_per_min - 60_000.0).abs() < 1.0);
        // 20 MB a minute over a minute: caught.
        let slow: Vec<(f64, f64)> = (0..60)
            .map(|s| (s as f64, 33_000.0 + s as f64 * 333.0))
            .collect();
        assert!(verdict(&slow).unbounded, "{:?}", verdict(&slow));
    }

    #[test]
    fn one_spike_at_the_end_is_not_a_leak() {
        let mut spiky: Vec<(f64, f64)> = (0..60).map(|s| (s as f64, 33_000.0)).collect();
        for sample in spiky.iter_mut().skip(57) {
            sample.1 = 80_000.0;
        }
        let v = verdict(&spiky);
        assert!(v.projected_kb > v.allowed_kb && !v.unbounded, "{v:?}");
    }
}
