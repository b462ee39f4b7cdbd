//! ExpressPass: credit-scheduled, delay-bounded transport. Receivers send credits; switches let
//! credits through at a fixed share of each link and drop the excess; a sender sends one data
//! packet per credit, on the credit's path.
//!
//! Sources: Cho, Jang, Han, "Credit-Scheduled Delay-Bounded Congestion Control for
//! Datacenters", SIGCOMM 2017, and its ns-2 code (kaist-ina ns2-xpass: `xpass/xpass.cc`,
//! `queue/xpass-drop-tail.cc`, `tcl/lib/ns-default.tcl`, `scripts/large-scale-fattree.tcl`).
//!
//! * **Switch:** credits wait in their own drop-tail queue at every port (`credit_queue`, 8
//!   credits as the fat-tree script; the code's default 10), served ahead of data but never
//!   faster than credit / (credit + data packet) of the link (84/(84+1538) in the code's
//!   sizes; ccsim takes its own: a 64 B credit, the scenario's full data packet). The excess is
//!   dropped. ECMP hashes the host pair, so data retraces its credits' path (the code's
//!   symmetric hashing).
//! * **Sender:** a flow starts with a credit request (sent again every `request_timeout`
//!   until a credit comes) and sends nothing before its first credit. Each credit releases one
//!   data packet, echoing the credit's number and send time; a credit with nothing to send is
//!   wasted. Once everything is sent, a credit stop; if data must go again (a NACK, the
//!   transport's timeout) after it, a new request.
//! * **Receiver** (per flow): credits at `cur_rate`, each one `credit / cur_rate` after the last
//!   with a jitter uniform in ±`jitter`; starting at `alpha` of the maximum (scaled down for
//!   flows under 40 packets, as the code) with w = `w_init`. Once per RTT (measured from the
//!   echoed credit times, gain 0.2), the credit feedback control of the code: credit loss =
//!   credits skipped in the echoed numbers / credits; target = (1 − rate/max) × 0.125; above
//!   target, rate = the rate of credits that came back × (1 + target) (never more than before)
//!   and w = max(w/2, 0.01); else w += 0.05 (at most 0.5; not in the round right after a
//!   decrease) and rate = w·max + (1 − w)·rate; always within [one credit per RTT, max].
//!   Credits stop on a credit stop or when every byte has arrived.
//! * Lost data is recovered by the transport (go-back-N from the receiver's NACK, as the code).

use super::{
    AckInfo, BaseRtt, CtrlInfo, CtrlQueue, DataInfo, DataOut, FabricMode, Params, ReceiverPart,
    Rx, Scheme, SchemeInfo, SenderPart, Tx,
};
use crate::net::{Mark, SchemeHdr};
use crate::sim::input::ScenarioError;
use crate::sim::quantity::Time;
use serde::{Deserialize, Serialize};

/// The scheme type of `expresspass`.
pub struct ExpressPass;

/// Control codes: a credit (`hdr.a` = its number, `hdr.b` = its send time in ns, mod 2^32), a
/// credit request (`hdr.a` = packets to send), a credit stop.
pub const CREDIT: u8 = 1;
pub const REQUEST: u8 = 2;
pub const STOP: u8 = 3;
/// Bytes on the wire of a credit, request or stop: a minimum Ethernet frame (the code's 84 B
/// count the preamble and gap, which ccsim's sizes leave out).
pub const CREDIT_BYTES: u32 = 64;
const CREDIT_TIMER: u8 = 0;
const REQUEST_TIMER: u8 = 0;
/// The code's largest w and its step.
const W_MAX: f64 = 0.5;
const W_STEP: f64 = 0.05;
const MIN_W: f64 = 0.01;
/// Flows of fewer packets start at a proportionally lower rate (the code's 40).
const SMALL_FLOW_PACKETS: f64 = 40.0;

impl Scheme for ExpressPass {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "expresspass",
        description: "ExpressPass: receivers send credits, switches pass credits at credit/(credit+data) of each link in an 8-credit queue and drop the rest, senders send one packet per credit on the credit's path; per-RTT credit feedback (target loss (1 - rate/max) x 0.125, w in [0.01, 0.5]).",
        paper: "Cho et al., Credit-Scheduled Delay-Bounded Congestion Control for Datacenters (ExpressPass), SIGCOMM 2017; kaist-ina ns2-xpass",
        base_rtt: BaseRtt::Path,
        ctrl_queue: Some(CtrlQueue {
            code: CREDIT,
            share_num: 0,
            share_den: 0,
            limit_packets: 8,
        }),
        ctrl_bytes: &[(CREDIT, CREDIT_BYTES), (REQUEST, CREDIT_BYTES), (STOP, CREDIT_BYTES)],
        symmetric_paths: true,
        fabric: FabricMode::Any,
        ..SchemeInfo::BASE
    }];
    type Params = XPassParams;
    type Sender = XPassSender;
    type Receiver = XPassReceiver;
    type Switch = ();
    fn default_params(_: &str) -> XPassParams {
        XPassParams::default()
    }
}

