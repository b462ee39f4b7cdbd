//! Seeded, dependency-free RNG (SplitMix64 seeding xoshiro256**). Each purpose gets its own
//! stream derived from (seed, stream id), so adding draws in one place never shifts another.

/// A xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// SplitMix64 step: also used as a stateless 64-bit mixer (ECMP hashing).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A stream for `stream` under `seed`.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut x = mix64(seed ^ mix64(stream.wrapping_add(0x5851_F42D_4C95_7F2D)));
        let mut s = [0u64; 4];
        for v in s.iter_mut() {
            x = mix64(x);
            *v = x;
        }
        Rng { s }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

/// Named RNG streams, so each consumer is independent of the others.
pub mod stream {
    pub const WORKLOAD: u64 = 1;
    pub const MARKING: u64 = 2;
    pub const ECMP: u64 = 3;
    /// Sender, receiver and host hooks of a scheme (`cc::Tx::rng`).
    pub const SCHEME: u64 = 4;
    /// Stream `stream` of partition `part` of a parallel run (each draws its own).
    pub fn of_partition(stream: u64, part: usize) -> u64 {
        stream + 16 * (part as u64 + 1)
    }
}
