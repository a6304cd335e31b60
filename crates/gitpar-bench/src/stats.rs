//! Statistics of benchmark times: robust summaries, paired differences and their uncertainty.
//!
//! Timing noise is skewed (a run is only ever slowed down by interference, never sped up), so the centre is
//! the median, outliers are found with the median absolute deviation, and the uncertainty of the time saved
//! is a bootstrap interval of the median *paired* difference: round i of one contender against round i of
//! the baseline, which cancels the drift that both saw in that round.
//!
//! Every function takes plain `f64` samples (seconds, by convention of [`crate::run`]) and ignores the order
//! of its input unless it says otherwise. Empty input gives `None` rather than a panic or a NaN.

use serde::{Deserialize, Serialize};

use crate::rng::SplitMix64;

/// The modified Z-score above which a sample is an outlier, as recommended by Iglewicz and Hoaglin (1993).
pub const OUTLIER_Z: f64 = 3.5;

/// The constant that makes the modified Z-score comparable to a standard score for normal data: the 0.75
/// quantile of the standard normal distribution, since MAD ≈ 0.6745 σ.
pub const MAD_NORMAL_CONSISTENCY: f64 = 0.6745;

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// Quantile `q` (in `[0, 1]`) of a sorted, non-empty slice, interpolating linearly between the two closest
/// ranks (Hyndman and Fan's type 7, the default of R and NumPy, so numbers can be checked with either).
fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    let h = (v.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// Returns the median of `xs` (the mean of the two middle values for an even count), or `None` if empty.
///
/// The median is the centre we report because a few disturbed runs cannot move it far.
pub fn median(xs: &[f64]) -> Option<f64> {
    quantile(xs, 0.5)
}

/// Returns quantile `q` (clamped to `[0, 1]`) of `xs` with linear interpolation between closest ranks
/// (type 7, as R's `quantile` and NumPy's `percentile` by default), or `None` if `xs` is empty.
///
/// It is what the bootstrap uses for its percentile interval, and what summaries use for quartiles.
pub fn quantile(xs: &[f64], q: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(quantile_sorted(&sorted(xs), q))
}

/// Returns the arithmetic mean of `xs`, or `None` if empty.
///
/// Reported beside the median so that a reader can see how skewed the runs were.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Returns the sample standard deviation of `xs` (with Bessel's correction, n − 1), or `None` for fewer
/// than two samples, where it is undefined.
pub fn stddev(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// The two samples given to [`paired_differences`] do not have the same length, so they cannot be paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot pair {a} samples with {b}: a paired difference needs one sample of each per round")]
pub struct LengthMismatch {
    /// Length of the first sample.
    pub a: usize,
    /// Length of the second sample.
    pub b: usize,
}

/// Returns `a[i] - b[i]` for every round `i`.
///
/// With `a` the baseline and `b` a contender, a positive difference is time saved by the contender. Pairing
/// by round is the point of interleaving: both ran within seconds of each other, under the same load.
pub fn paired_differences(a: &[f64], b: &[f64]) -> Result<Vec<f64>, LengthMismatch> {
    if a.len() != b.len() {
        return Err(LengthMismatch {
            a: a.len(),
            b: b.len(),
        });
    }
    Ok(a.iter().zip(b).map(|(x, y)| x - y).collect())
}

/// Returns the median absolute deviation from the median, unscaled, or `None` if `xs` is empty.
///
/// It is the spread that outliers cannot inflate, which is why outlier detection is built on it.
pub fn mad(xs: &[f64]) -> Option<f64> {
    let m = median(xs)?;
    let deviations: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median(&deviations)
}

/// Returns the modified Z-score `0.6745 (x - median) / MAD` of every sample, in input order.
///
/// When more than half of the samples are equal the MAD is 0; then a sample equal to the median scores 0
/// and any other scores ±infinity, because it is infinitely far out compared with a spread of nothing.
pub fn modified_z_scores(xs: &[f64]) -> Vec<f64> {
    let (Some(m), Some(d)) = (median(xs), mad(xs)) else {
        return Vec::new();
    };
    xs.iter()
        .map(|&x| {
            let dev = x - m;
            if d > 0.0 {
                MAD_NORMAL_CONSISTENCY * dev / d
            } else if dev == 0.0 {
                0.0
            } else {
                f64::INFINITY.copysign(dev)
            }
        })
        .collect()
}

/// Returns the indices of the samples whose modified Z-score exceeds [`OUTLIER_Z`] in absolute value.
///
/// Outliers are not removed from any statistic (the median does not need it); they are counted so that a
/// warning can tell the user that something else was running.
pub fn outliers(xs: &[f64]) -> Vec<usize> {
    modified_z_scores(xs)
        .iter()
        .enumerate()
        .filter(|(_, z)| z.abs() > OUTLIER_Z)
        .map(|(i, _)| i)
        .collect()
}

/// A confidence interval `[lo, hi]`, in the unit of the samples it was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

impl Interval {
    /// Returns `hi - lo`, the uncertainty that warnings compare with the time being measured.
    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }

    /// Returns true if and only if `x` lies within the interval, bounds included; a difference interval that
    /// contains 0 means the two commands were not told apart.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// How a bootstrap interval is computed. The defaults are those the project reports with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bootstrap {
    /// Number of resamples: 10,000 makes the bounds stable to well under a run-to-run difference.
    pub resamples: usize,
    /// Seed of the resampling, so that the same times always give the same interval.
    pub seed: u64,
    /// Confidence level, 0.95 for a 95% interval.
    pub confidence: f64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Self {
            resamples: 10_000,
            seed: 0x6769_7470_6172, // "gitpar"
            confidence: 0.95,
        }
    }
}

