//! The scenario file, as typed serde structs with documented defaults. Every struct denies
//! unknown keys, so a typo is an error that names the key, never a silently ignored setting.

use crate::sim::quantity::{Rate, Size, Time};
use serde::{Deserialize, Serialize};

// The layers' own settings, assembled here.
pub use crate::net::config::{DropMode, PfcMode, Scheduler};
pub use crate::topo::config::{LinkCfg, TopologyCfg};
pub use crate::transport::loss::{Recovery, RecoveryMode};
pub use crate::workload::config::{HostSet, SenderCount, WorkloadCfg};

fn one() -> u64 {
    1
}
fn default_name() -> String {
    "scenario".into()
}

/// A whole scenario: topology, fabric, hosts, congestion control, traffic and outputs.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioCfg {
    /// Name of the run; the default output directory is `results/<name>`.
    #[serde(default = "default_name")]
    pub name: String,
    /// Master seed of every random stream (workload, ECN marking, ECMP hashing).
    #[serde(default = "one")]
    pub seed: u64,
    /// Another simulator's fabric details as the defaults of the settings that model them
    /// (`fabric.tx_time`, `fabric.pfc.alpha_per_rate`, `.reserve`, `.headroom_mtus`,
    /// `host.base_rtt_bytes`); settings given explicitly win.
    #[serde(default, skip_serializing_if = "Compat::is_none")]
    pub compat: Compat,
    /// Stop time. Without it the run ends when every finite flow has finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Time>,
    /// Refuse to build a scenario whose fabric and flows would need more memory than this
    /// (default: this machine's memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<Size>,
    /// Threads of one run, a pure speed setting: every count gives the same results byte for
    /// byte. 1 is the single-threaded engine; N >= 2 cuts the fabric into partitions run in
    /// parallel (`engine::parallel`); "auto" (the default) runs a fabric of at least
    /// `AUTO_PARALLEL_HOSTS` hosts in parallel on the run's cores (`cores`), a smaller one on
    /// one thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<Threads>,
    /// The most partitions a parallel run cuts the fabric into (1 to 16; unset: as many as
    /// threads). Like `threads`, it changes the speed, never the results: fewer partitions
    /// than threads leave threads idle, more make fewer cores take turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
    pub topology: TopologyCfg,
    #[serde(default)]
    pub fabric: FabricCfg,
    #[serde(default)]
    pub host: HostCfg,
    #[serde(default)]
    pub cc: CcCfg,
    /// Traffic generators (`[[workload]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workload: Vec<WorkloadCfg>,
    /// Explicit flows (`[[flows]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowCfg>,
    #[serde(default)]
    pub output: OutputCfg,
}

/// A run's `threads`: a count, or "auto".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    Count(u32),
    Auto,
}

/// Hosts from which `threads = "auto"` runs in parallel (fewer: a window holds too little
/// work to pay for the synchronization). Measured on 2 threads, WebSearch at 30%: a k = 8
/// fat-tree (128 hosts) runs 1.8x faster, a k = 6 one (54 hosts) 2.5x slower.
pub const AUTO_PARALLEL_HOSTS: usize = 128;

/// The environment variable that gives a run its share of the machine's cores (a sweep's
/// workers share them: the local pool sets it to cores / workers, Ray to 1 per task).
pub const CORES_ENV: &str = "CCSIM_CORES";

