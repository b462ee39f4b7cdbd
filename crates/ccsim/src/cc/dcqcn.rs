//! DCQCN reaction point (sender) and notification point (receiver).
//!
//! What it does: on congestion notification the sender cuts its rate by alpha/2 (alpha = EWMA
//! of the marked fraction), then recovers in stages: fast recovery toward the target rate,
//! additive increase, hyper increase.
//!
//! Two models, one file:
//! * `dcqcn` — the Mellanox model of the HPCC ns-3 simulator (rdma-hw.cc `*Mlx` functions, the
//!   baseline the ACC paper ran; defaults from its run.py at 100 Gb/s): every ACK echoes
//!   CE; a CNP sets flags; alpha is updated every `alpha_timer` (1 us), the rate is cut at most
//!   once per `rate_decrease_interval` (4 us, checked 1 ns after the alpha tick), and the
//!   increase timer (300 us) drives fast recovery (F = 1), one additive step, then hyper steps.
//!   No byte counter. The periodic alpha and decrease timers are evaluated lazily on their exact
//!   time grids (identical results, no per-microsecond events).
//! * `dcqcn_paper` — the reaction point of Zhu et al., SIGCOMM 2015, section 3: the NP sends a
//!   CNP at most once per 50 us per flow; on a CNP the RP sets target = rate, cuts the rate by
//!   alpha/2 and raises alpha; alpha decays by (1-g) per 55 us without CNP; increase events come
//!   from a 55 us timer (count T) and a 10 MB byte counter (count BC): fast recovery while
//!   max(T, BC) < F = 5, hyper increase by (min(T, BC) - F) x R_HAI once both exceed F,
//!   additive increase otherwise.
//!
//! * `dcqcn_ns3rdma` — `dcqcn_paper`'s model with the values of the DCQCN authors' ns-3 code
//!   (github.com/bobzhuyb/ns3-rdma, `mix/config.txt`), the "open project for DCQCN" the PCN
//!   paper's simulator was built on and the "open-source code of DCQCN" the RCC paper ran:
//!   RP_TIMER 60 us, BYTE_COUNTER 300 MB, ECN KMIN 40 and KMAX 1000 cells of 1030 B (41.2 KB,
//!   1.03 MB) with PMAX 1.0 on its 40 Gb/s links; the rest as `dcqcn_paper` (CNP 50 us, alpha
//!   55 us, F = 5, R_AI 40 Mb/s, R_HAI 200 Mb/s, min rate 100 Mb/s, clamped target, g = 1/256).
//!   ns3-rdma keeps one threshold for every port; ccsim scales them with the port's rate from
//!   40 Gb/s, as it does for every scheme.
//!
//! Parameters (defaults `dcqcn` / `dcqcn_paper`): g = 1/256; alpha_timer 1us / 55us;
//! rate_decrease_interval 4us / 0 (immediate); rate_increase_timer 300us / 55us;
//! fast_recovery_steps 1 / 5; rate_ai 20Mbps / 40Mbps; rate_hai 200Mbps / 200Mbps;
//! min_rate 1000Mbps / 100Mbps; clamp_target_rate false / true; rate_on_first_cnp 1.0;
//! byte_counter 0 (off) / 10MB; cnp_interval 0 (echo on ACK) / 50us.
//! The HPCC simulator scales R_AI = 5 x bw/25 Mb/s and R_HAI = 50 x bw/25 Mb/s with the NIC
//! rate bw (Gb/s); the defaults are its values at 100 Gb/s.

use super::tcd::{TcdParams, Victims};
use super::{
    AckInfo, CtrlInfo, DataOut, EcnDefaults, Params, ReceiverPart, Scheme, SchemeInfo, SenderPart,
    Tx,
};
use crate::net::{Mark, SchemeHdr};
use crate::sim::quantity::{Rate, Size, Time};
use crate::sim::{PS_PER_NS, PS_PER_US};
use serde::{Deserialize, Serialize};

/// The scheme type of `dcqcn`, `dcqcn_paper` and `dcqcn_ns3rdma`.
pub struct Dcqcn;