impl Bootstrap {
    /// Returns the percentile bootstrap interval of the median of `xs`, or `None` if `xs` is empty or
    /// `resamples` is 0.
    ///
    /// Each resample draws `xs.len()` samples with replacement and takes their median; the interval is the
    /// `(1 - confidence) / 2` and `(1 + confidence) / 2` quantiles of those medians. It makes no assumption
    /// about the shape of the timing distribution, which is rarely normal, and applied to paired
    /// differences it gives the "saved 40 ms [27, 66]" of the reports.
    pub fn median_interval(&self, xs: &[f64]) -> Option<Interval> {
        if xs.is_empty() || self.resamples == 0 {
            return None;
        }
        let mut rng = SplitMix64::new(self.seed);
        let n = xs.len();
        let mut sample = vec![0.0; n];
        let mut medians = Vec::with_capacity(self.resamples);
        for _ in 0..self.resamples {
            for slot in sample.iter_mut() {
                *slot = xs[rng.below(n)];
            }
            sample.sort_unstable_by(f64::total_cmp);
            medians.push(quantile_sorted(&sample, 0.5));
        }
        medians.sort_unstable_by(f64::total_cmp);
        let tail = (1.0 - self.confidence.clamp(0.0, 1.0)) / 2.0;
        Some(Interval {
            lo: quantile_sorted(&medians, tail),
            hi: quantile_sorted(&medians, 1.0 - tail),
        })
    }
}

/// A summary of one contender's times, computed once so that every export shows the same numbers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Median, the number reported.
    pub median: f64,
    /// Arithmetic mean, to show skew against the median.
    pub mean: f64,
    /// Sample standard deviation; 0 for a single sample.
    pub stddev: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// First quartile (type 7).
    pub q1: f64,
    /// Third quartile (type 7).
    pub q3: f64,
}

impl Summary {
    /// Returns the summary of `xs`, or `None` if it is empty.
    pub fn of(xs: &[f64]) -> Option<Self> {
        let v = sorted(xs);
        let (&min, &max) = (v.first()?, v.last()?);
        Some(Self {
            n: v.len(),
            median: quantile_sorted(&v, 0.5),
            mean: mean(&v)?,
            stddev: stddev(&v).unwrap_or(0.0),
            min,
            max,
            q1: quantile_sorted(&v, 0.25),
            q3: quantile_sorted(&v, 0.75),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn quantiles_interpolate_between_ranks() {
        // n = 5: h = 4q. q = 0.25 -> h = 1 -> 2; q = 0.9 -> h = 3.6 -> 4 + 0.6 * 1 = 4.6.
        let xs = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(quantile(&xs, 0.25), Some(2.0));
        assert!(close(quantile(&xs, 0.9).unwrap(), 4.6));
        assert_eq!(quantile(&xs, 0.0), Some(1.0));
        assert_eq!(quantile(&xs, 1.0), Some(5.0));
        // n = 4: q = 0.25 -> h = 0.75 -> 1 + 0.75 * (2 - 1) = 1.75.
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.25), Some(1.75));
    }

    #[test]
    fn mean_and_sample_stddev() {
        // Sum 40 over 8 -> mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32; 32 / 7 -> sqrt.
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), Some(5.0));
        assert!(close(stddev(&xs).unwrap(), (32.0f64 / 7.0).sqrt()));
        assert_eq!(stddev(&[1.0]), None);
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn paired_differences_subtract_round_by_round() {
        let a = [0.150, 0.140, 0.160];
        let b = [0.100, 0.120, 0.110];
        let d = paired_differences(&a, &b).unwrap();
        assert!(close(d[0], 0.05) && close(d[1], 0.02) && close(d[2], 0.05));
        assert_eq!(
            paired_differences(&a, &b[..2]),
            Err(LengthMismatch { a: 3, b: 2 })
        );
    }

