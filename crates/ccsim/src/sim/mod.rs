//! Simulation core: integer-picosecond time and unit parsing, the deterministic event queue,
//! seeded RNG streams and the binaries' allocator. Nothing here knows about packets or networks.

pub mod alloc;
pub mod interrupt;
pub mod queue;
pub mod rng;
pub mod units;

pub use queue::{Event, EventQueue, TimerOwner};
pub use rng::Rng;
pub use units::*;

/// Ask the CPU to start loading the cache line at `p` (a hint: no effect on results; any
/// address is allowed, nothing is read).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no architectural effect, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `prefetch` the first and the last cache line of `*p` (all of it, if at most 64 bytes).
#[inline(always)]
pub fn prefetch_value<T>(p: *const T) {
    prefetch(p);
    prefetch(p.cast::<u8>().wrapping_add(std::mem::size_of::<T>() - 1));
}
