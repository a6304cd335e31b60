//! A small seeded PRNG, so that synthetic repositories and bootstrap intervals are reproducible from a seed
//! without depending on `rand`, whose streams may change between versions (and with them our commit ids).

/// SplitMix64 (Steele, Lea, Flood 2014): one 64-bit word of state, good enough statistically for layout,
/// content and resampling, and trivially stable across platforms and releases.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// Derives an independent stream from a seed and a label, so that e.g. each branch of a synthetic
    /// repository depends only on (seed, branch) and not on the order in which branches are generated.
    pub(crate) fn derive(seed: u64, label: u64) -> Self {
        let mut mixer = Self::new(seed ^ label.wrapping_mul(0xA076_1D64_78BD_642F));
        Self::new(mixer.next_u64())
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..bound` (`bound > 0`), by Lemire's multiply-shift; the tiny bias for bounds
    /// far below 2^64 does not matter here.
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        debug_assert!(bound > 0);
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    /// A uniform float in `[0, 1)` with 53 random bits.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal deviate (Box-Muller; one of the pair is thrown away for simplicity).
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // in (0, 1], so ln() is finite
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // First outputs of SplitMix64 seeded with 0, as published with the reference implementation.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = SplitMix64::new(7);
        for bound in 1..50 {
            for _ in 0..100 {
                assert!(rng.below(bound) < bound);
            }
        }
    }
}
