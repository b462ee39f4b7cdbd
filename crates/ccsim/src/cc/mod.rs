//! Congestion control schemes. Each scheme is one file with its parameters (typed, with
//! documented defaults) and its per-flow state; this module is the registry and the narrow set
//! of hooks the transport calls (static dispatch through enums, no trait objects per packet).
//!
//! Adding a scheme: write `cc/<name>.rs`, add a variant to `CcParams` and `CcState`, and one
//! entry to `SCHEMES`.

pub mod dcqcn;

use crate::scenario::ScenarioError;
use crate::sim::{Event, EventQueue};
use crate::transport::Flow;

/// A registered scheme: how the scenario names it and what the fabric must do for it.
pub struct SchemeInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub paper: &'static str,
    /// Switches mark ECN (RED) for this scheme unless the scenario says otherwise.
    pub uses_ecn: bool,
    /// Default ECN thresholds (kmin, kmax bytes, pmax, at ref rate bps), when `uses_ecn`.
    pub ecn_defaults: (u64, u64, f64, u64),
    /// Default priority of ACK/NACK/CNP.
    pub ack_priority: u8,
}

/// Every scheme ccsim knows, in `ccsim list` order.
pub const SCHEMES: &[SchemeInfo] = &[
    SchemeInfo {
        name: "none",
        description: "No congestion control: every flow sends at line rate; PFC alone prevents loss.",
        paper: "-",
        uses_ecn: false,
        ecn_defaults: (0, 0, 0.0, 0),
        ack_priority: 0,
    },
    SchemeInfo {
        name: "dcqcn",
        description: "DCQCN as modelled by the HPCC ns-3 simulator (Mellanox timers: alpha 1us, decrease 4us, increase 300us; CE echoed on every ACK).",
        paper: "Zhu et al., Congestion Control for Large-Scale RDMA Deployments, SIGCOMM 2015; HPCC ns-3 simulator rdma-hw.cc",
        uses_ecn: true,
        ecn_defaults: (400_000, 1_600_000, 0.2, 100_000_000_000),
        ack_priority: 0,
    },
    SchemeInfo {
        name: "dcqcn_paper",
        description: "DCQCN with the paper's reaction point: 55us alpha/increase timers, 10MB byte counter, F=5, CNP at most once per 50us per flow.",
        paper: "Zhu et al., Congestion Control for Large-Scale RDMA Deployments, SIGCOMM 2015",
        uses_ecn: true,
        ecn_defaults: (5_000, 200_000, 0.01, 40_000_000_000),
        ack_priority: 0,
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
}

impl CcParams {
    /// Parse `[cc.params]` for `scheme`; errors name the field as `cc.params.<key>`.
    pub fn parse(scheme_name: &str, params: &toml::Table) -> Result<CcParams, ScenarioError> {
        let v = toml::Value::Table(params.clone());
        match scheme_name {
            "none" => {
                if let Some(k) = params.keys().next() {
                    return Err(ScenarioError::new(
                        &format!("cc.params.{k}"),
                        "scheme `none` has no parameters; remove it",
                    ));
                }
                Ok(CcParams::None)
            }
            "dcqcn" => Ok(CcParams::Dcqcn(crate::scenario::from_value_at(
                v,
                "cc.params",
                dcqcn::DcqcnParams::hpcc_sim(),
            )?)),
            "dcqcn_paper" => Ok(CcParams::Dcqcn(crate::scenario::from_value_at(
                v,
                "cc.params",
                dcqcn::DcqcnParams::paper(),
            )?)),
            other => {
                let names: Vec<&str> = SCHEMES.iter().map(|s| s.name).collect();
                Err(ScenarioError::new(
                    "cc.scheme",
                    format!("unknown scheme `{other}`; use one of: {}", names.join(", ")),
                ))
            }
        }
    }

    /// The parameters with defaults filled in, for the resolved config and `ccsim list`.
    pub fn to_table(&self) -> toml::Table {
        match self {
            CcParams::None => toml::Table::new(),
            CcParams::Dcqcn(p) => toml::Table::try_from(p).expect("params serialize"),
        }
    }

    /// Fresh per-flow state.
    pub fn new_state(&self) -> CcState {
        match self {
            CcParams::None => CcState::None,
            CcParams::Dcqcn(p) => CcState::Dcqcn(dcqcn::Dcqcn::new(p)),
        }
    }

    /// Receiver side: minimum gap between standalone CNPs (0 = echo CE on ACKs instead).
    pub fn cnp_interval_ps(&self) -> u64 {
        match self {
            CcParams::None => 0,
            CcParams::Dcqcn(p) => p.cnp_interval.0,
        }
    }
}

/// Per-flow congestion-control state.
#[derive(Clone, Debug)]
pub enum CcState {
    None,
    Dcqcn(dcqcn::Dcqcn),
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

/// Congestion feedback carried by an ACK.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    pub newly_acked_bytes: u64,
    pub ce_echo: bool,
}

impl CcState {
    /// The flow starts: set its initial rate and window.
    pub fn on_start(&mut self, p: &CcParams, f: &mut Flow) {
        f.rate_bps = f.line_rate_bps;
        if let (CcState::Dcqcn(s), CcParams::Dcqcn(_)) = (self, p) {
            s.on_start(f);
        }
    }
    /// An ACK arrived at the sender.
    pub fn on_ack(&mut self, p: &CcParams, f: &mut Flow, ctx: &mut CcCtx, ack: AckInfo) {
        if let (CcState::Dcqcn(s), CcParams::Dcqcn(p)) = (self, p) {
            if ack.ce_echo && p.cnp_interval.0 == 0 {
                s.on_cnp(p, f, ctx);
            }
        }
    }
    /// A standalone CNP arrived at the sender.
    pub fn on_cnp(&mut self, p: &CcParams, f: &mut Flow, ctx: &mut CcCtx) {
        if let (CcState::Dcqcn(s), CcParams::Dcqcn(p)) = (self, p) {
            s.on_cnp(p, f, ctx);
        }
    }
    /// The sender put `bytes` (wire) of data on the link.
    pub fn on_send(&mut self, p: &CcParams, f: &mut Flow, ctx: &mut CcCtx, bytes: u64) {
        if let (CcState::Dcqcn(s), CcParams::Dcqcn(p)) = (self, p) {
            s.on_send(p, f, ctx, bytes);
        }
    }
    /// A timer scheduled through `CcCtx::timer` fired (stale epochs are filtered by the scheme).
    pub fn on_timer(&mut self, p: &CcParams, f: &mut Flow, ctx: &mut CcCtx, kind: u8, epoch: u32) {
        if let (CcState::Dcqcn(s), CcParams::Dcqcn(p)) = (self, p) {
            s.on_timer(p, f, ctx, kind, epoch);
        }
    }
    /// The flow finished: stop timers.
    pub fn on_finish(&mut self) {
        if let CcState::Dcqcn(s) = self {
            s.cancel_timers();
        }
    }
}
