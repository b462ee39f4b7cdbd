//! Congestion control schemes. Each scheme is one file with its parameters (typed, with
//! documented defaults) and its per-flow state; this module is the registry and the narrow set
//! of hooks the transport calls (static dispatch through enums, no trait objects per packet).
//!
//! Adding a scheme: write `cc/<name>.rs`, add a variant to `CcParams` and `CcState`, and one
//! entry to `SCHEMES`.

pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod qcn;
pub mod timely;

use crate::net::IntHop;
use crate::scenario::ScenarioError;
use crate::sim::{Event, EventQueue};
use crate::transport::Flow;

/// What a scheme needs from the fabric beyond forwarding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchFeature {
    /// Nothing, or RED/ECN marking when the scheme has `ecn` defaults.
    Plain,
    /// Switches append INT records (HPCC).
    Int,
    /// Switches run the QCN congestion point and send feedback to sources.
    QcnCp,
}

/// A registered scheme: how the scenario names it and what the fabric must do for it.
pub struct SchemeInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub paper: &'static str,
    /// Switches mark ECN (RED) for this scheme unless the scenario says otherwise, with these
    /// default thresholds: (kmin, kmax bytes, pmax, at ref rate bps). None: no marking.
    pub ecn: Option<(u64, u64, f64, u64)>,
    /// Default priority of ACK/NACK/CNP; None = the data priority (ACKs share the data queue).
    pub ack_priority: Option<u8>,
    pub switch_feature: SwitchFeature,
    /// Header bytes the scheme adds to every data packet and ACK (INT, timestamps).
    pub extra_header_bytes: u32,
    /// The sender keeps a window derived from the fabric's bandwidth-delay product.
    pub bdp_window: bool,
}

/// Every scheme ccsim knows, in `ccsim list` order.
pub const SCHEMES: &[SchemeInfo] = &[
    SchemeInfo {
        name: "none",
        description: "No congestion control: every flow sends at line rate; PFC alone prevents loss.",
        paper: "-",
        ecn: None,
        ack_priority: Some(0),
        switch_feature: SwitchFeature::Plain,
        extra_header_bytes: 0,
        bdp_window: false,
    },
    SchemeInfo {
        name: "dcqcn",
        description: "DCQCN as modelled by the HPCC ns-3 simulator (Mellanox timers: alpha 1us, decrease 4us, increase 300us; CE echoed on every ACK).",
        paper: "Zhu et al., Congestion Control for Large-Scale RDMA Deployments, SIGCOMM 2015; HPCC ns-3 simulator rdma-hw.cc",
        ecn: Some((400_000, 1_600_000, 0.2, 100_000_000_000)),
        ack_priority: Some(0),
        switch_feature: SwitchFeature::Plain,
        extra_header_bytes: 0,
        bdp_window: false,
    },
    SchemeInfo {
        name: "dcqcn_paper",
        description: "DCQCN with the paper's reaction point: 55us alpha/increase timers, 10MB byte counter, F=5, CNP at most once per 50us per flow.",
        paper: "Zhu et al., Congestion Control for Large-Scale RDMA Deployments, SIGCOMM 2015",
        ecn: Some((5_000, 200_000, 0.01, 40_000_000_000)),
        ack_priority: Some(0),
        switch_feature: SwitchFeature::Plain,
        extra_header_bytes: 0,
        bdp_window: false,
    },
    SchemeInfo {
        name: "timely",
        description: "TIMELY as run by the HPCC ns-3 simulator: RTT-gradient rate control once per RTT (alpha 0.875, beta 0.8, T_low 50us, T_high 500us), paced; 8-byte timestamp header.",
        paper: "Mittal et al., TIMELY: RTT-based Congestion Control for the Datacenter, SIGCOMM 2015; HPCC ns-3 simulator rdma-hw.cc",
        ecn: None,
        ack_priority: Some(0),
        switch_feature: SwitchFeature::Plain,
        extra_header_bytes: timely::TS_HEADER_BYTES,
        bdp_window: false,
    },
    SchemeInfo {
        name: "hpcc",
        description: "HPCC: per-hop INT (queue, tx bytes, time, rate) at switch egress; per-ACK window from the max normalized inflight, reference window once per RTT (eta 0.95, maxStage 5); window + pacing.",
        paper: "Li et al., HPCC: High Precision Congestion Control, SIGCOMM 2019; HPCC ns-3 simulator rdma-hw.cc",
        ecn: None,
        ack_priority: None,
        switch_feature: SwitchFeature::Int,
        extra_header_bytes: hpcc::INT_HEADER_BYTES,
        bdp_window: true,
    },
    SchemeInfo {
        name: "dctcp",
        description: "DCTCP for RDMA as run by the HPCC ns-3 simulator: ECN echo per ACK, alpha (g=1/16) once per window, cut by alpha/2 once per window, +1 MTU per RTT; BDP window scaled by rate, paced.",
        paper: "Alizadeh et al., Data Center TCP (DCTCP), SIGCOMM 2010; HPCC ns-3 simulator rdma-hw.cc",
        ecn: Some((30_000, 30_000, 1.0, 10_000_000_000)),
        ack_priority: None,
        switch_feature: SwitchFeature::Plain,
        extra_header_bytes: 0,
        bdp_window: true,
    },
    SchemeInfo {
        name: "qcn",
        description: "QCN (IEEE 802.1Qau): switches sample arrivals and send quantized feedback Fb = -(Q_off + w Q_delta) to the source; the source cuts by Gd|Fb| and recovers by byte counter and timer (fast recovery, active, hyper-active increase).",
        paper: "Alizadeh et al., Data Center Transport Mechanisms: Congestion Control Theory and IEEE Standardization, Allerton 2008; IEEE 802.1Qau",
        ecn: None,
        ack_priority: Some(0),
        switch_feature: SwitchFeature::QcnCp,
        extra_header_bytes: 0,
        bdp_window: false,
    },
];

