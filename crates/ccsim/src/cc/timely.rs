//! TIMELY sender: rate control from the RTT and its gradient, paced, no window.
//!
//! Source: Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
//! 2015 (Algorithm 1), as implemented by the HPCC ns-3 simulator (rdma-hw.cc
//! `UpdateRateTimely`), which produced the TIMELY baseline of the ACC paper (the RCC paper
//! implemented TIMELY from its algorithm); defaults are that simulator's run.py values at
//! 100 Gb/s.
//!
//! Once per RTT (an ACK whose cumulative sequence passes the `snd_nxt` recorded at the previous
//! update) the sender takes the RTT sample `rtt` = now - echoed send time and
//!   rtt_diff <- (1 - alpha) rtt_diff + alpha (rtt - prev_rtt);  gradient = rtt_diff / min_rtt
//!   rtt < t_low                : R <- R + delta
//!   rtt > t_high               : R <- R (1 - beta (1 - t_high / rtt))
//!   gradient <= 0              : R <- R + delta   (delta = rate_ai, or rate_hai after
//!                                                 `hai_after` consecutive increases)
//!   otherwise                  : R <- R max(0, 1 - beta gradient)
//! with R in [min_rate, line rate]. The first RTT only records the sample. Data packets carry
//! an 8-byte timestamp (the simulator's `IntHeader` TS mode), echoed by the ACK.
//!
//! Defaults: alpha 0.875, beta 0.8, t_low 50us, t_high 500us, min_rtt 20us, rate_ai 100Mbps
//! (10 x bw/10 Mb/s), rate_hai 500Mbps (50 x bw/10), hai_after 5, min_rate 1000Mbps.

use super::tcd::{TcdParams, Victims};
use super::{AckInfo, Params, Scheme, SchemeInfo, SenderPart, Tx};
use crate::net::Mark;
use crate::sim::quantity::{Rate, Time};
use crate::sim::input::ScenarioError;
use crate::sim::PS_PER_US;
use serde::{Deserialize, Serialize};

/// The scheme type of `timely`.
pub struct Timely;

impl Scheme for Timely {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "timely",
        description: "TIMELY as run by the HPCC ns-3 simulator: RTT-gradient rate control once per RTT (alpha 0.875, beta 0.8, T_low 50us, T_high 500us), paced; 8-byte timestamp header.",
        paper: "Mittal et al., TIMELY: RTT-based Congestion Control for the Datacenter, SIGCOMM 2015; HPCC ns-3 simulator rdma-hw.cc",
        header_bytes: TS_HEADER_BYTES,
        switch_acks_in_data_queue: true,
        ..SchemeInfo::BASE
    }];
    type Params = TimelyParams;
    type Sender = TimelySender;
    type Receiver = ();
    type Switch = ();
    fn default_params(_: &str) -> TimelyParams {
        TimelyParams::default()
    }
    fn check(_: &str, p: &TimelyParams) -> Result<(), ScenarioError> {
        match p.tcd {
            Some(_) => Err(ScenarioError::new(
                "cc.params.tcd",
                "only timely_tcd runs TCD; use scheme = \"timely_tcd\" or remove it",
            )),
            None => Ok(()),
        }
    }
}

/// Bytes of the send timestamp every data packet and ACK carries.
pub const TS_HEADER_BYTES: u32 = 8;

/// TIMELY parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyParams {
    /// EWMA weight of the newest RTT difference.
    pub alpha: f64,
    /// Multiplicative decrease factor.
    pub beta: f64,
    pub t_low: Time,
    pub t_high: Time,
    /// Normalizes the RTT gradient.
    pub min_rtt: Time,
    pub rate_ai: Rate,
    pub rate_hai: Rate,
    /// Consecutive increases before hyper-active increase.
    pub hai_after: u32,
    pub min_rate: Rate,
    /// TCD's switch parameters (`timely_tcd` only; see `cc::timely_tcd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcd: Option<TcdParams>,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams {
            alpha: 0.875,
            beta: 0.8,
            t_low: Time(50 * PS_PER_US),
            t_high: Time(500 * PS_PER_US),
            min_rtt: Time(20 * PS_PER_US),
            rate_ai: Rate(100_000_000),
            rate_hai: Rate(500_000_000),
            hai_after: 5,
            min_rate: Rate(1_000_000_000),
            tcd: None,
        }
    }
}

impl Params for TimelyParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        let e = |f: &str, m: &str| Err(ScenarioError::new(&format!("cc.params.{f}"), m));
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return e("alpha", "must be in (0, 1]");
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return e("beta", "must be in (0, 1]");
        }
        if self.min_rtt.0 == 0 {
            return e("min_rtt", "must be > 0");
        }
        if self.t_low.0 >= self.t_high.0 {
            return e("t_low", "must be below t_high");
        }
        Ok(())
    }
}

/// Per-flow TIMELY state.
#[derive(Clone, Debug, Default)]
pub struct TimelySender {
    rate_bps: f64,
    /// `snd_nxt` when the last per-RTT update ran (0: no sample yet).
    last_update_seq: u64,
    prev_rtt_ps: u64,
    rtt_diff_ps: f64,
    inc_stage: u32,
    /// TCD: the strongest mark since the last update.
    mark: Mark,
}

