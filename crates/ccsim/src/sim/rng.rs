//! Seeded, dependency-free RNG. Each purpose gets its own stream derived from (seed, stream
//! id), so adding draws in one place never shifts another: xoshiro256** (`Rng`) for the
//! workload drawn at build time, and one SplitMix64 stream per entity (`Stream`: a port's
//! marking, a flow's sender or receiver, a host) for what the run draws, so a draw depends on
//! the entity's own history alone, never on which partition or thread ran it.

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
        unit(self.next_u64())
    }

    /// Uniform integer in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        scaled(self.next_u64(), n)
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

/// 64 random bits as a uniform in [0, 1).
#[inline]
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// 64 random bits as a uniform integer in [0, n).
#[inline]
fn scaled(bits: u64, n: u64) -> u64 {
    ((bits as u128 * n as u128) >> 64) as u64
}

/// The random stream of one entity (SplitMix64: 8 bytes, so every port and flow can own one).
/// Seeded from (seed, stream, entity) alone. Zero bytes are a valid state (a partition's
/// entries of the ports it does not own, never drawn from).
#[derive(Clone, Copy, Debug, bytemuck::Zeroable)]
pub struct Stream(u64);

impl Stream {
    /// Entity `entity`'s stream `stream` under `seed`.
    pub fn new(seed: u64, stream: u64, entity: u64) -> Self {
        Stream(mix64(
            seed ^ mix64((stream << 48) ^ entity ^ 0x2545_F491_4F6C_DD1D),
        ))
    }

    /// Streams for entities 0..n.
    pub fn each(seed: u64, stream: u64, n: usize) -> Vec<Stream> {
        (0..n as u64)
            .map(|e| Stream::new(seed, stream, e))
            .collect()
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        unit(self.next_u64())
    }

    /// Uniform integer in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        scaled(self.next_u64(), n)
    }
}

/// Named RNG streams, so each consumer is independent of the others.
pub mod stream {
    pub const WORKLOAD: u64 = 1;
    /// A port's RED marking, trimming coin and switch hooks (`cc::Sw::rng`), one per port.
    pub const MARKING: u64 = 2;
    pub const ECMP: u64 = 3;
    /// A flow's sender hooks (`cc::Tx::rng`), one stream per flow.
    pub const SENDER: u64 = 4;
    /// A flow's receiver hooks (`cc::Rx::rng`), one stream per flow.
    pub const RECEIVER: u64 = 5;
    /// A host's receiver hooks (`cc::HostCtx::rng`), one stream per host.
    pub const HOST: u64 = 6;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entitys_stream_depends_on_seed_purpose_and_entity_alone() {
        let draws = |mut s: Stream| (0..1000).map(|_| s.uniform()).collect::<Vec<f64>>();
        let a = draws(Stream::new(1, stream::MARKING, 7));
        // Reproducible, and apart from any other entity's, purpose's or seed's.
        assert_eq!(a, draws(Stream::new(1, stream::MARKING, 7)));
        for other in [
            Stream::new(1, stream::MARKING, 8),
            Stream::new(1, stream::SENDER, 7),
            Stream::new(2, stream::MARKING, 7),
        ] {
            assert!(draws(other).iter().zip(&a).all(|(x, y)| x != y));
        }
        // Uniform on [0, 1): mean 1/2, variance 1/12 within a few standard errors.
        let n = a.len() as f64;
        let mean = a.iter().sum::<f64>() / n;
        let var = a.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        assert!(a.iter().all(|x| (0.0..1.0).contains(x)));
        assert!(
            (mean - 0.5).abs() < 4.0 * (1.0 / 12.0 / n).sqrt(),
            "mean {mean}"
        );
        assert!((var - 1.0 / 12.0).abs() < 0.01, "variance {var}");
        let mut s = Stream::new(3, stream::HOST, 0);
        assert!((0..1000).all(|_| s.below(5) < 5));
    }
}
