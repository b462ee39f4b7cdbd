//! TIMELY sender: rate control from the RTT and its gradient, paced, no window.
//!
//! Source: Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
//! 2015 (Algorithm 1), as implemented by the HPCC ns-3 simulator (rdma-hw.cc
//! `UpdateRateTimely`), which produced the TIMELY baseline of the ACC and RCC papers; defaults
//! are that simulator's run.py values at 100 Gb/s.
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

use super::AckInfo;
use crate::scenario::units::{Rate, Time};
use crate::scenario::ScenarioError;
use crate::sim::PS_PER_US;
use crate::transport::Flow;
use serde::{Deserialize, Serialize};

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
        }
    }
}

impl TimelyParams {
    pub(super) fn validate(&self) -> Result<(), ScenarioError> {
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
pub struct Timely {
    rate_bps: f64,
    /// `snd_nxt` when the last per-RTT update ran (0: no sample yet).
    last_update_seq: u64,
    prev_rtt_ps: u64,
    rtt_diff_ps: f64,
    inc_stage: u32,
}

impl Timely {
    pub(super) fn on_start(&mut self, f: &Flow) {
        self.rate_bps = f.line_rate_bps as f64;
    }

    pub(super) fn on_ack(&mut self, p: &TimelyParams, f: &mut Flow, ack: &AckInfo) {
        if ack.ack_seq <= self.last_update_seq {
            return; // not a full RTT of feedback yet
        }
        let rtt = ack.rtt_ps;
        if self.last_update_seq != 0 {
            let new_diff = rtt as f64 - self.prev_rtt_ps as f64;
            self.rtt_diff_ps = (1.0 - p.alpha) * self.rtt_diff_ps + p.alpha * new_diff;
            let gradient = self.rtt_diff_ps / p.min_rtt.0 as f64;
            let cut = if rtt < p.t_low.0 {
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
                    self.rate_bps = (self.rate_bps + step as f64).min(f.line_rate_bps as f64);
                    self.inc_stage += 1;
                }
                Some(c) => {
                    self.rate_bps = (self.rate_bps * c).max(p.min_rate.0 as f64);
                    self.inc_stage = 0;
                }
            }
            f.rate_bps = (self.rate_bps.round() as u64).max(1);
        }
        if f.snd_nxt > self.last_update_seq {
            self.last_update_seq = f.snd_nxt;
            self.prev_rtt_ps = rtt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow at `rate` that has sent `snd_nxt` bytes, and an ACK for all of them with `rtt`.
    fn ack(t: &mut Timely, p: &TimelyParams, f: &mut Flow, rtt_us: f64) {
        f.snd_nxt += 100_000;
        let a = AckInfo {
            ack_seq: f.snd_nxt,
            newly_acked_bytes: 0,
            ce_echo: false,
            rtt_ps: (rtt_us * 1e6) as u64,
            int: &[],
        };
        t.on_ack(p, f, &a);
    }

    fn flow() -> (Timely, TimelyParams, Flow) {
        let mut f = Flow::new(0, 1, None, 0, None);
        f.line_rate_bps = 100_000_000_000;
        let mut t = Timely::default();
        t.on_start(&f);
        t.rate_bps = 40e9;
        f.rate_bps = 40_000_000_000;
        (t, TimelyParams::default(), f)
    }

    #[test]
    fn rate_falls_above_t_high_by_the_papers_factor() {
        let (mut t, p, mut f) = flow();
        ack(&mut t, &p, &mut f, 100.0); // first RTT: sample only
        assert_eq!(f.rate_bps, 40_000_000_000);
        ack(&mut t, &p, &mut f, 1000.0); // RTT 1 ms > T_high 500 us
        let want = 40e9 * (1.0 - 0.8 * (1.0 - 500.0 / 1000.0));
        assert!(
            (f.rate_bps as f64 - want).abs() < 1.0,
            "{} vs {want}",
            f.rate_bps
        );
    }

    #[test]
    fn rate_grows_on_negative_gradient_then_hyper_increases() {
        let (mut t, p, mut f) = flow();
        ack(&mut t, &p, &mut f, 200.0);
        let mut rtt = 200.0;
        let mut last = f.rate_bps;
        for round in 0..7 {
            rtt -= 5.0; // falling RTT between T_low and T_high: gradient < 0
            ack(&mut t, &p, &mut f, rtt);
            let step = if round < 5 { 100_000_000 } else { 500_000_000 };
            assert_eq!(f.rate_bps - last, step, "round {round}");
            last = f.rate_bps;
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
