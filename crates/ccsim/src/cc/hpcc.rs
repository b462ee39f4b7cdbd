//! HPCC sender: window and rate from in-band network telemetry (INT).
//!
//! Source: Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019 (Algorithm 1), as
//! implemented by the HPCC ns-3 simulator (rdma-hw.cc `UpdateRateHp`, `MULTI_RATE 0`,
//! `SAMPLE_FEEDBACK 0`, `FAST_REACT 1`; switch-node.cc `SwitchNotifyDequeue`), the HPCC baseline
//! of the ACC and RCC papers. The switch half (one `IntHop` per egress port as a data packet
//! leaves it: time, bytes sent so far, queue length, link rate) lives in `engine::switch`.
//!
//! Per ACK, for every hop i with records from this and the previous ACK (tau = time delta):
//!   u_i = tx_rate_i / B_i + min(qlen_i, prev_qlen_i) / (B_i T)      (normalized inflight)
//! U = the largest u_i; with tau its time delta capped at T, the EWMA
//!   u <- (u (T - tau) + U tau) / T.
//! With the reference rate Rc (the window Wc = Rc T, T = base RTT):
//!   u / eta >= 1 or inc_stage >= max_stage : R = Rc / (u / eta) + rate_ai, inc_stage <- 0
//!   otherwise                              : R = Rc + rate_ai,           inc_stage + 1
//! bounded to [min_rate, line rate]. Every ACK sets R (fast reaction); only an ACK that passes
//! the `snd_nxt` recorded at the last reference update (once per RTT) stores Rc <- R and the
//! new stage. The window is W = base window x R / line rate and packets are paced at R (the
//! pacing clock is shifted by the rate change, as the simulator's `ChangeRate`). T and the base
//! window are the fabric's longest base RTT and its BDP (the simulator's `GLOBAL_T 1`). Data
//! packets and ACKs carry a 42-byte INT header (the simulator's fixed 5-hop `IntHeader`).
//!
//! Defaults: eta 0.95, max_stage 5 (the paper; the simulator's run.py passes MI_THRESH 0),
//! rate_ai 40 Mb/s (run.py: 10 x bw/25 Mb/s at 100 Gb/s), min_rate 1000 Mb/s. INT records are
//! exact; `int_multi` = N > 0 encodes them as the simulator's `IntHop` with `INT_MULTI N` does:
//! bytes sent in units of 128 N, queue length in units of 80 N (both cut down), time in whole
//! ns. (Its 20-bit and 24-bit counters wrap, which its deltas undo: not modelled, no effect.)

use super::{AckInfo, DataOut, Params, Scheme, SchemeInfo, SenderPart, Sw, SwitchPart, Tx};
use crate::net::{IntHop, Packet, PktKind, Port, MAX_INT_HOPS};
use crate::sim::quantity::{Rate, Size};
use crate::sim::input::ScenarioError;
use serde::{Deserialize, Serialize};

/// The scheme type of `hpcc`.
pub struct Hpcc;

impl Scheme for Hpcc {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "hpcc",
        description: "HPCC: per-hop INT (queue, tx bytes, time, rate) at switch egress; per-ACK window from the max normalized inflight, reference window once per RTT (eta 0.95, maxStage 5); window + pacing.",
        paper: "Li et al., HPCC: High Precision Congestion Control, SIGCOMM 2019; HPCC ns-3 simulator rdma-hw.cc",
        ack_priority: None,
        header_bytes: INT_HEADER_BYTES,
        base_rtt: super::BaseRtt::Fabric,
        int: true,
        ..SchemeInfo::BASE
    }];
    type Params = HpccParams;
    type Sender = HpccSender;
    type Receiver = ();
    type Switch = IntStamp;
    fn default_params(_: &str) -> HpccParams {
        HpccParams::default()
    }
}

/// Switch part: an INT record per egress port as a data packet leaves it (the simulator's
/// `SwitchNotifyDequeue`): time, bytes the port sent before it, queue after it left (all
/// priorities), link rate.
#[derive(Clone, Copy, Debug)]
pub struct IntStamp;

