//! The network layer's settings from the scenario's `[fabric]`: egress scheduling, the PFC
//! threshold mode and what a lossy switch does when a queue is full.

use serde::{Deserialize, Serialize};

/// Egress scheduling discipline.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    Rr,
    Strict,
}

/// PFC XOFF threshold mode.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PfcMode {
    /// Pause when an ingress queue reaches `xoff`.
    Static,
    /// Pause when an ingress queue reaches `alpha` x the free shared buffer.
    Dynamic,
}

/// What a lossy switch does with a packet that finds no room.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DropMode {
    /// Drop when the egress queue holds `queue_packets` packets or `queue_bytes` bytes.
    DropTail,
    /// Drop when the egress queue would exceed `alpha` x the free shared buffer.
    Dynamic,
}