    #[test]
    fn mad_and_modified_z_scores() {
        // Median 2; |x - 2| = 1 1 0 0 2 4 7 -> sorted 0 0 1 1 2 4 7 -> MAD 1.
        let xs = [1.0, 1.0, 2.0, 2.0, 4.0, 6.0, 9.0];
        assert_eq!(mad(&xs), Some(1.0));
        let z = modified_z_scores(&xs);
        assert!(close(z[0], -0.6745));
        assert!(close(z[5], 0.6745 * 4.0)); // 2.698: not an outlier
        assert!(close(z[6], 0.6745 * 7.0)); // 4.7215 > 3.5: an outlier
        assert_eq!(outliers(&xs), vec![6]);
    }

    #[test]
    fn zero_mad_makes_any_other_value_an_outlier() {
        let xs = [1.0, 1.0, 1.0, 1.5];
        assert_eq!(mad(&xs), Some(0.0));
        assert_eq!(modified_z_scores(&xs), vec![0.0, 0.0, 0.0, f64::INFINITY]);
        assert_eq!(outliers(&xs), vec![3]);
        assert!(outliers(&[2.0, 2.0]).is_empty());
    }

    #[test]
    fn bootstrap_of_constant_differences_is_a_point() {
        let b = Bootstrap::default();
        assert_eq!(
            b.median_interval(&[0.04; 13]),
            Some(Interval { lo: 0.04, hi: 0.04 })
        );
        assert_eq!(b.median_interval(&[]), None);
    }

    #[test]
    fn bootstrap_of_two_values_spans_both() {
        // Resample medians of [1, 3] are 1 (p = 1/4), 2 (p = 1/2) and 3 (p = 1/4): with 10,000 resamples far
        // more than 2.5% of them are 1 and 3, so the 95% percentile interval is exactly [1, 3].
        let i = Bootstrap::default().median_interval(&[1.0, 3.0]).unwrap();
        assert_eq!(i, Interval { lo: 1.0, hi: 3.0 });
    }

    #[test]
    fn bootstrap_is_reproducible_and_seeded() {
        let xs = [
            0.01, 0.03, 0.02, 0.05, -0.01, 0.04, 0.02, 0.03, 0.00, 0.06, 0.02, 0.01,
        ];
        let b = Bootstrap::default();
        let i = b.median_interval(&xs).unwrap();
        assert_eq!(b.median_interval(&xs), Some(i));
        let m = median(&xs).unwrap();
        assert!(
            i.lo <= m && m <= i.hi,
            "{i:?} should contain the median {m}"
        );
        assert!(i.lo >= -0.01 && i.hi <= 0.06);
    }

    #[test]
    fn summary_of_samples() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0, 5.0]).unwrap();
        assert_eq!(
            (s.n, s.median, s.mean, s.min, s.max, s.q1, s.q3),
            (5, 3.0, 3.0, 1.0, 5.0, 2.0, 4.0)
        );
        assert!(close(s.stddev, 2.5f64.sqrt()));
        assert_eq!(Summary::of(&[2.0]).unwrap().stddev, 0.0);
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn interval_width_and_contains() {
        let i = Interval {
            lo: -0.036,
            hi: 0.007,
        };
        assert!(close(i.width(), 0.043));
        assert!(i.contains(0.0) && !i.contains(0.01));
    }
}
