//! DCTCP for the RDMA transport, as the HPCC ns-3 simulator runs it: ECN-fraction congestion
//! estimate alpha, one cut per window, additive increase once per RTT.
//!
//! Source: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, in the form of the HPCC
//! ns-3 simulator (rdma-hw.cc `HandleAckDctcp`; run.py `dctcp`), the DCTCP baseline of the
//! HPCC-simulator papers. Switches mark CE when the egress queue exceeds K at dequeue (K = 30 KB
//! per 10 Gb/s of port rate, marking probability 1); the receiver echoes CE on every ACK.
//!
//! Sender, per ACK: count echoed marks. When the cumulative ACK passes the `snd_nxt` recorded
//! at the last alpha update (one window of feedback):
//!   alpha <- (1 - g) alpha + g min(1, marks / packets of that window); reset the count.
//! On a marked ACK outside CWR: R <- max(min_rate, R (1 - alpha/2)) and enter CWR until the ACK
//! passes the `snd_nxt` at the cut. Once per window outside CWR: R <- min(line, R + rate_ai).
//! The window is the base window (fabric BDP by default) scaled by R / line rate, and packets
//! are paced at R, as the simulator's `has_win = 1, var_win = 1`.
//!
//! Defaults: g = 1/16, alpha starts at 1, rate_ai 615 Mb/s (the simulator's "1 MTU per 13 us
//! RTT"), min_rate 1000 Mb/s, base_window 0 = the fabric's BDP (longest base RTT x line rate).

use super::{scaled_window, AckInfo};
use crate::scenario::units::{Rate, Size};
use crate::scenario::ScenarioError;
use crate::transport::Flow;
use serde::{Deserialize, Serialize};

/// DCTCP parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// EWMA gain of alpha.
    pub g: f64,
    pub rate_ai: Rate,
    pub min_rate: Rate,
    /// Window at line rate; 0 = the fabric's bandwidth-delay product.
    pub base_window: Size,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            g: 1.0 / 16.0,
            rate_ai: Rate(615_000_000),
            min_rate: Rate(1_000_000_000),
            base_window: Size(0),
        }
    }
}

impl DctcpParams {
    pub(super) fn validate(&self) -> Result<(), ScenarioError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ScenarioError::new("cc.params.g", "must be in (0, 1]"));
        }
        Ok(())
    }
}

/// Per-flow DCTCP state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    alpha: f64,
    rate_bps: f64,
    window_bytes: u64,
    /// `snd_nxt` at the last alpha update (0: none yet).
    last_update_seq: u64,
    marks: u64,
    /// Packets in the window whose marks are being counted.
    window_pkts: u64,
    in_cwr: bool,
    cwr_until_seq: u64,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp {
            alpha: 1.0,
            rate_bps: 0.0,
            window_bytes: 0,
            last_update_seq: 0,
            marks: 0,
            window_pkts: 0,
            in_cwr: false,
            cwr_until_seq: 0,
        }
    }
}

impl Dctcp {
    /// Current alpha (tests, probes).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub(super) fn on_start(&mut self, p: &DctcpParams, f: &mut Flow) {
        self.rate_bps = f.line_rate_bps as f64;
        self.window_bytes = super::base_window_bytes(p.base_window, f);
        self.apply(f);
    }

    fn apply(&self, f: &mut Flow) {
        f.rate_bps = (self.rate_bps.round() as u64).max(1);
        f.window_bytes = scaled_window(self.window_bytes, f.rate_bps, f.line_rate_bps);
    }

    pub(super) fn on_ack(&mut self, p: &DctcpParams, f: &mut Flow, ack: &AckInfo) {
        let mtu = f.mtu_payload_bytes;
        self.marks += ack.ce_echo as u64;
        let new_window = ack.ack_seq > self.last_update_seq;
        if new_window {
            if self.last_update_seq == 0 {
                self.window_pkts = f.snd_nxt / mtu + 1;
            } else {
                let frac = (self.marks as f64 / self.window_pkts as f64).min(1.0);
                self.alpha = (1.0 - p.g) * self.alpha + p.g * frac;
                self.marks = 0;
                self.window_pkts = (f.snd_nxt - ack.ack_seq) / mtu + 1;
            }
            self.last_update_seq = f.snd_nxt;
        }
        if self.in_cwr && ack.ack_seq > self.cwr_until_seq {
            self.in_cwr = false;
        }
        if ack.ce_echo && !self.in_cwr {
            self.rate_bps = (self.rate_bps * (1.0 - self.alpha / 2.0)).max(p.min_rate.0 as f64);
            self.in_cwr = true;
            self.cwr_until_seq = f.snd_nxt;
        }
        if !self.in_cwr && new_window {
            self.rate_bps = (self.rate_bps + p.rate_ai.0 as f64).min(f.line_rate_bps as f64);
        }
        self.apply(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_tracks_the_marked_fraction() {
        // Windows of 20 packets, 6 of them marked (30%): alpha -> 0.3 with g = 1/16.
        let p = DctcpParams::default();
        let mut f = Flow::new(0, 1, None, 0, None);
        f.line_rate_bps = 100_000_000_000;
        f.mtu_payload_bytes = 1000;
        f.base_rtt_ps = 8_000_000; // 8 us at 100 Gb/s: a 100 KB BDP
        let mut d = Dctcp::default();
        d.on_start(&p, &mut f);
        let mut acked = 0u64;
        for _ in 0..300 {
            f.snd_nxt = acked + 20_000;
            for k in 0..20u64 {
                acked += 1000;
                let a = AckInfo {
                    ack_seq: acked,
                    newly_acked_bytes: 1000,
                    ce_echo: k % 10 < 3,
                    rtt_ps: 0,
                    int: &[],
                };
                d.on_ack(&p, &mut f, &a);
            }
        }
        assert!((d.alpha() - 0.3).abs() < 0.01, "alpha {}", d.alpha());
        // The window follows the rate: base window x rate / line rate.
        assert_eq!(
            f.window_bytes,
            (100_000 * f.rate_bps as u128 / 100_000_000_000) as u64
        );
    }
}