impl SwitchPart<HpccParams> for IntStamp {
    fn new(_: &HpccParams, _: &Port) -> Self {
        IntStamp
    }
    #[inline]
    fn on_dequeue(&mut self, p: &HpccParams, sw: &mut Sw, pkt: &mut Packet) {
        if pkt.kind == PktKind::Data {
            let port = sw.port();
            let mut hop = IntHop {
                ts_ps: sw.now_ps,
                tx_bytes: port.tx_bytes,
                rate_bps: port.rate_bps,
                qlen_bytes: port.backlog_bytes() as u32,
            };
            if p.int_multi > 0 {
                let (bytes_unit, qlen_unit) = (128 * p.int_multi as u64, 80 * p.int_multi);
                hop.ts_ps = crate::sim::cut_to_ns(hop.ts_ps, true);
                hop.tx_bytes -= hop.tx_bytes % bytes_unit;
                hop.qlen_bytes -= hop.qlen_bytes % qlen_unit;
            }
            sw.push_int(pkt, hop);
        }
    }
}

/// Bytes of the INT header on every data packet and ACK: 5 hops x 8 bytes + a 2-byte count.
pub const INT_HEADER_BYTES: u32 = 42;

/// HPCC parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccParams {
    /// Target utilization.
    pub eta: f64,
    /// Additive-increase rounds before a multiplicative step is forced.
    pub max_stage: u32,
    /// Additive increase, as a rate (W_AI = rate_ai x T).
    pub rate_ai: Rate,
    pub min_rate: Rate,
    /// React to every ACK, not only once per RTT.
    pub fast_react: bool,
    /// Window at line rate; 0 = the fabric's bandwidth-delay product.
    pub base_window: Size,
    /// 0: exact INT records; N: the simulator's encoding with `INT_MULTI N` (module header).
    pub int_multi: u32,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams {
            eta: 0.95,
            max_stage: 5,
            rate_ai: Rate(40_000_000),
            min_rate: Rate(1_000_000_000),
            fast_react: true,
            base_window: Size(0),
            int_multi: 0,
        }
    }
}

impl Params for HpccParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(ScenarioError::new("cc.params.eta", "must be in (0, 1]"));
        }
        Ok(())
    }
}

/// Per-flow HPCC state, with the last INT records.
#[derive(Clone, Debug, Default)]
pub struct HpccSender {
    /// Reference rate Rc (the reference window over T).
    ref_rate_bps: f64,
    inc_stage: u32,
    /// Normalized inflight EWMA (starts at 1, as the simulator).
    u: f64,
    /// `snd_nxt` at the last reference update (0: no INT seen yet).
    last_update_seq: u64,
    prev: [IntHop; MAX_INT_HOPS],
    window_bytes: u64,
    base_rtt_ps: u64,
    last_pkt_bytes: u64,
}

impl HpccSender {
    /// Normalized inflight estimate u (tests, probes).
    pub fn u(&self) -> f64 {
        self.u
    }
}

impl SenderPart<HpccParams> for HpccSender {
    fn new(_: &HpccParams) -> Self {
        HpccSender::default()
    }

    fn on_start(&mut self, p: &HpccParams, tx: &mut Tx) {
        self.ref_rate_bps = tx.line_rate_bps() as f64;
        self.u = 1.0;
        self.base_rtt_ps = tx.base_rtt_ps();
        self.window_bytes = super::base_window_bytes(p.base_window, tx);
        tx.ctl().window_bytes = self.window_bytes;
    }

    fn on_send(&mut self, _: &HpccParams, _: &mut Tx, d: &mut DataOut) {
        self.last_pkt_bytes = d.size_bytes as u64;
    }