/// The cores a run may use: `CCSIM_CORES` if set to a count >= 1, else the machine's.
pub fn cores() -> usize {
    std::env::var(CORES_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n >= 1)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Serialize for Threads {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Threads::Count(n) => s.serialize_u32(*n),
            Threads::Auto => s.serialize_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Threads;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number of threads (1, 2, 4 ...) or \"auto\"")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Threads, E> {
                match u32::try_from(n) {
                    Ok(n) if n >= 1 => Ok(Threads::Count(n)),
                    _ => Err(E::custom(format!(
                        "must be at least 1 (the single-threaded engine), or \"auto\"; got {n}"
                    ))),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Threads, E> {
                self.visit_i64(i64::try_from(n).unwrap_or(i64::MAX))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Threads, E> {
                match v {
                    "auto" => Ok(Threads::Auto),
                    _ => Err(E::custom(format!(
                        "must be a number of threads or \"auto\"; got \"{v}\""
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Whose fabric details a scenario's defaults follow.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub enum Compat {
    /// ccsim's own.
    #[default]
    #[serde(rename = "none")]
    None,
    /// The HPCC ns-3 simulator's (`ccsim import-hpcc` sets it): serialization times cut to
    /// whole ns, PFC alpha doubled per doubling of a port's rate, 4 KiB reserved per ingress
    /// queue, headroom 3 x BDP, base RTT from the payload.
    #[serde(rename = "hpcc-sim")]
    HpccSim,
}

impl Compat {
    fn is_none(&self) -> bool {
        *self == Compat::None
    }
}

/// How a link's serialization time is computed.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TxTime {
    /// bytes x 8 / rate, in ps (rounded up).
    Exact,
    /// Cut down to whole ns, as ns-3 does (`Seconds(CalculateTxTime(...))` at ns resolution):
    /// a 1048-byte packet takes 83 ns instead of 83.84 at 100 Gb/s, 20 instead of 20.96 at
    /// 400 Gb/s, so links run ~1% and ~4.8% fast.
    FloorNs,
}

/// Which packet size the base RTT counts once per hop.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BaseRttBytes {
    /// A full data packet: payload, headers and the scheme's header (INT, timestamp).
    FullPacket,
    /// The payload alone, as the HPCC ns-3 simulator (`packet_payload_size` per hop).
    Payload,
}

/// Switch fabric: buffer, PFC, ECN, scheduling and priorities.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FabricCfg {
    /// Shared buffer per switch.
    pub buffer: Size,
    pub pfc: PfcCfg,
    pub ecn: EcnCfg,
    /// Egress scheduler: "rr" (priority 0 strict, then round-robin, as the HPCC ns-3 simulator)
    /// or "strict" (strict priority, lower number first).
    pub scheduler: Scheduler,
    /// Priority of data packets (1..7); unset: `DEFAULT_DATA_PRIORITY`, or none with
    /// `priority_by_size`, which sets it per flow (so a value beside it is refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_priority: Option<u8>,
    /// Size classes instead of `data_priority` (PCN B.4): ascending bounds, e.g. ["10KB",
    /// "100KB", "1MB"]; a flow smaller than the first bound sends in priority 1, than the
    /// second in 2, and so on; larger and long-lived flows in one more than the bounds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub priority_by_size: Vec<Size>,
    /// Serialization times: "exact" or "floor_ns" (ns-3's); unset: as `compat` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_time: Option<TxTime>,
    /// Priority class switches queue ACKs and NACKs in, whatever class the NIC sent them in
    /// (`host.ack_priority`); unset means "as the scheme needs" (the data class for DCQCN and
    /// TIMELY, as in the HPCC ns-3 simulator; else the NIC's class).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_priority: Option<u8>,
    /// Lossy fabric (`pfc.enabled = false`): what a full queue does. Resolved to a shared
    /// buffer with dynamic thresholds (alpha 1) when PFC is off and this is unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossCfg>,
    /// ECMP hashes the unordered pair of end hosts instead of the flow, the same way at every
    /// switch of a layer, so ACKs retrace the data path (fat-tree and leaf-spine).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ecmp_symmetric: bool,
}

/// Drop policy of a lossy fabric.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LossCfg {
    pub mode: DropMode,
    /// Drop-tail limit per egress queue in packets (128 in the AMRT paper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_packets: Option<u32>,
    /// Drop-tail limit per egress queue in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_bytes: Option<Size>,
    /// Dynamic threshold factor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Drop-tail limit per egress port, all priorities together, in packets (a shallow switch
    /// with a port-wide buffer: Homa's 8 priorities still share one port's packets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_packets: Option<u32>,
    /// Drop-tail limit per egress port, all priorities together, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_bytes: Option<Size>,
    /// Limit of each port's priority-0 queue (trimmed headers, control packets) in packets;
    /// beyond it they are dropped. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctrl_packets: Option<u32>,
    /// A trimming scheme's (NDP's) switch ports: turns of the header queue per data turn while
    /// both wait. Default 10, the NDP authors' htsim (CompositeQueue `_ratio_high`); Broadcom's
    /// csg-htsim has 100000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_turns: Option<u32>,
}

/// Data packets' priority when `fabric.data_priority` is unset.
pub const DEFAULT_DATA_PRIORITY: u8 = 3;

impl Default for FabricCfg {
    fn default() -> Self {
        FabricCfg {
            buffer: Size(32_000_000),
            pfc: PfcCfg::default(),
            ecn: EcnCfg::default(),
            scheduler: Scheduler::Rr,
            data_priority: None,
            priority_by_size: Vec::new(),
            tx_time: None,
            ack_priority: None,
            loss: None,
            ecmp_symmetric: false,
        }
    }
}

/// Priority flow control.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcCfg {
    pub enabled: bool,
    /// "static" or "dynamic". This and the other keys PFC resolves (`xoff`, `resume_offset`,
    /// `frame_bytes`, `deadlock_after`) are unset on a lossy fabric, where setting one is an
    /// error; a lossless fabric fills each unset one with its default (the methods' values).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<PfcMode>,
    /// Static XOFF threshold per (ingress port, priority); 512 KB as in the ACC paper.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xoff: Option<Size>,
    /// Dynamic threshold factor: XOFF = alpha x free shared buffer (1/8, the HPCC simulator's,
    /// when unset). Only in mode = "dynamic".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Dynamic mode: `alpha` holds on ports at the host link rate and doubles with each
    /// doubling of a port's rate, up to 1 (the HPCC simulator: 1/8 at 100G, 1/2 at 400G).
    /// Unset: as `compat` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha_per_rate: Option<bool>,
    /// The first bytes of every ingress queue are its own, outside the shared pool and the
    /// threshold; the pool shrinks by this much per port (the HPCC simulator: 4 KiB).
    /// Unset: as `compat` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve: Option<Size>,
    /// RESUME once the ingress queue is this far below the threshold (3 KiB as in the HPCC simulator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_offset: Option<Size>,
    /// Headroom per ingress port and priority, one size for all; unset: 3 x the link's bandwidth-delay
    /// product + `headroom_mtus` full packets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom: Option<Size>,
    /// Full packets added to the computed headroom (2; the HPCC simulator: 0). Unset: as
    /// `compat` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom_mtus: Option<u32>,
    /// The longest continuous ON period of a port in PFC's ON/OFF pattern, TCD's max(T_on)
    /// (read by the TCD schemes' switch part). Unset: derived per port (`build::max_t_on_ps`):
    /// the time to send what its switch holds for one upstream, XOFF plus headroom, plus the
    /// link's round trip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_t_on: Option<Time>,
    /// PAUSE frame size on the wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_bytes: Option<u32>,
    /// A cycle of switch ports all paused for this long is reported as a deadlock (summary
    /// `pfc.deadlock` / `pfc.deadlocks`); 0 turns detection off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlock_after: Option<Time>,
}

impl PfcCfg {
    pub fn mode(&self) -> PfcMode {
        self.mode.unwrap_or(PfcMode::Static)
    }
    pub fn xoff(&self) -> Size {
        self.xoff.unwrap_or(Size(512_000))
    }
    pub fn resume_offset(&self) -> Size {
        self.resume_offset.unwrap_or(Size(3 * 1024))
    }
    pub fn frame_bytes(&self) -> u32 {
        self.frame_bytes.unwrap_or(64)
    }
    pub fn deadlock_after(&self) -> Time {
        self.deadlock_after.unwrap_or(Time(crate::sim::PS_PER_MS))
    }

    /// Write each unset key's default out (a lossless fabric's resolved config is explicit).
    pub fn fill_defaults(&mut self) {
        self.mode = Some(self.mode());
        self.xoff = Some(self.xoff());
        self.resume_offset = Some(self.resume_offset());
        self.frame_bytes = Some(self.frame_bytes());
        self.deadlock_after = Some(self.deadlock_after());
    }
}

impl Default for PfcCfg {
    fn default() -> Self {
        PfcCfg {
            enabled: true,
            mode: None,
            xoff: None,
            alpha: None,
            alpha_per_rate: None,
            reserve: None,
            resume_offset: None,
            headroom: None,
            headroom_mtus: None,
            max_t_on: None,
            frame_bytes: None,
            deadlock_after: None,
        }
    }
}

/// RED/ECN marking at egress dequeue. Thresholds are given for `ref_rate` and scale linearly
/// with each port's rate. Unset fields take the scheme's defaults (DCQCN: the HPCC simulator's
/// maps, 400 KB / 1600 KB / 0.2 at 100 Gb/s); the resolved config shows the values used.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct EcnCfg {
    /// Marking on or off; unset means "as the scheme needs".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kmin: Option<Size>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kmax: Option<Size>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pmax: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ref_rate: Option<Rate>,
}

/// Host NIC and RDMA-RC-like transport.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostCfg {
    /// Payload bytes per data packet (1000 as in the HPCC simulator).
    pub mtu_payload_bytes: u32,
    /// Header bytes added to every data packet (L2 14 + IP 20 + UDP 8 + SeqTs 6 = 48).
    pub header_bytes: u32,
    /// ACK / NACK / CNP size on the wire (60, the Ethernet minimum the HPCC simulator pads to).
    pub ack_bytes: u32,
    /// Send one ACK every this many data packets (and always for the last one).
    pub ack_every_packets: u32,
    /// With `ack_every_packets` > 1: the longest a received packet waits for its coalesced ACK
    /// (10 us, ccsim's choice; NICs have such a timer). Without it, a window that shrinks after
    /// its packets left could wait forever for an ACK the receiver holds back.
    pub ack_timer: Time,
    /// Minimum gap between repeated NACKs for the same missing sequence (500 us, HPCC simulator).
    pub nack_interval: Time,
    /// Per-flow window: at most this many bytes in flight (unset: rate-paced only, as DCQCN in
    /// the HPCC simulator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Size>,
    /// Priority class the NIC sends ACKs, NACKs and control packets in (a class a PAUSE of
    /// the data class does not stop); unset means "as the scheme needs" (0 for DCQCN).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_priority: Option<u8>,
    /// Which packet size the base RTT counts per hop ("full_packet" or "payload", the HPCC
    /// simulator's); it sets BDP windows and RCC's path delays. Unset: as `compat` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rtt_bytes: Option<BaseRttBytes>,
    /// Loss recovery on a lossy fabric; resolved to go-back-N when PFC is off and unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// A run in which started flows are open but no byte is delivered for this long ends with
    /// a stall error naming them, unless a PFC deadlock explains it (100 ms; 0 = off).
    pub stall_after: Time,
}

impl Default for HostCfg {
    fn default() -> Self {
        HostCfg {
            mtu_payload_bytes: 1000,
            header_bytes: 48,
            ack_bytes: 60,
            ack_every_packets: 1,
            ack_timer: Time(10 * crate::sim::PS_PER_US),
            nack_interval: Time(500 * crate::sim::PS_PER_US),
            window: None,
            ack_priority: None,
            base_rtt_bytes: None,
            recovery: None,
            stall_after: Time(crate::engine::Watchdog::DEFAULT_AFTER_PS),
        }
    }
}

/// Congestion control: a scheme name and its parameters (`[cc.params]`, typed per scheme).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CcCfg {
    pub scheme: String,
    pub params: toml::Table,
}