impl SenderPart<TimelyParams> for TimelySender {
    fn new(_: &TimelyParams) -> Self {
        TimelySender::default()
    }
    fn on_start(&mut self, _: &TimelyParams, tx: &mut Tx) {
        self.rate_bps = tx.rate_bps() as f64; // the line rate, or the flow's start_rate
    }

    fn on_ack(&mut self, p: &TimelyParams, tx: &mut Tx, ack: &AckInfo) {
        self.mark = self.mark.merge(ack.mark);
        if ack.ack_seq <= self.last_update_seq {
            return; // not a full RTT of feedback yet
        }
        let mark = std::mem::take(&mut self.mark);
        let rtt = ack.rtt_ps;
        if self.last_update_seq != 0 {
            let new_diff = rtt as f64 - self.prev_rtt_ps as f64;
            self.rtt_diff_ps = (1.0 - p.alpha) * self.rtt_diff_ps + p.alpha * new_diff;
            let gradient = self.rtt_diff_ps / p.min_rtt.0 as f64;
            let cut = if let Some(tcd) = p.tcd.as_ref().filter(|_| mark != Mark::Ce) {
                // timely_tcd: only a congested flow (CE) follows the RTT law; a victim (UE)
                // holds its rate (or increases, with `victims = "increase"`), an unmarked flow
                // increases.
                if mark == Mark::Ue && tcd.victims == Victims::Hold {
                    Some(1.0)
                } else {
                    None
                }
            } else if rtt < p.t_low.0 {
                None
            } else if rtt > p.t_high.0 {
                Some(1.0 - p.beta * (1.0 - p.t_high.0 as f64 / rtt as f64))
            } else if gradient <= 0.0 {
                None
            } else {
                Some((1.0 - p.beta * gradient).max(0.0))
            };
            match cut {
                None => {
                    let step = if self.inc_stage < p.hai_after {
                        p.rate_ai.0
                    } else {
                        p.rate_hai.0
                    };
                    self.rate_bps = (self.rate_bps + step as f64).min(tx.line_rate_bps() as f64);
                    self.inc_stage += 1;
                }
                Some(c) => {
                    self.rate_bps = (self.rate_bps * c).max(p.min_rate.0 as f64);
                    self.inc_stage = 0;
                }
            }
            tx.ctl().rate_bps = (self.rate_bps.round() as u64).max(1);
        }
        if tx.snd_nxt() > self.last_update_seq {
            self.last_update_seq = tx.snd_nxt();
            self.prev_rtt_ps = rtt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::TestFlow;
    use crate::net::{Mark, SchemeHdr};

    /// The flow sends 100 KB more, and an ACK for all of it arrives with `rtt`.
    fn ack(t: &mut TimelySender, p: &TimelyParams, f: &mut TestFlow, rtt_us: f64) {
        f.f.snd_nxt += 100_000;
        let a = AckInfo {
            nack: false,
            ack_seq: f.f.snd_nxt,
            newly_acked_bytes: 0,
            mark: Mark::None,
            rtt_ps: (rtt_us * 1e6) as u64,
            hdr: SchemeHdr::default(),
            int: &[],
            sack_seq: None,
            trimmed: false,
        };
        t.on_ack(p, &mut f.tx(0), &a);
    }

    fn flow() -> (TimelySender, TimelyParams, TestFlow) {
        let mut f = TestFlow::new(100_000_000_000);
        let p = TimelyParams::default();
        let mut t = TimelySender::default();
        t.on_start(&p, &mut f.tx(0));
        t.rate_bps = 40e9;
        f.f.ctl.rate_bps = 40_000_000_000;
        (t, p, f)
    }

    #[test]
    fn rate_falls_above_t_high_by_the_papers_factor() {
        let (mut t, p, mut f) = flow();
        ack(&mut t, &p, &mut f, 100.0); // first RTT: sample only
        assert_eq!(f.f.ctl.rate_bps, 40_000_000_000);
        ack(&mut t, &p, &mut f, 1000.0); // RTT 1 ms > T_high 500 us
        let want = 40e9 * (1.0 - 0.8 * (1.0 - 500.0 / 1000.0));
        assert!(
            (f.f.ctl.rate_bps as f64 - want).abs() < 1.0,
            "{} vs {want}",
            f.f.ctl.rate_bps
        );
    }

    #[test]
    fn rate_grows_on_negative_gradient_then_hyper_increases() {
        let (mut t, p, mut f) = flow();
        ack(&mut t, &p, &mut f, 200.0);
        let mut rtt = 200.0;
        let mut last = f.f.ctl.rate_bps;
        for round in 0..7 {
            rtt -= 5.0; // falling RTT between T_low and T_high: gradient < 0
            ack(&mut t, &p, &mut f, rtt);
            let step = if round < 5 { 100_000_000 } else { 500_000_000 };
            assert_eq!(f.f.ctl.rate_bps - last, step, "round {round}");
            last = f.f.ctl.rate_bps;
        }
        // A rising RTT (positive gradient) cuts by 1 - beta x gradient.
        let before = t.rate_bps;
        let diff = t.rtt_diff_ps;
        ack(&mut t, &p, &mut f, rtt + 10.0);
        let g = ((1.0 - p.alpha) * diff + p.alpha * 10e6) / 20e6;
        assert!(g > 0.0);
        assert!((t.rate_bps - before * (1.0 - 0.8 * g)).abs() < 1.0);
    }
}