    fn on_ack(&mut self, p: &HpccParams, tx: &mut Tx, ack: &AckInfo) {
        let full_rtt = ack.ack_seq > self.last_update_seq;
        if !full_rtt && !p.fast_react {
            return;
        }
        let int = ack.int;
        let n = int.len();
        if n == 0 {
            return; // an ACK without INT records (the receiver's ACK timer): nothing to measure
        }
        if self.last_update_seq == 0 {
            // First feedback: keep the records as the reference for the next ACK.
            self.prev[..n].copy_from_slice(int);
            self.last_update_seq = tx.snd_nxt();
            return;
        }
        let t_ps = self.base_rtt_ps as f64;
        let line = tx.line_rate_bps() as f64;
        // Queue bytes -> rate: qlen / T at the sender's line rate over the base window.
        let q_to_bps = line / self.window_bytes as f64;
        let (mut big_u, mut dt_ps) = (0.0f64, 0u64);
        for (h, old) in int.iter().zip(&self.prev) {
            let tau_ps = h.ts_ps.saturating_sub(old.ts_ps);
            if tau_ps == 0 {
                continue;
            }
            let tx_bps = h.tx_bytes.saturating_sub(old.tx_bytes) as f64 * 8e12 / tau_ps as f64;
            let qlen = h.qlen_bytes.min(old.qlen_bytes) as f64;
            let u = (tx_bps + qlen * q_to_bps) / h.rate_bps as f64;
            if u > big_u {
                big_u = u;
                dt_ps = tau_ps;
            }
        }
        self.prev[..n].copy_from_slice(int);
        if n > 0 {
            let tau = dt_ps.min(self.base_rtt_ps) as f64;
            self.u = (self.u * (t_ps - tau) + big_u * tau) / t_ps;
            let max_c = self.u / p.eta;
            let (rate, stage) = if max_c >= 1.0 || self.inc_stage >= p.max_stage {
                (self.ref_rate_bps / max_c + p.rate_ai.0 as f64, 0)
            } else {
                (self.ref_rate_bps + p.rate_ai.0 as f64, self.inc_stage + 1)
            };
            let rate = rate.clamp(p.min_rate.0 as f64, line);
            change_rate(self, tx, rate);
            if full_rtt {
                self.ref_rate_bps = rate;
                self.inc_stage = stage;
            }
        }
        if full_rtt && tx.snd_nxt() > self.last_update_seq {
            self.last_update_seq = tx.snd_nxt();
        }
    }
}

/// Set the rate and window; shift the pacing clock by the change in the last packet's sending
/// time.
#[inline]
fn change_rate(h: &HpccSender, tx: &mut Tx, rate_bps: f64) {
    let new = (rate_bps.round() as u64).max(1);
    let line = tx.line_rate_bps();
    let ctl = tx.ctl();
    let old_t = crate::sim::tx_time_ps(h.last_pkt_bytes, ctl.rate_bps);
    let new_t = crate::sim::tx_time_ps(h.last_pkt_bytes, new);
    ctl.next_avail_ps = (ctl.next_avail_ps + new_t).saturating_sub(old_t);
    ctl.rate_bps = new;
    ctl.window_bytes = super::scaled_window(h.window_bytes, new, line);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::TestFlow;

    fn hop(ts_ps: u64, tx_bytes: u64) -> IntHop {
        IntHop {
            ts_ps,
            tx_bytes,
            rate_bps: 100_000_000_000,
            qlen_bytes: 0,
        }
    }

    #[test]
    fn window_shrinks_by_eta_over_u() {
        // One hop at 100G. Over one base RTT the hop sent twice its capacity worth of bytes:
        // U = 2, the EWMA moves fully to 2 (tau = T), and W = Wc / (U / eta) + W_AI.
        let p = HpccParams::default();
        let mut f = TestFlow::new(100_000_000_000);
        f.f.base_rtt_ps = 10_000_000; // 10 us
        let mut h: HpccSender = SenderPart::new(&p);
        h.on_start(&p, &mut f.tx(0));
        let mut int = [hop(1_000_000, 0)];
        f.f.snd_nxt = 10_000;
        h.on_ack(&p, &mut f.tx(0), &ack(&int, 1000)); // first feedback: reference only
        assert_eq!(f.f.ctl.rate_bps, 100_000_000_000);
        int[0] = hop(11_000_000, 250_000); // 250 KB in 10 us = 200 Gb/s
        f.f.snd_nxt = 20_000;
        h.on_ack(&p, &mut f.tx(0), &ack(&int, 11_000));
        assert!((h.u() - 2.0).abs() < 1e-9);
        let want = 100e9 / (2.0 / 0.95) + 40e6;
        let rate = f.f.ctl.rate_bps;
        assert!((rate as f64 - want).abs() < 1.0, "{rate}");
        assert_eq!(
            f.f.ctl.window_bytes,
            (125_000u128 * rate as u128 / 100_000_000_000) as u64
        );
    }

    fn ack(int: &[IntHop], ack_seq: u64) -> AckInfo<'_> {
        AckInfo {
            nack: false,
            ack_seq,
            newly_acked_bytes: 0,
            mark: crate::net::Mark::None,
            rtt_ps: 0,
            hdr: Default::default(),
            int,
            sack_seq: None,
            trimmed: false,
        }
    }
}