impl Scheme for Dcqcn {
    const SCHEMES: &'static [SchemeInfo] = &[
        SchemeInfo {
            name: "dcqcn",
            description: "DCQCN as modelled by the HPCC ns-3 simulator (Mellanox timers: alpha 1us, decrease 4us, increase 300us; CE echoed on every ACK).",
            paper: "Zhu et al., Congestion Control for Large-Scale RDMA Deployments, SIGCOMM 2015; HPCC ns-3 simulator rdma-hw.cc",
            ecn: Some(super::DEFAULT_ECN),
            switch_acks_in_data_queue: true,
            ..SchemeInfo::BASE
        },
        SchemeInfo {
            name: "dcqcn_paper",
            description: "DCQCN with the paper's reaction point: 55us alpha/increase timers, 10MB byte counter, F=5, CNP at most once per 50us per flow.",
            paper: "Zhu et al., Congestion Control for Large-Scale RDMA Deployments, SIGCOMM 2015",
            ecn: Some(EcnDefaults {
                kmin_bytes: 5_000,
                kmax_bytes: 200_000,
                pmax: 0.01,
                ref_rate_bps: 40_000_000_000,
            }),
            switch_acks_in_data_queue: true,
            ..SchemeInfo::BASE
        },
        SchemeInfo {
            name: "dcqcn_ns3rdma",
            description: "DCQCN as the DCQCN authors' ns-3 code (ns3-rdma) configures it: the paper's reaction point with a 60us increase timer and a 300MB byte counter; ECN 41.2KB-1.03MB, Pmax 1.0 at 40G.",
            paper: "Zhu et al., Congestion Control for Large-Scale RDMA Deployments, SIGCOMM 2015; ns3-rdma mix/config.txt",
            ecn: Some(EcnDefaults {
                kmin_bytes: 40 * 1030,
                kmax_bytes: 1000 * 1030,
                pmax: 1.0,
                ref_rate_bps: 40_000_000_000,
            }),
            switch_acks_in_data_queue: true,
            ..SchemeInfo::BASE
        },
    ];
    type Params = DcqcnParams;
    type Sender = DcqcnRp;
    type Receiver = DcqcnNp;
    type Switch = ();
    fn default_params(name: &str) -> DcqcnParams {
        if name == "dcqcn_paper" {
            DcqcnParams::paper()
        } else if name == "dcqcn_ns3rdma" {
            DcqcnParams::ns3_rdma()
        } else {
            DcqcnParams::hpcc_sim()
        }
    }
    fn check(_: &str, p: &DcqcnParams) -> Result<(), crate::sim::input::ScenarioError> {
        match p.tcd {
            Some(_) => Err(crate::sim::input::ScenarioError::new(
                "cc.params.tcd",
                "only dcqcn_tcd runs TCD; use scheme = \"dcqcn_tcd\" or remove it",
            )),
            None => Ok(()),
        }
    }
}

/// Control code of a CNP.
pub const CNP: u8 = 1;

/// DCQCN parameters (see the module header for defaults and sources).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnParams {
    /// "mlx" (HPCC simulator) or "paper" (Zhu et al.) reaction-point model.
    pub model: Model,
    /// EWMA gain of alpha.
    pub g: f64,
    pub alpha_timer: Time,
    /// Minimum spacing of rate cuts (mlx model); 0 = cut on every CNP (paper model).
    pub rate_decrease_interval: Time,
    pub rate_increase_timer: Time,
    pub fast_recovery_steps: u32,
    pub rate_ai: Rate,
    pub rate_hai: Rate,
    pub min_rate: Rate,
    pub clamp_target_rate: bool,
    pub rate_on_first_cnp: f64,
    /// Byte counter B (paper model); 0 disables it.
    pub byte_counter: Size,
    /// Receiver: standalone CNP at most once per interval; 0 = echo CE on every ACK.
    pub cnp_interval: Time,
    /// TCD's switch parameters (`dcqcn_tcd` only; see `cc::dcqcn_tcd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcd: Option<TcdParams>,
}

/// Which reaction-point model.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    Mlx,
    Paper,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        Self::hpcc_sim()
    }
}