/// ExpressPass parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct XPassParams {
    /// A flow's first credit rate, as a fraction of the maximum (`alpha_`).
    pub alpha: f64,
    /// Its first w (`w_init_`; the code's default 0.5, its fat-tree script 0.0625).
    pub w_init: f64,
    /// Credit spacing jitter, ± this fraction of the gap.
    pub jitter: f64,
    /// Scale of the target credit loss (`target_loss_scaling_`).
    pub target_loss_scaling: f64,
    /// A sender's credit request goes again after this long without a credit
    /// (`retransmit_timeout_`: the fat-tree script's 100 us).
    pub request_timeout: Time,
}

impl Default for XPassParams {
    fn default() -> Self {
        XPassParams {
            alpha: 0.5,
            w_init: 0.5,
            jitter: 0.1,
            target_loss_scaling: 0.125,
            request_timeout: Time(100_000_000),
        }
    }
}

impl Params for XPassParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        for (field, v, lo_open, hi) in [
            ("alpha", self.alpha, true, 1.0),
            ("w_init", self.w_init, true, W_MAX),
            ("jitter", self.jitter, false, 0.9),
            ("target_loss_scaling", self.target_loss_scaling, false, 1.0),
        ] {
            let above = if lo_open { v > 0.0 } else { v >= 0.0 };
            if !(above && v <= hi) {
                return Err(ScenarioError::new(
                    &format!("cc.params.{field}"),
                    format!(
                        "must be {} 0 and at most {hi} (ns2-xpass: alpha 0.5, w_init 0.5, jitter 0.1, target_loss_scaling 0.125)",
                        if lo_open { "above" } else { "at least" }
                    ),
                ));
            }
        }
        if self.request_timeout.0 == 0 {
            return Err(ScenarioError::new(
                "cc.params.request_timeout",
                "must be > 0 (the fat-tree script's: 100us)",
            ));
        }
        Ok(())
    }
}

/// Per-flow sender state.
#[derive(Clone, Debug, Default)]
pub struct XPassSender {
    /// The last credit's number and send time, echoed by the next data packet.
    credit_seq: u32,
    credit_ts: u32,
    /// A credit arrived since the last request; credits were stopped.
    credited: bool,
    stopped: bool,
    /// Credits received, and those with nothing to send.
    pub credits: u64,
    pub wasted: u64,
}

impl XPassSender {
    fn request(&mut self, p: &XPassParams, tx: &mut Tx) {
        let packets = tx.unsent_bytes().div_ceil(tx.mtu_payload_bytes());
        let a = packets.min(u32::MAX as u64) as u32;
        tx.send_ctrl(REQUEST, SchemeHdr { a, b: 0 }, Mark::None);
        (self.credited, self.stopped) = (false, false);
        tx.set_timer(REQUEST_TIMER, tx.now_ps + p.request_timeout.0);
    }
    /// Data waits to go (new, again after a go-back, or a selective retransmission).
    fn has_data(tx: &Tx) -> bool {
        tx.unsent_bytes() > 0 || tx.resend_pending()
    }
}

impl SenderPart<XPassParams> for XPassSender {
    fn new(_: &XPassParams) -> Self {
        XPassSender::default()
    }
    fn on_start(&mut self, p: &XPassParams, tx: &mut Tx) {
        tx.ctl().credit_bytes = 0;
        self.request(p, tx);
    }
    fn on_ctrl(&mut self, _: &XPassParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code != CREDIT {
            return;
        }
        self.credits += 1;
        self.credited = true;
        if self.stopped || !Self::has_data(tx) {
            self.wasted += 1;
            return;
        }
        (self.credit_seq, self.credit_ts) = (c.hdr.a, c.hdr.b);
        let mtu = tx.mtu_payload_bytes();
        let ctl = tx.ctl();
        ctl.credit_bytes = ctl.credit_bytes.saturating_add(mtu);
    }
    fn on_send(&mut self, _: &XPassParams, tx: &mut Tx, d: &mut DataOut) {
        d.hdr = SchemeHdr {
            a: self.credit_seq,
            b: self.credit_ts,
        };
        if !Self::has_data(tx) && !self.stopped {
            self.stopped = true;
            tx.send_ctrl(STOP, SchemeHdr::default(), Mark::None);
        }
    }
    fn on_ack(&mut self, p: &XPassParams, tx: &mut Tx, ack: &AckInfo) {
        // Data must go again after the credits stopped: ask for credits anew.
        if ack.nack && self.stopped && Self::has_data(tx) {
            self.request(p, tx);
        }
    }
    fn on_timer(&mut self, p: &XPassParams, tx: &mut Tx, _: u8) {
        if tx.snd_una() >= tx.size_bytes() {
            return;
        }
        // No credit since the request, or credits stopped while data waits (the transport's
        // timeout went back): request again.
        if (!self.credited && !self.stopped) || (self.stopped && Self::has_data(tx)) {
            self.request(p, tx);
        } else {
            tx.set_timer(REQUEST_TIMER, tx.now_ps + p.request_timeout.0);
        }
    }
}