/// Look a scheme up by name.
pub fn scheme(name: &str) -> Option<&'static SchemeInfo> {
    SCHEMES.iter().find(|s| s.name == name)
}

/// Typed parameters of the selected scheme.
#[derive(Clone, Debug)]
pub enum CcParams {
    None,
    Dcqcn(dcqcn::DcqcnParams),
    Timely(timely::TimelyParams),
    Hpcc(hpcc::HpccParams),
    Dctcp(dctcp::DctcpParams),
    Qcn(qcn::QcnParams),
}

impl CcParams {
    /// Parse and check `[cc.params]` for `scheme`; errors name the field as `cc.params.<key>`.
    pub fn parse(scheme_name: &str, params: &toml::Table) -> Result<CcParams, ScenarioError> {
        use crate::scenario::from_value_at as parse;
        let v = toml::Value::Table(params.clone());
        let at = "cc.params";
        let p = match scheme_name {
            "none" => {
                if let Some(k) = params.keys().next() {
                    return Err(ScenarioError::new(
                        &format!("cc.params.{k}"),
                        "scheme `none` has no parameters; remove it",
                    ));
                }
                CcParams::None
            }
            "dcqcn" => CcParams::Dcqcn(parse(v, at, dcqcn::DcqcnParams::hpcc_sim())?),
            "dcqcn_paper" => CcParams::Dcqcn(parse(v, at, dcqcn::DcqcnParams::paper())?),
            "timely" => CcParams::Timely(parse(v, at, timely::TimelyParams::default())?),
            "hpcc" => CcParams::Hpcc(parse(v, at, hpcc::HpccParams::default())?),
            "dctcp" => CcParams::Dctcp(parse(v, at, dctcp::DctcpParams::default())?),
            "qcn" => CcParams::Qcn(parse(v, at, qcn::QcnParams::default())?),
            other => {
                let names: Vec<&str> = SCHEMES.iter().map(|s| s.name).collect();
                return Err(ScenarioError::new(
                    "cc.scheme",
                    format!("unknown scheme `{other}`; use one of: {}", names.join(", ")),
                ));
            }
        };
        p.validate()?;
        Ok(p)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        match self {
            CcParams::None => Ok(()),
            CcParams::Dcqcn(p) => p.validate(),
            CcParams::Timely(p) => p.validate(),
            CcParams::Hpcc(p) => p.validate(),
            CcParams::Dctcp(p) => p.validate(),
            CcParams::Qcn(p) => p.validate(),
        }
    }