impl DcqcnParams {
    /// The HPCC ns-3 simulator's `dcqcn` settings at 100 Gb/s.
    pub fn hpcc_sim() -> Self {
        DcqcnParams {
            model: Model::Mlx,
            g: 1.0 / 256.0,
            alpha_timer: Time(PS_PER_US),
            rate_decrease_interval: Time(4 * PS_PER_US),
            rate_increase_timer: Time(300 * PS_PER_US),
            fast_recovery_steps: 1,
            rate_ai: Rate(20_000_000),
            rate_hai: Rate(200_000_000),
            min_rate: Rate(1_000_000_000),
            clamp_target_rate: false,
            rate_on_first_cnp: 1.0,
            byte_counter: Size(0),
            cnp_interval: Time(0),
            tcd: None,
        }
    }

    /// The DCQCN paper's reaction and notification points.
    pub fn paper() -> Self {
        DcqcnParams {
            model: Model::Paper,
            g: 1.0 / 256.0,
            alpha_timer: Time(55 * PS_PER_US),
            rate_decrease_interval: Time(0),
            rate_increase_timer: Time(55 * PS_PER_US),
            fast_recovery_steps: 5,
            rate_ai: Rate(40_000_000),
            rate_hai: Rate(200_000_000),
            min_rate: Rate(100_000_000),
            clamp_target_rate: true,
            rate_on_first_cnp: 1.0,
            byte_counter: Size(10_000_000),
            cnp_interval: Time(50 * PS_PER_US),
            tcd: None,
        }
    }
}

impl DcqcnParams {
    /// ns3-rdma's `mix/config.txt`: the paper's model, RP_TIMER 60 us, BYTE_COUNTER 300 MB.
    pub fn ns3_rdma() -> Self {
        DcqcnParams {
            rate_increase_timer: Time(60 * PS_PER_US),
            byte_counter: Size(300_000_000),
            ..Self::paper()
        }
    }
}

impl Params for DcqcnParams {
    fn validate(&self) -> Result<(), crate::sim::input::ScenarioError> {
        let e = |f: &str, m: &str| {
            Err(crate::sim::input::ScenarioError::new(
                &format!("cc.params.{f}"),
                m,
            ))
        };
        if !(self.g > 0.0 && self.g <= 1.0) {
            return e("g", "must be in (0, 1]");
        }
        if self.alpha_timer.0 == 0 {
            return e("alpha_timer", "must be > 0");
        }
        if self.rate_increase_timer.0 == 0 {
            return e("rate_increase_timer", "must be > 0");
        }
        if self.model == Model::Mlx && self.rate_decrease_interval.0 == 0 {
            return e("rate_decrease_interval", "must be > 0 for the mlx model");
        }
        if !(self.rate_on_first_cnp > 0.0 && self.rate_on_first_cnp <= 1.0) {
            return e("rate_on_first_cnp", "must be in (0, 1]");
        }
        Ok(())
    }
}

const TIMER_DECREASE: u8 = 0;
const TIMER_INCREASE: u8 = 1;

/// Notification point (receiver), per flow: with `cnp_interval` > 0, a CNP at most once per
/// interval for an in-order CE-marked packet; otherwise CE rides on every ACK (the transport's
/// mark echo) and no CNP is sent.
#[derive(Clone, Debug, Default)]
pub struct DcqcnNp {
    last_cnp_ps: Option<u64>,
}

impl ReceiverPart<DcqcnParams> for DcqcnNp {
    type Host = ();
    fn new(_: &DcqcnParams) -> Self {
        DcqcnNp::default()
    }
    /// Only the paper's notification point sends CNPs; the mlx model echoes CE on ACKs.
    fn active(p: &DcqcnParams) -> bool {
        p.cnp_interval.0 > 0
    }
    fn on_data(&mut self, _: &mut (), p: &DcqcnParams, rx: &mut super::Rx, d: &super::DataInfo) {
        let gap = p.cnp_interval.0;
        let now = rx.now_ps;
        // With TCD a UE mark is fed back too (the CNP carries the mark).
        let feedback = d.mark == Mark::Ce || (d.mark == Mark::Ue && p.tcd.is_some());
        if gap > 0 && d.in_order && feedback && self.last_cnp_ps.is_none_or(|t| now >= t + gap) {
            self.last_cnp_ps = Some(now);
            rx.send_ctrl(CNP, SchemeHdr::default(), d.mark);
        }
    }
}

