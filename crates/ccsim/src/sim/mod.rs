//! Simulation core, the bottom layer: integer-picosecond time, unit parsing and the serde
//! quantities (`Time`, `Rate`, `Size`), the input error type and TOML value helpers, the
//! deterministic event queue and timer epochs, seeded RNG streams and the binaries' allocator.
//! Nothing here knows about packets or networks.

pub mod alloc;
pub mod input;
pub mod interrupt;
pub mod quantity;
pub mod queue;
pub mod rng;
pub mod units;

pub use queue::{
    Event, EventQueue, RawEvent, TimerEpochs, TimerOwner, TAG_ARRIVE, TAG_TX_DONE, TIMER_KINDS,
};
pub use rng::{Rng, Stream};
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
    prefetch_bytes(p.cast(), std::mem::size_of::<T>());
}

/// `prefetch` the first and the last cache line of the `bytes` bytes at `p` (none if 0).
#[inline(always)]
pub fn prefetch_bytes(p: *const u8, bytes: usize) {
    if bytes > 0 {
        prefetch(p);
        prefetch(p.wrapping_add(bytes - 1));
    }
}

/// Test helper for a `repr(C, align(64))` layout: `T` is line-aligned, and each (field
/// offset, line) row has its field in that cache line.
#[cfg(test)]
pub(crate) fn assert_in_lines<T>(rows: &[(usize, usize)]) {
    assert_eq!(std::mem::align_of::<T>(), 64);
    for &(offset, line) in rows {
        assert_eq!(offset / 64, line, "field at offset {offset}");
    }
}