    /// The parameters with defaults filled in, for the resolved config and `ccsim list`.
    pub fn to_table(&self) -> toml::Table {
        let t = match self {
            CcParams::None => return toml::Table::new(),
            CcParams::Dcqcn(p) => toml::Table::try_from(p),
            CcParams::Timely(p) => toml::Table::try_from(p),
            CcParams::Hpcc(p) => toml::Table::try_from(p),
            CcParams::Dctcp(p) => toml::Table::try_from(p),
            CcParams::Qcn(p) => toml::Table::try_from(p),
        };
        t.expect("params serialize")
    }

    /// Fresh per-flow state.
    pub fn new_state(&self) -> CcState {
        match self {
            CcParams::None => CcState::None,
            CcParams::Dcqcn(p) => CcState::Dcqcn(dcqcn::Dcqcn::new(p)),
            CcParams::Timely(_) => CcState::Timely(timely::Timely::default()),
            CcParams::Hpcc(_) => CcState::Hpcc(Box::default()),
            CcParams::Dctcp(_) => CcState::Dctcp(dctcp::Dctcp::default()),
            CcParams::Qcn(_) => CcState::Qcn(qcn::QcnRp::default()),
        }
    }

    /// Receiver side: minimum gap between standalone CNPs (0 = echo CE on ACKs instead).
    pub fn cnp_interval_ps(&self) -> u64 {
        match self {
            CcParams::Dcqcn(p) => p.cnp_interval.0,
            _ => 0,
        }
    }
}

/// Per-flow congestion-control state. (HPCC's is boxed: it keeps the last INT records.)
#[derive(Clone, Debug)]
pub enum CcState {
    None,
    Dcqcn(dcqcn::Dcqcn),
    Timely(timely::Timely),
    Hpcc(Box<hpcc::Hpcc>),
    Dctcp(dctcp::Dctcp),
    Qcn(qcn::QcnRp),
}

/// What a hook may touch besides its own state: the clock, the event queue (for timers) and the
/// flow's sender fields (rate, window).
pub struct CcCtx<'a> {
    pub now_ps: u64,
    pub flow_id: u32,
    pub q: &'a mut EventQueue,
}

impl CcCtx<'_> {
    /// Schedule timer `kind` at `at_ps`, valid while the scheme keeps `epoch`.
    pub fn timer(&mut self, at_ps: u64, kind: u8, epoch: u32) {
        self.q.push(
            at_ps,
            Event::CcTimer {
                flow: self.flow_id,
                kind,
                epoch,
            },
        );
    }
}

/// Congestion feedback carried by an ACK or NACK.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo<'a> {
    /// Cumulative ACK: every byte below it has arrived.
    pub ack_seq: u64,
    pub newly_acked_bytes: u64,
    pub ce_echo: bool,
    /// Now minus the send time of the data packet this ACK answers.
    pub rtt_ps: u64,
    /// INT records of that data packet's path, one per switch (empty unless the scheme
    /// enables INT).
    pub int: &'a [IntHop],
}