/// Reaction point (sender), per flow.
#[derive(Clone, Debug)]
pub struct DcqcnRp {
    rate_bps: f64,
    target_bps: f64,
    line_bps: f64,
    alpha: f64,
    seen_cnp: bool,
    /// mlx: origin of the alpha / decrease timer grids (time of the first CNP).
    grid_t0_ps: u64,
    alpha_ticks_done: u64,
    alpha_flag: bool,
    decrease_flag: bool,
    /// paper: time alpha was last updated (decay reference).
    alpha_ref_ps: u64,
    stage_timer: u32,
    stage_bytes: u32,
    bytes_since: u64,
    /// TCD: a UE mark arrived since the last increase event, which it cancels.
    ue_hold: bool,
}

impl SenderPart<DcqcnParams> for DcqcnRp {
    fn new(_p: &DcqcnParams) -> Self {
        DcqcnRp::fresh()
    }
    fn on_start(&mut self, _: &DcqcnParams, tx: &mut Tx) {
        self.line_bps = tx.line_rate_bps() as f64;
        self.rate_bps = tx.rate_bps() as f64; // the line rate, or the flow's start_rate
        self.target_bps = self.rate_bps;
    }
    fn on_ack(&mut self, p: &DcqcnParams, tx: &mut Tx, ack: &AckInfo) {
        if p.cnp_interval.0 == 0 {
            self.on_mark(p, tx, ack.mark);
        }
    }
    fn on_ctrl(&mut self, p: &DcqcnParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code == CNP {
            self.on_mark(p, tx, c.mark);
        }
    }
    fn on_send(&mut self, p: &DcqcnParams, tx: &mut Tx, d: &mut DataOut) {
        let bytes = d.size_bytes as u64;
        if p.model != Model::Paper || p.byte_counter.0 == 0 || !self.seen_cnp {
            return;
        }
        self.bytes_since += bytes;
        while self.bytes_since >= p.byte_counter.0 {
            self.bytes_since -= p.byte_counter.0;
            if !std::mem::take(&mut self.ue_hold) {
                self.increase(p);
            }
            self.stage_bytes += 1;
        }
        self.apply(tx);
    }
    fn on_timer(&mut self, p: &DcqcnParams, tx: &mut Tx, kind: u8) {
        let now = tx.now_ps;
        match kind {
            TIMER_DECREASE => {
                self.catch_up_alpha(p, now);
                if self.decrease_flag {
                    if p.clamp_target_rate || self.stage_timer != 0 {
                        self.target_bps = self.rate_bps;
                    }
                    self.decrease_flag = false;
                    self.cut(p, tx);
                }
            }
            TIMER_INCREASE => {
                if !std::mem::take(&mut self.ue_hold) {
                    self.increase(p);
                }
                self.stage_timer += 1;
                self.apply(tx);
                // At line rate with the target at line rate, further increases change nothing:
                // stop the timer until the next decrease restarts it.
                if self.target_bps >= self.line_bps && self.line_bps - self.rate_bps < 1.0 {
                    self.rate_bps = self.line_bps;
                    self.apply(tx);
                } else {
                    tx.set_timer(TIMER_INCREASE, now + p.rate_increase_timer.0);
                }
            }
            _ => {}
        }
    }
}

impl DcqcnRp {
    /// Initial state: alpha = 1 (rate and target are set to line rate at start).
    fn fresh() -> Self {
        DcqcnRp {
            rate_bps: 0.0,
            target_bps: 0.0,
            line_bps: 0.0,
            alpha: 1.0,
            seen_cnp: false,
            grid_t0_ps: 0,
            alpha_ticks_done: 0,
            alpha_flag: false,
            decrease_flag: false,
            alpha_ref_ps: 0,
            stage_timer: 0,
            stage_bytes: 0,
            bytes_since: 0,
            ue_hold: false,
        }
    }

