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

use super::{scaled_window, AckInfo, EcnDefaults, Params, Scheme, SchemeInfo, SenderPart, Tx};
use crate::net::Mark;
use crate::sim::quantity::{Rate, Size};
use crate::sim::input::ScenarioError;
use serde::{Deserialize, Serialize};

/// The scheme type of `dctcp`.
pub struct Dctcp;

impl Scheme for Dctcp {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "dctcp",
        description: "DCTCP for RDMA as run by the HPCC ns-3 simulator: ECN echo per ACK, alpha (g=1/16) once per window, cut by alpha/2 once per window, +rate_ai (615 Mb/s, the simulator's 1 MTU per 13 us RTT) once per window; BDP window scaled by rate, paced.",
        paper: "Alizadeh et al., Data Center TCP (DCTCP), SIGCOMM 2010; HPCC ns-3 simulator rdma-hw.cc",
        ecn: Some(EcnDefaults {
            kmin_bytes: 30_000,
            kmax_bytes: 30_000,
            pmax: 1.0,
            ref_rate_bps: 10_000_000_000,
        }),
        ack_priority: None,
        base_rtt: super::BaseRtt::Fabric,
        ..SchemeInfo::BASE
    }];
    type Params = DctcpParams;
    type Sender = DctcpSender;
    type Receiver = ();
    type Switch = ();
    fn default_params(_: &str) -> DctcpParams {
        DctcpParams::default()
    }
}

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

impl Params for DctcpParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ScenarioError::new("cc.params.g", "must be in (0, 1]"));
        }
        Ok(())
    }
}

/// Per-flow DCTCP state.
#[derive(Clone, Debug)]
pub struct DctcpSender {
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

impl Default for DctcpSender {
    fn default() -> Self {
        DctcpSender {
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

impl DctcpSender {
    /// Current alpha (tests, probes).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    fn apply(&self, tx: &mut Tx) {
        let line = tx.line_rate_bps();
        let ctl = tx.ctl();
        ctl.rate_bps = (self.rate_bps.round() as u64).max(1);
        ctl.window_bytes = scaled_window(self.window_bytes, ctl.rate_bps, line);
    }
}

impl SenderPart<DctcpParams> for DctcpSender {
    fn new(_: &DctcpParams) -> Self {
        DctcpSender::default()
    }

    fn on_start(&mut self, p: &DctcpParams, tx: &mut Tx) {
        self.rate_bps = tx.rate_bps() as f64; // the line rate, or the flow's start_rate
        self.window_bytes = super::base_window_bytes(p.base_window, tx);
        self.apply(tx);
    }

    fn on_ack(&mut self, p: &DctcpParams, tx: &mut Tx, ack: &AckInfo) {
        let mtu = tx.mtu_payload_bytes();
        let snd_nxt = tx.snd_nxt();
        let ce = ack.mark == Mark::Ce;
        self.marks += ce as u64;
        let new_window = ack.ack_seq > self.last_update_seq;
        if new_window {
            if self.last_update_seq == 0 {
                self.window_pkts = snd_nxt / mtu + 1;
            } else {
                let frac = (self.marks as f64 / self.window_pkts as f64).min(1.0);
                self.alpha = (1.0 - p.g) * self.alpha + p.g * frac;
                self.marks = 0;
                self.window_pkts = (snd_nxt - ack.ack_seq) / mtu + 1;
            }
            self.last_update_seq = snd_nxt;
        }
        if self.in_cwr && ack.ack_seq > self.cwr_until_seq {
            self.in_cwr = false;
        }
        if ce && !self.in_cwr {
            self.rate_bps = (self.rate_bps * (1.0 - self.alpha / 2.0)).max(p.min_rate.0 as f64);
            self.in_cwr = true;
            self.cwr_until_seq = snd_nxt;
        }
        if !self.in_cwr && new_window {
            self.rate_bps = (self.rate_bps + p.rate_ai.0 as f64).min(tx.line_rate_bps() as f64);
        }
        self.apply(tx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_tracks_the_marked_fraction() {
        // Windows of 20 packets, 6 of them marked (30%): alpha -> 0.3 with g = 1/16.
        let p = DctcpParams::default();
        let mut f = crate::cc::TestFlow::new(100_000_000_000);
        f.f.base_rtt_ps = 8_000_000; // 8 us at 100 Gb/s: a 100 KB BDP
        let mut d = DctcpSender::default();
        d.on_start(&p, &mut f.tx(0));
        let mut acked = 0u64;
        for _ in 0..300 {
            f.f.snd_nxt = acked + 20_000;
            for k in 0..20u64 {
                acked += 1000;
                let a = AckInfo {
                    nack: false,
                    ack_seq: acked,
                    newly_acked_bytes: 1000,
                    mark: if k % 10 < 3 { Mark::Ce } else { Mark::None },
                    rtt_ps: 0,
                    hdr: Default::default(),
                    int: &[],
                    sack_seq: None,
                    trimmed: false,
                };
                d.on_ack(&p, &mut f.tx(0), &a);
            }
        }
        assert!((d.alpha() - 0.3).abs() < 0.01, "alpha {}", d.alpha());
        // The window follows the rate: base window x rate / line rate.
        assert_eq!(
            f.f.ctl.window_bytes,
            (100_000 * f.f.ctl.rate_bps as u128 / 100_000_000_000) as u64
        );
    }
}