impl CcState {
    /// The flow starts: set its initial rate and window.
    pub fn on_start(&mut self, p: &CcParams, f: &mut Flow) {
        f.rate_bps = f.line_rate_bps;
        match (self, p) {
            (CcState::Dcqcn(s), CcParams::Dcqcn(_)) => s.on_start(f),
            (CcState::Timely(s), CcParams::Timely(_)) => s.on_start(f),
            (CcState::Hpcc(s), CcParams::Hpcc(p)) => s.on_start(p, f),
            (CcState::Dctcp(s), CcParams::Dctcp(p)) => s.on_start(p, f),
            (CcState::Qcn(s), CcParams::Qcn(p)) => s.on_start(p, f),
            _ => {}
        }
    }
    /// An ACK or NACK arrived at the sender.
    pub fn on_ack(&mut self, p: &CcParams, f: &mut Flow, ctx: &mut CcCtx, ack: AckInfo) {
        match (self, p) {
            (CcState::Dcqcn(s), CcParams::Dcqcn(p)) if ack.ce_echo && p.cnp_interval.0 == 0 => {
                s.on_cnp(p, f, ctx)
            }
            (CcState::Timely(s), CcParams::Timely(p)) => s.on_ack(p, f, &ack),
            (CcState::Hpcc(s), CcParams::Hpcc(p)) => s.on_ack(p, f, &ack),
            (CcState::Dctcp(s), CcParams::Dctcp(p)) => s.on_ack(p, f, &ack),
            _ => {}
        }
    }
    /// A congestion notification arrived at the sender: a DCQCN CNP, or a QCN feedback
    /// message carrying the quantized |Fb| `fb`.
    pub fn on_cnp(&mut self, p: &CcParams, f: &mut Flow, ctx: &mut CcCtx, fb: u8) {
        match (self, p) {
            (CcState::Dcqcn(s), CcParams::Dcqcn(p)) => s.on_cnp(p, f, ctx),
            (CcState::Qcn(s), CcParams::Qcn(p)) => s.on_feedback(p, f, ctx, fb),
            _ => {}
        }
    }
    /// The sender put `bytes` (wire) of data on the link.
    pub fn on_send(&mut self, p: &CcParams, f: &mut Flow, ctx: &mut CcCtx, bytes: u64) {
        match (self, p) {
            (CcState::Dcqcn(s), CcParams::Dcqcn(p)) => s.on_send(p, f, ctx, bytes),
            (CcState::Hpcc(s), CcParams::Hpcc(_)) => s.on_send(bytes),
            (CcState::Qcn(s), CcParams::Qcn(p)) => s.on_send(p, f, bytes),
            _ => {}
        }
    }
    /// A timer scheduled through `CcCtx::timer` fired (stale epochs are filtered by the scheme).
    pub fn on_timer(&mut self, p: &CcParams, f: &mut Flow, ctx: &mut CcCtx, kind: u8, epoch: u32) {
        match (self, p) {
            (CcState::Dcqcn(s), CcParams::Dcqcn(p)) => s.on_timer(p, f, ctx, kind, epoch),
            (CcState::Qcn(s), CcParams::Qcn(p)) => s.on_timer(p, f, ctx, epoch),
            _ => {}
        }
    }
    /// The flow finished: stop timers.
    pub fn on_finish(&mut self) {
        match self {
            CcState::Dcqcn(s) => s.cancel_timers(),
            CcState::Qcn(s) => s.cancel_timers(),
            _ => {}
        }
    }
}

/// Window at line rate of a BDP-window scheme: its `base_window` parameter, or (0) the fabric's
/// bandwidth-delay product at the flow's line rate.
pub(crate) fn base_window_bytes(base_window: crate::scenario::units::Size, f: &Flow) -> u64 {
    if base_window.0 > 0 {
        base_window.0
    } else {
        f.bdp_bytes()
    }
}

/// Window of a rate-coupled window scheme (the HPCC simulator's variable window): the base
/// window scaled by rate / line rate, at least one byte.
#[inline]
pub(crate) fn scaled_window(base_window_bytes: u64, rate_bps: u64, line_bps: u64) -> u64 {
    let w = match base_window_bytes.checked_mul(rate_bps) {
        Some(p) => p / line_bps,
        None => (base_window_bytes as u128 * rate_bps as u128 / line_bps as u128) as u64,
    };
    w.max(1)
}