/// Per-flow receiver state: its credit pacer and feedback control.
#[derive(Clone, Debug, Default)]
pub struct XPassReceiver {
    /// Credits are being sent, at this rate (b/s of credit bytes), with this w.
    sending: bool,
    rate_bps: f64,
    max_bps: f64,
    w: f64,
    can_increase_w: bool,
    /// Measured RTT (ps; 0: none yet), credit numbers: next to send, next expected back.
    rtt_ps: f64,
    next_credit: u32,
    expect_credit: u32,
    /// This period's credits accounted (back or skipped), skipped ones, and its start.
    total: u64,
    dropped: u64,
    period_start_ps: u64,
    /// Credits sent, and rate updates made (for tests and traces).
    pub credits_sent: u64,
    pub updates: u64,
}

impl XPassReceiver {
    /// The credit feedback control, at most once per RTT.
    fn feedback(&mut self, p: &XPassParams, now_ps: u64) {
        if self.rtt_ps <= 0.0
            || ((now_ps - self.period_start_ps) as f64) < self.rtt_ps
            || self.total == 0
        {
            return;
        }
        let credit_bits = CREDIT_BYTES as f64 * 8.0;
        let min_bps = credit_bits / (self.rtt_ps * 1e-12);
        let loss = self.dropped as f64 / self.total as f64;
        let target = (1.0 - self.rate_bps / self.max_bps) * p.target_loss_scaling;
        if loss > target {
            let back = (self.total - self.dropped) as f64 * credit_bits;
            let elapsed_s = (now_ps - self.period_start_ps) as f64 * 1e-12;
            let r = if loss >= 1.0 {
                min_bps
            } else {
                back / elapsed_s * (1.0 + target)
            };
            self.rate_bps = self.rate_bps.min(r);
            self.w = (self.w / 2.0).max(MIN_W);
            self.can_increase_w = false;
        } else {
            if self.can_increase_w {
                self.w = (self.w + W_STEP).min(W_MAX);
            } else {
                self.can_increase_w = true;
            }
            if self.rate_bps < self.max_bps {
                self.rate_bps = self.w * self.max_bps + (1.0 - self.w) * self.rate_bps;
            }
        }
        self.rate_bps = self.rate_bps.clamp(min_bps.min(self.max_bps), self.max_bps);
        (self.total, self.dropped, self.period_start_ps) = (0, 0, now_ps);
        self.updates += 1;
    }
    /// Send one credit and time the next.
    fn send_credit(&mut self, p: &XPassParams, rx: &mut Rx) {
        let now = rx.now_ps;
        self.feedback(p, now);
        let b = ((now / 1000) & u32::MAX as u64) as u32;
        rx.send_ctrl(
            CREDIT,
            SchemeHdr {
                a: self.next_credit,
                b,
            },
            Mark::None,
        );
        self.next_credit = self.next_credit.wrapping_add(1);
        self.credits_sent += 1;
        let jitter = p.jitter * (2.0 * rx.rng().uniform() - 1.0);
        let gap_s = CREDIT_BYTES as f64 * 8.0 / self.rate_bps * (1.0 + jitter);
        rx.set_timer(CREDIT_TIMER, now + (gap_s * 1e12).max(1.0) as u64);
    }
    /// Start (or restart) sending credits for a flow of `packets` packets.
    fn start(&mut self, p: &XPassParams, rx: &mut Rx, packets: u32) {
        let share = CREDIT_BYTES as f64 / (CREDIT_BYTES as f64 + rx.mtu_wire_bytes() as f64);
        self.max_bps = rx.last_hop_bps() as f64 * share;
        let scale = (packets as f64 / SMALL_FLOW_PACKETS).min(1.0);
        self.rate_bps = (p.alpha * scale * self.max_bps).max(1.0);
        (self.w, self.can_increase_w) = (p.w_init, false);
        (self.total, self.dropped, self.period_start_ps) = (0, 0, rx.now_ps);
        if !self.sending {
            self.sending = true;
            self.send_credit(p, rx);
        }
    }
}