impl Default for CcCfg {
    fn default() -> Self {
        CcCfg {
            scheme: "none".into(),
            params: toml::Table::new(),
        }
    }
}

/// One explicit flow. Without `size` it is long-lived until `stop` (or the end of the run).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    pub src: u32,
    pub dst: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    #[serde(default)]
    pub start: Time,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Time>,
    /// A rate limiter at the sender: the flow never sends faster than this, and its scheme
    /// takes it as the flow's line rate (as the PCN paper's fixed-rate flows of Fig. 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// The rate the sender starts at instead of its line rate, not a limit: a rate-based
    /// scheme (DCQCN, QCN, PCN, TIMELY, DCTCP, ACC) starts its control there and may rise
    /// above it (a flow that already has its fair share, as PCN's Fig. 2 assumes); other
    /// schemes replace it at their first feedback; with `none` it stays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_rate: Option<Rate>,
    /// Flows (their indices in `[[flows]]`) that must all have reached their receivers before
    /// this one starts: a step of a collective waits for the chunks it needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<u32>,
    /// With `after`: the flow starts this long after the last of them arrived (compute time),
    /// and not before `start`.
    #[serde(default, skip_serializing_if = "Time::is_zero")]
    pub delay: Time,
    /// What a receiver-driven scheme (pHost, AMRT, NDP) sends before its receiver answers, in
    /// place of the scheme's parameter for this flow: a flow already under way, as the AMRT
    /// paper's Fig. 1 assumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_window: Option<Size>,
}

