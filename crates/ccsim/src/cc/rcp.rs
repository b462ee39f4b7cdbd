//! RCP: the Rate Control Protocol. Every router port offers one rate to all the flows through
//! it, updated once per control interval; a flow sends at the smallest rate on its path.
//!
//! Sources: Dukkipati, Kobayashi, Zhang-Shen, McKeown, "Processor Sharing Flows in the
//! Internet", IWQoS 2005; Dukkipati, "Rate Control Protocol (RCP): Congestion Control to Make
//! Flows Complete Quickly", PhD thesis, Stanford 2007 (the rate law, α = 0.1, β = 1); the AMRT
//! paper (IEEE TNSM 2023, §VIII-E) runs it as a baseline.
//!
//! * **Switch** (per egress port): every control interval T, the offered rate R is updated as
//!   R ← R·[1 + (T/d)·(α·(C − y) − β·q/d)/C], with C the port's rate, y the rate of the traffic
//!   that arrived at the port over the interval, q its queue now and d the average RTT of the
//!   flows through it; R is kept within [`min_rate`, C] and starts at C. Updated when a packet
//!   arrives and an interval or more has passed: one step per interval, with y the mean rate
//!   of what arrived since the last update and q in the first step only.
//!   Each data packet that arrives carries the smallest R on its path so far (`hdr.a`, Mb/s).
//! * **d**: as in RCP, packets carry their sender's RTT estimate (`hdr.b`, ns; the flow's
//!   smoothed measured RTT, its base RTT before the first ACK) and each port keeps a running
//!   average of it (gain `rtt_gain` per packet, ccsim's choice: the thesis averages over the
//!   interval). T = d unless `interval` is set (the thesis takes T ≤ d).
//! * **Receiver:** echoes the rate of the last data packet in its ACKs (`hdr.a`).
//! * **Sender:** RCP's SYN learns the rate before data flows; ccsim has no handshake, so a new
//!   flow holds its window to one packet (its "SYN") until the first rate arrives in an ACK,
//!   then paces at the rate its ACKs carry.

use super::{AckInfo, BaseRtt, DataInfo, DataOut, FabricMode, Params, ReceiverPart, Rx};
use super::{Scheme, SchemeInfo, SenderPart, Sw, SwitchPart, Tx};
use crate::net::{Packet, PktKind, Port, SchemeHdr};
use crate::sim::input::ScenarioError;
use crate::sim::quantity::{Rate, Time};
use serde::{Deserialize, Serialize};

/// The scheme type of `rcp`.
pub struct Rcp;

/// `hdr.a` of a data packet no port has stamped yet: no limit.
const NO_LIMIT: u32 = u32::MAX;

impl Scheme for Rcp {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "rcp",
        description: "RCP: each switch port offers one rate, updated per control interval by R <- R[1 + (T/d)(a(C - y) - b q/d)/C] (a = 0.1, b = 1); packets carry the path's smallest rate and the sender's RTT, receivers echo the rate, senders pace to it.",
        paper: "Dukkipati et al., Processor Sharing Flows in the Internet, IWQoS 2005; Dukkipati, Rate Control Protocol (RCP), PhD thesis, Stanford 2007",
        base_rtt: BaseRtt::Path,
        fabric: FabricMode::Any,
        ..SchemeInfo::BASE
    }];
    type Params = RcpParams;
    type Sender = RcpSender;
    type Receiver = RcpReceiver;
    type Switch = RcpPort;
    fn default_params(_: &str) -> RcpParams {
        RcpParams::default()
    }
}

/// RCP parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RcpParams {
    /// Weight of the spare bandwidth (α).
    pub alpha: f64,
    /// Weight of the queue (β).
    pub beta: f64,
    /// The control interval T; 0 = the port's average RTT d.
    pub interval: Time,
    /// The lowest rate a port offers.
    pub min_rate: Rate,
    /// Per-packet gain of a port's running average of RTTs.
    pub rtt_gain: f64,
}

impl Default for RcpParams {
    fn default() -> Self {
        RcpParams {
            alpha: 0.1,
            beta: 1.0,
            interval: Time(0),
            min_rate: Rate(10_000_000),
            rtt_gain: 0.02,
        }
    }
}

