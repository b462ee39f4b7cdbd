//! Simulation core: integer-picosecond time and unit parsing, the deterministic event queue,
//! and seeded RNG streams. Nothing here knows about packets or networks.

pub mod interrupt;
pub mod queue;
pub mod rng;
pub mod units;

pub use queue::{Event, EventQueue, TimerOwner};
pub use rng::Rng;
pub use units::*;
