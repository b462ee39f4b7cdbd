//! Priority flow control frames: a switch ingress queue past its threshold sends PAUSE for its
//! priority to the upstream port (`net::mmu` decides when), RESUME once it drained; a port that
//! receives PAUSE stops sending that priority until RESUME. PFC frames go ahead of everything
//! and are never paused. The scheme's switch part hears every PAUSE and RESUME a switch port
//! receives (TCD's ON/OFF history, PCN's count of packets waiting at RESUME).
//!
//! Deadlock detection: while any switch port is paused, the detector scans every
//! `fabric.pfc.deadlock_after` for a cycle of switch ports, each paused for at least that long
//! and waiting on the next: port A -> B waits on port B -> C if B holds bytes that came in
//! from A (its ingress counter from A is non-zero) and B -> C is paused with bytes queued for
//! that priority. (Which egress queue those bytes sit in is not tracked: the edge is an
//! over-approximation; requiring every port of the cycle to have stayed paused for the whole
//! detection time removes transient cycles.) A cycle is reported once, with its ports, the
//! time it formed (when its last port was paused) and the time it was confirmed.
//!
//! This file holds the detector's records; PAUSE/RESUME handling and the scans run in
//! `engine::pfc`.

/// A cycle of paused switch ports that stayed paused for the detection time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// The cycle's egress ports, each waiting on the next (the last on the first).
    pub ports: Vec<u32>,
    pub prio: u8,
    pub formed_ps: u64,
    pub confirmed_ps: u64,
}

/// The deadlock detector's state.
#[derive(Clone, Debug, Default)]
pub struct DeadlockDetector {
    /// How long a cycle must stay paused (0: detection off).
    pub after_ps: u64,
    /// Egress ports of each switch, by switch index.
    pub switch_ports: Vec<Vec<u32>>,
    /// A scan is scheduled.
    pub(crate) scan_pending: bool,
    pub found: Vec<Deadlock>,
}