    /// Current alpha (for tests and probes).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    fn apply(&self, tx: &mut Tx) {
        tx.ctl().rate_bps = (self.rate_bps.round() as u64).max(1);
    }

    /// mlx: run the alpha ticks of the grid t0 + k x T_alpha (k >= 1) that are due by `now`.
    fn catch_up_alpha(&mut self, p: &DcqcnParams, now_ps: u64) {
        let due = (now_ps - self.grid_t0_ps) / p.alpha_timer.0;
        let n = due.saturating_sub(self.alpha_ticks_done);
        if n > 0 {
            let keep = 1.0 - p.g;
            self.alpha = if self.alpha_flag {
                keep * self.alpha + p.g
            } else {
                keep * self.alpha
            };
            self.alpha_flag = false;
            if n > 1 {
                self.alpha *= keep.powi((n - 1).min(i32::MAX as u64) as i32);
            }
            self.alpha_ticks_done = due;
        }
    }

    /// Feedback carrying `mark`: CE is a congestion notification; with TCD, UE holds the rate
    /// through the next increase event.
    fn on_mark(&mut self, p: &DcqcnParams, tx: &mut Tx, mark: Mark) {
        match mark {
            Mark::Ce => self.on_cnp(p, tx),
            Mark::Ue if p.tcd.as_ref().is_some_and(|t| t.victims == Victims::Hold) => {
                self.ue_hold = true
            }
            _ => {}
        }
    }

    /// A congestion notification: a CNP, or (mlx) an ACK echoing CE.
    pub fn on_cnp(&mut self, p: &DcqcnParams, tx: &mut Tx) {
        let now = tx.now_ps;
        match p.model {
            Model::Mlx => {
                if !self.seen_cnp {
                    self.seen_cnp = true;
                    self.alpha = 1.0;
                    self.alpha_flag = false;
                    self.grid_t0_ps = now;
                    self.alpha_ticks_done = 0;
                    self.rate_bps *= p.rate_on_first_cnp;
                    self.target_bps = self.rate_bps;
                    self.decrease_flag = true;
                    self.apply(tx);
                    tx.set_timer(TIMER_DECREASE, now + p.rate_decrease_interval.0 + PS_PER_NS);
                    return;
                }
                self.catch_up_alpha(p, now);
                self.alpha_flag = true;
                if !self.decrease_flag {
                    self.decrease_flag = true;
                    // Next decrease check on the grid t0 + 1ns + k x T_dec strictly after now.
                    let base = self.grid_t0_ps + PS_PER_NS;
                    let k = (now - base) / p.rate_decrease_interval.0 + 1;
                    tx.set_timer(TIMER_DECREASE, base + k * p.rate_decrease_interval.0);
                }
            }
            Model::Paper => {
                if self.seen_cnp {
                    let n = (now - self.alpha_ref_ps) / p.alpha_timer.0;
                    self.alpha *= (1.0 - p.g).powi(n.min(i32::MAX as u64) as i32);
                }
                self.seen_cnp = true;
                self.target_bps = self.rate_bps;
                self.cut(p, tx); // with the alpha before this CNP's update
                self.alpha = (1.0 - p.g) * self.alpha + p.g;
                self.alpha_ref_ps = now;
            }
        }
    }

    /// The rate cut of both models: R <- max(R_min, R x (1 - alpha/2)); the increase stages
    /// restart and so does the increase timer.
    fn cut(&mut self, p: &DcqcnParams, tx: &mut Tx) {
        self.rate_bps = (self.rate_bps * (1.0 - self.alpha / 2.0)).max(p.min_rate.0 as f64);
        self.stage_timer = 0;
        self.stage_bytes = 0;
        self.bytes_since = 0;
        tx.set_timer(TIMER_INCREASE, tx.now_ps + p.rate_increase_timer.0);
        self.apply(tx);
    }

    /// One rate-increase event, staged by the counters before this event.
    fn increase(&mut self, p: &DcqcnParams) {
        let fr = p.fast_recovery_steps;
        match p.model {
            Model::Mlx => {
                if self.stage_timer < fr {
                } else if self.stage_timer == fr {
                    self.target_bps += p.rate_ai.0 as f64;
                } else {
                    self.target_bps += p.rate_hai.0 as f64;
                }
            }
            Model::Paper => {
                // Without a byte counter the timer count stands for both counts.
                let bc = if p.byte_counter.0 > 0 {
                    self.stage_bytes
                } else {
                    self.stage_timer
                };
                self.target_bps += super::qcn::target_step(
                    self.stage_timer,
                    bc,
                    fr,
                    p.rate_ai.0 as f64,
                    p.rate_hai.0 as f64,
                );
            }
        }
        self.target_bps = self.target_bps.min(self.line_bps);
        self.rate_bps = (self.rate_bps + self.target_bps) / 2.0;
    }
}
