//! The `[[workload]]` entries: traffic generators selected by `kind`.

use crate::sim::quantity::{Rate, Size, Time};
use serde::{Deserialize, Serialize};

/// Which hosts a generator may use.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum HostSet {
    /// "all", or "A..B": hosts A to B, both included.
    All(String),
    /// Explicit host ids.
    List(Vec<u32>),
}

impl Default for HostSet {
    fn default() -> Self {
        HostSet::All("all".into())
    }
}

/// How many senders an incast has: a number, or "A..B" (drawn uniformly per incast).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum SenderCount {
    Fixed(u32),
    Range(String),
}

/// A traffic generator, selected by `kind`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadCfg {
    /// Poisson arrivals per host sized to `load` of the host link, sizes from a CDF, random
    /// destination among the other hosts (the HPCC simulator's traffic generator).
    Poisson {
        /// Built-in name (websearch, fb_hadoop, cache_follower, web_server, data_mining, pcn_w1,
        /// pcn_w2, amrt_hadoop, amrt_websearch, amrt_data_mining) or a path.
        cdf: String,
        load: f64,
        #[serde(default)]
        start: Time,
        /// End of the arrival window.
        stop: Time,
        /// At most this many flows: the window closes at the N-th arrival over all hosts
        /// (AMRT's Fig. 15 counts flows); `stop` must leave room for N.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flows: Option<u64>,
        #[serde(default)]
        hosts: HostSet,
    },
    /// N senders send one size each to one receiver: once at `at`, every `every` from `start`
    /// to `stop`, or (with `load`) as a Poisson process whose incast bytes add `load` of the
    /// total link capacity of `hosts`.
    Incast {
        /// A number, or "A..B" for a count drawn uniformly per incast (PCN's in-cast ratio).
        senders: SenderCount,
        /// Every sender's flow size: a fixed `size`, or one drawn per sender from `cdf`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<Size>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cdf: Option<String>,
        /// With `cdf`: one size drawn per incast and sent by every sender (synchronous
        /// generators, as PCN's Fig. 12 describes its bursts); false: a size per sender.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        same_size: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        receiver: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<Time>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        every: Option<Time>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        load: Option<f64>,
        #[serde(default)]
        start: Time,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<Time>,
        #[serde(default)]
        hosts: HostSet,
    },
    /// Long-lived flows between host pairs, from `start` until `stop` (or the end of the run).
    LongLived {
        pairs: Vec<[u32; 2]>,
        #[serde(default)]
        start: Time,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<Time>,
        /// A rate limiter at the sender: the flows never send faster (see `FlowCfg::rate`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate: Option<Rate>,
        /// The rate the flows start at, below the line rate (see `FlowCfg::start_rate`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start_rate: Option<Rate>,
        /// The share of the distinct senders of `pairs` that answer their receivers' grants,
        /// credits and pulls; the others, drawn at random (seeded), send what their scheme
        /// sends unasked and ignore every control packet: AMRT's "unresponsive senders"
        /// (section VIII-D). Unset: every sender responds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        responsive: Option<f64>,
    },
    /// A flow file of the HPCC simulator: first line the count, then
    /// `src dst priority dport size_bytes start_seconds`.
    FlowFile { path: String },
    /// Ring all-reduce of `size` bytes over `hosts` (in ring order): reduce-scatter then
    /// all-gather, 2(N-1) steps in which every host sends a chunk of size/N to the next one,
    /// each send starting when the chunk it needs has arrived; `iterations` times, each
    /// starting `gap` (compute) after the host received the last chunk of the one before.
    Allreduce {
        size: Size,
        #[serde(default)]
        hosts: HostSet,
        #[serde(default)]
        start: Time,
        #[serde(default = "one")]
        iterations: u32,
        #[serde(default)]
        gap: Time,
    },
}

fn one() -> u32 {
    1
}