impl ReceiverPart<XPassParams> for XPassReceiver {
    type Host = ();
    fn new(_: &XPassParams) -> Self {
        XPassReceiver::default()
    }
    fn on_ctrl(&mut self, _: &mut (), p: &XPassParams, rx: &mut Rx, c: &CtrlInfo) {
        match c.code {
            REQUEST if rx.rcv_nxt() < rx.size_bytes() => self.start(p, rx, c.hdr.a.max(1)),
            STOP => {
                self.sending = false;
                rx.cancel_timer(CREDIT_TIMER);
            }
            _ => {}
        }
    }
    fn on_data(&mut self, _: &mut (), _: &XPassParams, rx: &mut Rx, d: &DataInfo) {
        let now = rx.now_ps;
        if !d.trimmed {
            // The echoed credit: the ones before it that never came back were dropped.
            let seq = d.hdr.a;
            let skipped = seq.wrapping_sub(self.expect_credit);
            if skipped < u32::MAX / 2 {
                self.total += skipped as u64 + 1;
                self.dropped += skipped as u64;
                self.expect_credit = seq.wrapping_add(1);
            }
            let sent_ns = d.hdr.b;
            let rtt = ((now / 1000) as u32).wrapping_sub(sent_ns) as f64 * 1000.0;
            self.rtt_ps = if self.rtt_ps == 0.0 {
                rtt
            } else {
                0.8 * self.rtt_ps + 0.2 * rtt
            };
        }
        if rx.rcv_nxt() >= rx.size_bytes() && self.sending {
            self.sending = false;
            rx.cancel_timer(CREDIT_TIMER);
        }
    }
    fn on_timer(&mut self, _: &mut (), p: &XPassParams, rx: &mut Rx, _: u8) {
        if self.sending {
            self.send_credit(p, rx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver(rate_bps: f64, w: f64, total: u64, dropped: u64) -> XPassReceiver {
        XPassReceiver {
            sending: true,
            rate_bps,
            max_bps: 500e6,
            w,
            can_increase_w: true,
            rtt_ps: 10e6,
            total,
            dropped,
            ..XPassReceiver::default()
        }
    }

    #[test]
    fn loss_above_target_sets_the_rate_that_came_back_and_halves_w() {
        // Max 500 Mb/s of credits, rate 400: target = (1 - 0.8) x 0.125 = 2.5%. 100 credits
        // over 200 us, 60 lost: the 40 that came back are 40 x 512 bits / 200 us = 102.4 Mb/s,
        // times 1.025. With 10 lost over 20 us, what came back (2.3 Gb/s) is above the old
        // rate, which stays.
        let p = XPassParams::default();
        let mut r = receiver(400e6, 0.4, 100, 60);
        r.feedback(&p, 200_000_000);
        assert!((r.rate_bps - 102.4e6 * 1.025).abs() < 1.0, "{}", r.rate_bps);
        assert_eq!((r.w, r.can_increase_w), (0.2, false));
        let mut capped = receiver(400e6, 0.4, 100, 10);
        capped.feedback(&p, 20_000_000);
        assert_eq!(capped.rate_bps, 400e6);
    }

    #[test]
    fn loss_at_or_below_target_grows_w_then_moves_the_rate_toward_the_maximum() {
        // Rate 100 of 500: target = 0.8 x 0.125 = 10%; 5% lost: increase.
        let p = XPassParams::default();
        let mut r = receiver(100e6, 0.3, 100, 5);
        r.feedback(&p, 20_000_000);
        assert!((r.w - 0.35).abs() < 1e-12);
        assert!((r.rate_bps - (0.35 * 500e6 + 0.65 * 100e6)).abs() < 1.0);
        // Right after a decrease, w waits one round; it never passes 0.5 nor the rate the max.
        let mut after_cut = receiver(100e6, 0.5, 100, 0);
        after_cut.can_increase_w = false;
        after_cut.feedback(&p, 20_000_000);
        assert_eq!((after_cut.w, after_cut.can_increase_w), (0.5, true));
        assert!(after_cut.rate_bps <= after_cut.max_bps);
    }
}
