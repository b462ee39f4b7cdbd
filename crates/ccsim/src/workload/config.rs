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
    Poisson(Poisson),
    Incast(Incast),
    LongLived(LongLived),
    FlowFile(FlowFile),
    Allreduce(Allreduce),
    Dag(Dag),
    Alltoall(Alltoall),
}
// Each kind's fields are a struct of their own, so that each generator
// (`workload::generate`) is a function taking its kind's settings.

/// Poisson arrivals per host sized to `load` of the host link, sizes from a CDF, random
/// destination among the other hosts (the HPCC simulator's traffic generator).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Poisson {
    /// Built-in name (websearch, fb_hadoop, cache_follower, web_server, data_mining, pcn_w1,
    /// pcn_w2, amrt_hadoop, amrt_websearch, amrt_data_mining) or a path.
    pub cdf: String,
    pub load: f64,
    #[serde(default)]
    pub start: Time,
    /// End of the arrival window.
    pub stop: Time,
    /// At most this many flows: the window closes at the N-th arrival over all hosts
    /// (AMRT's Fig. 15 counts flows); `stop` must leave room for N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<u64>,
    #[serde(default)]
    pub hosts: HostSet,
}

/// N senders send one size each to one receiver: once at `at`, every `every` from `start`
/// to `stop`, or (with `load`) as a Poisson process whose incast bytes add `load` of the
/// total link capacity of `hosts`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Incast {
    /// A number, or "A..B" for a count drawn uniformly per incast (PCN's in-cast ratio).
    pub senders: SenderCount,
    /// Every sender's flow size: a fixed `size`, or one drawn per sender from `cdf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdf: Option<String>,
    /// With `cdf`: one size drawn per incast and sent by every sender (synchronous
    /// generators, as PCN's Fig. 12 describes its bursts); false: a size per sender.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub same_size: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    #[serde(default)]
    pub start: Time,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Time>,
    #[serde(default)]
    pub hosts: HostSet,
}

/// Long-lived flows between host pairs, from `start` until `stop` (or the end of the run).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LongLived {
    pub pairs: Vec<[u32; 2]>,
    #[serde(default)]
    pub start: Time,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Time>,
    /// A rate limiter at the sender: the flows never send faster (see `FlowCfg::rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// The rate the flows start at, below the line rate (see `FlowCfg::start_rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_rate: Option<Rate>,
    /// The share of the distinct senders of `pairs` that answer their receivers' grants,
    /// credits and pulls; the others, drawn at random (seeded), send what their scheme
    /// sends unasked and ignore every control packet: AMRT's "unresponsive senders"
    /// (section VIII-D). Unset: every sender responds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responsive: Option<f64>,
}

/// A flow file of the HPCC simulator: first line the count, then
/// `src dst priority dport size_bytes start_seconds`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowFile {
    pub path: String,
}

/// All-reduce of `size` bytes over `hosts`, `iterations` times, each iteration starting
/// `gap` (compute) after the host received the last chunk of the one before; each send
/// starts when the chunk it needs has arrived. `ring` (hosts in ring order): reduce-scatter
/// then all-gather, 2(N-1) steps of size/N to the next host; `halving_doubling` (N a power
/// of 2): recursive halving then doubling, 2 log2(N) steps of size/2 ... size/N ... size/2
/// with the partner host.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Allreduce {
    pub size: Size,
    #[serde(default)]
    pub algorithm: AllreduceAlgorithm,
    #[serde(default)]
    pub hosts: HostSet,
    #[serde(default)]
    pub start: Time,
    #[serde(default = "one")]
    pub iterations: u32,
    #[serde(default)]
    pub gap: Time,
}

/// A DAG of flows from a file: one flow per line, `id src dst size after delay` (`after`:
/// comma-separated ids or `-`; `delay`: a time after the last of them, or `-`); flows that
/// wait for none start at `start`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Dag {
    pub path: String,
    #[serde(default)]
    pub start: Time,
}

/// All-to-all over `hosts`: every host sends `size` to every other one at once,
/// `iterations` times, each starting `gap` after the host received all of the one before.
/// `skew` > 0 makes it a mixture-of-experts exchange: per iteration, destinations are
/// ranked at random (seeded) and host j receives in proportion to 1 / rank_j^skew (Zipf),
/// the total staying N(N-1) x size.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Alltoall {
    pub size: Size,
    #[serde(default)]
    pub hosts: HostSet,
    #[serde(default)]
    pub start: Time,
    #[serde(default = "one")]
    pub iterations: u32,
    #[serde(default)]
    pub gap: Time,
    #[serde(default)]
    pub skew: f64,
}
/// How an all-reduce moves its chunks (`workload.algorithm`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AllreduceAlgorithm {
    #[default]
    Ring,
    HalvingDoubling,
}

fn one() -> u32 {
    1
}