impl Params for RcpParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        for (field, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(ScenarioError::new(
                    &format!("cc.params.{field}"),
                    "must be a number > 0 (RCP's: alpha 0.1, beta 1)",
                ));
            }
        }
        if !(self.rtt_gain > 0.0 && self.rtt_gain <= 1.0) {
            return Err(ScenarioError::new(
                "cc.params.rtt_gain",
                "must be in (0, 1] (default 0.02)",
            ));
        }
        if self.min_rate.0 == 0 {
            return Err(ScenarioError::new(
                "cc.params.min_rate",
                "must be > 0 (e.g. \"10Mbps\")",
            ));
        }
        Ok(())
    }
}

/// Per-flow sender state.
#[derive(Clone, Debug, Default)]
pub struct RcpSender {
    /// Smoothed RTT (ps, gain 1/8), carried to the switches.
    srtt_ps: u64,
    /// The flow's own window, held back to one packet until the first rate arrives (the "SYN"
    /// round; a window, not credit, so that a lost first packet can go again).
    window_bytes: Option<u64>,
}

impl SenderPart<RcpParams> for RcpSender {
    fn new(_: &RcpParams) -> Self {
        RcpSender::default()
    }
    fn on_start(&mut self, _: &RcpParams, tx: &mut Tx) {
        self.srtt_ps = tx.base_rtt_ps();
        let mtu = tx.mtu_payload_bytes();
        let ctl = tx.ctl();
        self.window_bytes = Some(ctl.window_bytes);
        ctl.window_bytes = ctl.window_bytes.min(mtu);
    }
    fn on_send(&mut self, _: &RcpParams, _: &mut Tx, d: &mut DataOut) {
        d.hdr = SchemeHdr {
            a: NO_LIMIT,
            b: (self.srtt_ps / 1000).clamp(1, u32::MAX as u64) as u32,
        };
    }
    fn on_ack(&mut self, _: &RcpParams, tx: &mut Tx, ack: &AckInfo) {
        if ack.rtt_ps > 0 {
            self.srtt_ps = (7 * self.srtt_ps + ack.rtt_ps) / 8;
        }
        if ack.hdr.a == 0 || ack.hdr.a == NO_LIMIT {
            return;
        }
        let line = tx.line_rate_bps();
        let ctl = tx.ctl();
        ctl.rate_bps = (ack.hdr.a as u64 * 1_000_000).min(line);
        if let Some(window) = self.window_bytes.take() {
            ctl.window_bytes = window;
        }
    }
}

/// Per-flow receiver state: the rate the last data packet carried.
#[derive(Clone, Debug, Default)]
pub struct RcpReceiver {
    rate_mbps: u32,
}

impl ReceiverPart<RcpParams> for RcpReceiver {
    type Host = ();
    fn new(_: &RcpParams) -> Self {
        RcpReceiver::default()
    }
    fn on_data(&mut self, _: &mut (), _: &RcpParams, _: &mut Rx, d: &DataInfo) {
        if !d.trimmed {
            self.rate_mbps = d.hdr.a;
        }
    }
    fn ack_hdr(&self, _: &RcpParams) -> SchemeHdr {
        SchemeHdr {
            a: self.rate_mbps,
            b: 0,
        }
    }
}

/// Per-port switch state.
#[derive(Clone, Debug)]
pub struct RcpPort {
    /// The rate offered (b/s), the port's rate.
    rate_bps: f64,
    link_bps: f64,
    /// Running average of the RTTs packets carry (ps; 0: none seen yet).
    avg_rtt_ps: f64,
    /// Start of the current interval, and bytes that arrived since.
    since_ps: u64,
    arrived_bytes: u64,
    /// Rate updates made (for tests and traces).
    pub updates: u64,
}

