//! The switch buffer (MMU): one shared pool per switch, each packet charged to its (ingress
//! port, priority) and released when it leaves. Lossless: a queue past its PFC threshold
//! (static XOFF, or alpha x the free pool) spills into its own headroom and triggers
//! PAUSE (`net::pfc`); overflowing headroom or the pool is a configuration error that stops the
//! run. Lossy: a packet that would overflow its egress queue's limit (drop-tail, in packets or
//! bytes, or a dynamic threshold alpha x the free pool) or the pool is dropped.
//!
//! Buffer model: `shared_pool = buffer - sum(headroom + reserve)` over ports and lossless data
//! classes (one, or one per `fabric.priority_by_size` class; none when lossy): every (ingress
//! port, priority) queue has headroom of its own, as a paused class keeps its in-flight bytes
//! there however long other classes run; its first `fabric.pfc.reserve` bytes stay outside the
//! pool and threshold.
//! Control packets (priority 0) bypass admission and are counted apart.
//!
//! ACKs and NACKs that switches queue with data (`fabric.ack_priority`) while the NIC sends them
//! in another class (`host.ack_priority`) keep coming after a PAUSE, so they can outrun the
//! headroom. The HPCC ns-3 simulator drops them there (a flow whose last ACK is lost never ends
//! in it); ccsim charges them to the shared pool instead and counts them
//! (`pfc.acks_past_headroom` in the summary).
//!
//! This file holds the buffer state; admission and release run in `engine::mmu`.

/// Shared-buffer state of one switch.
#[derive(Clone, Debug)]
pub struct BufferState {
    pub node: u32,
    /// Buffer minus all headroom reservations: what queues share.
    pub shared_pool_bytes: u64,
    pub shared_used_bytes: u64,
    /// Bytes of control packets (priority 0), outside admission.
    pub ctrl_bytes: u64,
    /// Bytes currently held in PFC headroom (all ports).
    pub hdrm_used_bytes: u64,
    pub max_used_bytes: u64,
    /// ACKs and NACKs admitted to the shared pool because their headroom was full.
    pub acks_past_headroom: u64,
}

/// Outcome of buffer admission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    Ok,
    /// Lossy fabric: no room.
    Drop,
    /// Lossless fabric overflowed: `Simulation::fatal` is set.
    Fatal,
}