/// Optional probes; all off by default (they cost nothing when off).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputCfg {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queues: Option<QueueProbeCfg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rates: Option<RateProbeCfg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceCfg>,
    /// Record every PFC PAUSE/RESUME frame (per-port counters are always kept).
    pub pfc_events: bool,
    /// Which ideal FCT slowdowns divide by (DESIGN.md, metrics).
    pub ideal_fct: IdealFct,
}

/// The ideal FCT a flow's slowdown is measured against.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IdealFct {
    /// A lone flow's FCT on its path: its first packet (real size) and the last byte's ACK
    /// store-and-forwarded at every hop, the rest of its bytes at the slowest link.
    #[default]
    Exact,
    /// The HPCC ns-3 simulator's: its base RTT (2 x propagation + one payload's serialization
    /// per hop) + all bytes with their headers (not the scheme's INT or timestamp) at the
    /// slowest link. Slowdowns then compare with that simulator's, but a flow under one MTU
    /// measures below 1.
    Hpcc,
}

impl Default for OutputCfg {
    fn default() -> Self {
        OutputCfg {
            queues: None,
            rates: None,
            trace: None,
            pfc_events: true,
            ideal_fct: IdealFct::Exact,
        }
    }
}

/// Queue-length and link-utilization samples at chosen egress ports.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QueueProbeCfg {
    pub interval: Time,
    /// Egress ports as "from->to" node names (e.g. "sw0->h16"), or ["all"] for every switch port.
    pub ports: Vec<String>,
    /// Also record each flow's bytes in those queues (table `flow_queues`; costs a walk of the
    /// queues per sample, so name a few ports).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_flow: bool,
    /// Sample from this time on: the first row is at start + interval and covers only that
    /// interval. Unset: from the first flow's start (down to a multiple of `interval`), so an
    /// idle lead-in, e.g. the 2 s before the HPCC simulator's flows start, costs nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Time>,
    /// No samples after this time (unset: to the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Time>,
}

/// A packet trace of chosen ports (`trace.pcapng` in the run directory; `metrics::trace`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceCfg {
    /// Egress ports as "from->to" node names, or ["all"] for every switch port.
    pub ports: Vec<String>,
    /// Frames sent from this time on (unset: from the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Time>,
    /// No frames at or after this time (unset: to the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Time>,
    #[serde(default)]
    pub format: TraceFormat,
    /// The trace stops after this many frames (about 130 bytes each), with a warning.
    #[serde(default = "default_trace_packets")]
    pub max_packets: u64,
}

fn default_trace_packets() -> u64 {
    1_000_000
}

/// A trace's file format.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// pcapng, which Wireshark and tshark read (`"pcap"`, its first name, is read as this).
    #[default]
    #[serde(alias = "pcap")]
    Pcapng,
}

/// Per-flow sending-rate and throughput samples.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RateProbeCfg {
    pub interval: Time,
    /// Flow ids, or empty for every flow.
    #[serde(default)]
    pub flows: Vec<u32>,
    /// Sample from this time on, as `QueueProbeCfg::start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Time>,
    /// No samples after this time, as `QueueProbeCfg::stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Time>,
}