impl RcpPort {
    /// The control interval T (ps).
    fn interval_ps(&self, p: &RcpParams) -> u64 {
        if p.interval.0 > 0 {
            p.interval.0
        } else {
            (self.avg_rtt_ps as u64).max(1)
        }
    }
    /// Apply the rate law once for every interval that has passed by `now_ps`, with y the
    /// mean rate of what arrived since the last update, and the queue `queue_bytes` in the
    /// first step only (a busy port updates every interval: one step).
    fn update(&mut self, p: &RcpParams, now_ps: u64, queue_bytes: u64) {
        let t = self.interval_ps(p);
        if self.avg_rtt_ps == 0.0 || now_ps < self.since_ps + t {
            return;
        }
        let elapsed_ps = now_ps - self.since_ps;
        let (c, d, t_s) = (self.link_bps, self.avg_rtt_ps * 1e-12, t as f64 * 1e-12);
        let y = self.arrived_bytes as f64 * 8.0 / (elapsed_ps as f64 * 1e-12);
        let mut q = queue_bytes as f64 * 8.0;
        let mut r = self.rate_bps;
        for _ in 0..(elapsed_ps / t).min(1000) {
            r *= 1.0 + (t_s / d) * (p.alpha * (c - y) - p.beta * q / d) / c;
            r = r.clamp(p.min_rate.0 as f64, c);
            q = 0.0;
        }
        self.rate_bps = r;
        self.since_ps = now_ps;
        self.arrived_bytes = 0;
        self.updates += 1;
    }
}

impl SwitchPart<RcpParams> for RcpPort {
    fn new(_: &RcpParams, port: &Port) -> Self {
        RcpPort {
            rate_bps: port.rate_bps as f64,
            link_bps: port.rate_bps as f64,
            avg_rtt_ps: 0.0,
            since_ps: 0,
            arrived_bytes: 0,
            updates: 0,
        }
    }
    fn on_enqueue(&mut self, p: &RcpParams, sw: &mut Sw, pkt: &mut Packet) -> super::Verdict {
        // y counts every packet that arrives (data and ACKs); `queue_bytes` includes this one.
        self.update(p, sw.now_ps, sw.queue_bytes().saturating_sub(pkt.size_bytes as u64));
        self.arrived_bytes += pkt.size_bytes as u64;
        if pkt.kind == PktKind::Data {
            let rtt_ps = pkt.hdr.b as f64 * 1000.0;
            if self.avg_rtt_ps == 0.0 {
                (self.avg_rtt_ps, self.since_ps) = (rtt_ps, sw.now_ps);
            } else {
                self.avg_rtt_ps += p.rtt_gain * (rtt_ps - self.avg_rtt_ps);
            }
            let mbps = (self.rate_bps / 1e6).round().clamp(1.0, (NO_LIMIT - 1) as f64) as u32;
            pkt.hdr.a = pkt.hdr.a.min(mbps);
        }
        super::Verdict::Enqueue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port_at(link_bps: f64, rtt_ps: f64) -> RcpPort {
        RcpPort {
            rate_bps: link_bps,
            link_bps,
            avg_rtt_ps: rtt_ps,
            since_ps: 0,
            arrived_bytes: 0,
            updates: 0,
        }
    }

    #[test]
    fn the_rate_law_moves_by_the_spare_bandwidth_and_the_queue() {
        // C = 10 Gb/s, d = T = 100 us. y = 12 Gb/s over the interval, q = 25 KB:
        // R <- R (1 + (0.1 (10 - 12) G - 1 x 200 kb / 100 us) / 10 G) = R (1 - 0.02 - 0.2).
        let p = RcpParams::default();
        let mut port = port_at(10e9, 100e6);
        port.rate_bps = 5e9;
        port.arrived_bytes = (12e9 / 8.0 * 100e-6) as u64;
        port.update(&p, 100_000_000, 25_000);
        assert!((port.rate_bps - 5e9 * 0.78).abs() < 1e3, "{}", port.rate_bps);
        // Two intervals at a mean 8 Gb/s, no queue: two steps of 1 + 0.1 x 2/10 = 1.02.
        let r = port.rate_bps;
        port.arrived_bytes = (8e9 / 8.0 * 200e-6) as u64;
        port.update(&p, 300_000_000, 0);
        assert!((port.rate_bps - r * 1.02 * 1.02).abs() < 1e3, "{}", port.rate_bps);
    }

    #[test]
    fn the_rate_stays_between_the_minimum_and_the_link() {
        let p = RcpParams::default();
        let mut port = port_at(10e9, 10e6);
        port.update(&p, 50_000_000, 0);
        assert_eq!(port.rate_bps, 10e9);
        port.update(&p, 60_000_000, 100_000_000);
        assert_eq!(port.rate_bps, p.min_rate.0 as f64);
    }
}
