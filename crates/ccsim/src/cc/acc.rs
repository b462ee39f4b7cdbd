//! ACC, ACK-driven congestion control for lossless Ethernet, on TCD's ternary marks.
//!
//! Source: Zhang et al., "Revisiting Congestion Control for Lossless Ethernet", NSDI 2024
//! (seed 000): section 4, Algorithm 1, Table 1; parameters of section 6.1. Switches run TCD
//! (`cc::tcd`); the receiver echoes each packet's mark on its ACK, sent per packet at priority 0.
//!
//! Every period T (default: the fabric's base RTT) the sender aggregates its ACKs' marks with
//! priority CE > UE > NO and acts:
//! * **congested** (CE on at least `ce_fraction` = 90% of the period's ACKs):
//!   - if not halted and `snd_una > snd_nxt_start` (only ACKs of packets sent after the last
//!     halt count, line 2): R = recvNum x MTU / T (the ACK arrival rate; with sparse ACKs,
//!     whose inter-arrival time exceeds T, that time replaces T); R_s = R; and if
//!     dS > dA, halt for t_Halt = (dS - dA) / R and record snd_nxt_start = snd_nxt (lines
//!     3-5, 27-33). dS is what was sent in the previous period (accumulated over periods
//!     without any ACK), dA what was acknowledged in this one;
//!   - at the end of the first period of a halt, if still congested, extend it by r / R with
//!     r = dS - dS x R / R_s, dS the bytes sent in the period the halt was decided in and R_s
//!     the rate before the halt (lines 6-10);
//! * **undetermined** (UE, no steady CE): N_v += 1, and if N_v > P_thresh, R_s = R_s / 2
//!   (lines 22-26);
//! * **uncongested** (no mark): R_s += (lineRate - R_s) / lineRate x RI, with RI = RI_Low for
//!   the first 2 consecutive uncongested periods and RI_High after (lines 13-21).
//!
//! `acc_nohalt` (section 6.4, Figure 16) throttles to R without halting.
//!
//! Choices where the paper is silent (named here and in the docs): a period with CE on fewer
//! than 90% of its ACKs, a period without any ACK, and periods while halted change no rate
//! (the flow is neither steadily congested nor known to be uncongested); N_u and N_v count
//! consecutive periods and reset otherwise; the initial rate is line rate; the rate never
//! falls below `min_rate`.
//!
//! Defaults (section 6.1): RI_Low = lineRate / 250 (400 Mb/s at 100G), RI_High = 10 RI_Low,
//! P_thresh = 1, ce_fraction 0.9, T = base RTT (0), TCD threshold 2 MTU and max(T_on) 24 us.

use super::tcd::{TcdParams, TcdPort, WithTcd};
use super::{AckInfo, Params, Scheme, SchemeInfo, SenderPart, Tx};
use crate::net::Mark;
use crate::scenario::units::{Rate, Time};
use crate::scenario::ScenarioError;
use crate::sim::PS_PER_S;
use serde::{Deserialize, Serialize};

/// The scheme type of `acc` and `acc_nohalt`.
pub struct Acc;

/// ACKs ride at high priority end to end, NIC and switches (BASE): "ACKs are sent with higher
/// priority than data packets to avoid a significant queueing delay" (ACC paper §4.3).
const INFO: SchemeInfo = SchemeInfo {
    name: "acc",
    description: "ACC: ACK-driven rate control on TCD's ternary marks; congested flows halt until their excess drains, then send at the ACK arrival rate; victims halve after P_thresh UE periods; two-stage increase; ACKs at high priority end to end (NIC and switches).",
    paper: "Zhang et al., Revisiting Congestion Control for Lossless Ethernet, NSDI 2024",
    base_rtt: super::BaseRtt::Fabric,
    fabric: super::FabricMode::Lossless,
    ..SchemeInfo::BASE
};

impl Scheme for Acc {
    const SCHEMES: &'static [SchemeInfo] = &[
        INFO,
        SchemeInfo {
            name: "acc_nohalt",
            description: "ACC without source halt: congested flows are throttled to the ACK arrival rate at once (ACC paper, Figure 16).",
            ..INFO
        },
    ];
    type Params = AccParams;
    type Sender = AccSender;
    type Receiver = ();
    type Switch = TcdPort;
    fn default_params(name: &str) -> AccParams {
        AccParams {
            halt: name != "acc_nohalt",
            ..AccParams::default()
        }
    }
}

/// ACC parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AccParams {
    /// Control period T; 0 means the fabric's base RTT.
    pub period: Time,
    /// Rate increment of the first two uncongested periods; 0 means lineRate / 250.
    pub ri_low: Rate,
    /// Rate increment after that; 0 means 10 x RI_Low.
    pub ri_high: Rate,
    /// Victim flows halve after more than this many consecutive UE periods.
    pub p_thresh: u32,
    /// Fraction of CE-marked ACKs in a period that makes a flow steadily congested.
    pub ce_fraction: f64,
    /// Source halt on (`acc`) or off (`acc_nohalt`).
    pub halt: bool,
    pub min_rate: Rate,
    pub tcd: TcdParams,
}

impl Default for AccParams {
    fn default() -> Self {
        AccParams {
            period: Time(0),
            ri_low: Rate(0),
            ri_high: Rate(0),
            p_thresh: 1,
            ce_fraction: 0.9,
            halt: true,
            min_rate: Rate(100_000_000),
            tcd: TcdParams::default(),
        }
    }
}

impl Params for AccParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        if !(self.ce_fraction > 0.0 && self.ce_fraction <= 1.0) {
            return Err(ScenarioError::new(
                "cc.params.ce_fraction",
                "must be in (0, 1] (the paper uses 0.9)",
            ));
        }
        if self.min_rate.0 == 0 {
            return Err(ScenarioError::new("cc.params.min_rate", "must be > 0"));
        }
        self.tcd.validate()
    }
}

impl WithTcd for AccParams {
    fn tcd(&self) -> &TcdParams {
        &self.tcd
    }
}

/// Timer kind of the control period.
const PERIOD: u8 = 0;

/// What a period's ACKs said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeriodState {
    Congested,
    /// CE on some ACKs but fewer than `ce_fraction`.
    PartlyCongested,
    Undetermined,
    Uncongested,
    /// No ACK arrived.
    Silent,
}

/// Per-flow ACC state (Table 1, plus the period's counters).
#[derive(Clone, Debug, Default)]
pub struct AccSender {
    /// R_s, the sending rate.
    rate_bps: f64,
    period_ps: u64,
    /// Period counters: ACKs, CE-marked ACKs, UE-marked ACKs.
    acks: u32,
    ce_acks: u32,
    ue_acks: u32,
    /// snd_nxt and snd_una when the period began.
    nxt_at_start: u64,
    una_at_start: u64,
    /// dS of the previous period(s): bytes sent, accumulated while no ACK arrives.
    sent_prev: u64,
    /// Arrival time of the last ACK and the gap before it. The first ACK, and the first after
    /// a halt ended, have no inter-arrival time (R uses T): a gap that spans the sender's own
    /// silence says nothing about the pipe (our reading of section 4.3's sparse-ACK rule).
    last_ack_ps: Option<u64>,
    ack_gap_ps: u64,
    /// Source halt: on, until when, `snd_nxt_start`, and whether the halt was extended yet,
    /// with the R and R_s it was decided with.
    halted: bool,
    snd_nxt_start: u64,
    extended: bool,
    halt_r_bps: f64,
    halt_rs_bps: f64,
    /// N_u and N_v: consecutive uncongested and UE periods.
    n_u: u32,
    n_v: u32,
    /// Every halt: start, end (with its extension) and the ACK rate R it throttled to; and
    /// ACKs by mark (None, UE, CE) over the flow's life (for tests and experiments).
    pub halts: Vec<Halt>,
    pub acks_by_mark: [u64; 3],
}

/// One source halt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Halt {
    pub start_ps: u64,
    pub end_ps: u64,
    pub rate_bps: f64,
}

impl AccSender {
    /// The period's state from its ACK counters.
    pub fn classify(&self, p: &AccParams) -> PeriodState {
        if self.acks == 0 {
            PeriodState::Silent
        } else if self.ce_acks as f64 >= p.ce_fraction * self.acks as f64 {
            PeriodState::Congested
        } else if self.ce_acks > 0 {
            PeriodState::PartlyCongested
        } else if self.ue_acks > 0 {
            PeriodState::Undetermined
        } else {
            PeriodState::Uncongested
        }
    }

    /// R: the ACK arrival rate over the period (or over the last inter-arrival time when ACKs
    /// are sparser than one per period).
    pub fn ack_rate_bps(&self, mtu: u64) -> f64 {
        let span = self.period_ps.max(self.ack_gap_ps);
        (self.acks as u64 * mtu) as f64 * 8.0 * PS_PER_S as f64 / span as f64
    }

    fn set_rate(&mut self, p: &AccParams, tx: &mut Tx, rate: f64) {
        self.rate_bps = rate.clamp(p.min_rate.0 as f64, tx.line_rate_bps() as f64);
        tx.ctl().rate_bps = (self.rate_bps.round() as u64).max(1);
    }

    /// Lines 1-11: a steadily congested period.
    fn congested(&mut self, p: &AccParams, tx: &mut Tx, sent_bytes: u64, acked_bytes: u64) {
        let mtu = tx.mtu_payload_bytes();
        if !self.halted && tx.snd_una() > self.snd_nxt_start {
            let r = self.ack_rate_bps(mtu);
            let rate_before = self.rate_bps;
            self.set_rate(p, tx, r);
            if p.halt && sent_bytes > acked_bytes {
                let t_halt = secs_to_ps((sent_bytes - acked_bytes) as f64 * 8.0 / r);
                tx.ctl().hold_until_ps = tx.now_ps + t_halt;
                self.halted = true;
                self.extended = false;
                self.snd_nxt_start = tx.snd_nxt();
                (self.halt_r_bps, self.halt_rs_bps) = (r, rate_before);
                self.halts.push(Halt {
                    start_ps: tx.now_ps,
                    end_ps: tx.now_ps + t_halt,
                    rate_bps: r,
                });
            }
        }
    }

    /// Lines 6-10, at the end of the first period of a halt: extend it by the excess sent in
    /// the period the halt was decided in, which the ACKs have not shown yet.
    fn extend_halt(&mut self, tx: &mut Tx, sent_bytes: u64) {
        self.extended = true;
        let (r, rs) = (self.halt_r_bps, self.halt_rs_bps);
        if rs <= r {
            return;
        }
        let excess = sent_bytes as f64 - sent_bytes as f64 * r / rs;
        let t_extend = secs_to_ps(excess * 8.0 / r);
        tx.ctl().hold_until_ps += t_extend;
        if let Some(h) = self.halts.last_mut() {
            h.end_ps += t_extend;
        }
    }

    /// The end of a period: classify it and apply Algorithm 1.
    fn end_period(&mut self, p: &AccParams, tx: &mut Tx) {
        let now = tx.now_ps;
        if self.halted && now >= tx.ctl().hold_until_ps {
            self.halted = false;
        }
        let acked = tx.snd_una() - self.una_at_start;
        let sent_now = tx.snd_nxt() - self.nxt_at_start;
        let state = self.classify(p);
        if self.halted {
            if state == PeriodState::Congested && !self.extended {
                self.extend_halt(tx, self.sent_prev);
            }
        } else {
            match state {
                PeriodState::Congested => self.congested(p, tx, self.sent_prev, acked),
                PeriodState::Undetermined => {
                    self.n_v += 1;
                    if self.n_v > p.p_thresh {
                        self.set_rate(p, tx, self.rate_bps / 2.0);
                    }
                }
                PeriodState::Uncongested => {
                    let line = tx.line_rate_bps() as f64;
                    let ri_low = if p.ri_low.0 > 0 {
                        p.ri_low.0 as f64
                    } else {
                        line / 250.0
                    };
                    let ri_high = if p.ri_high.0 > 0 {
                        p.ri_high.0 as f64
                    } else {
                        10.0 * ri_low
                    };
                    let ri = if self.n_u < 2 { ri_low } else { ri_high };
                    self.set_rate(p, tx, self.rate_bps + (line - self.rate_bps) / line * ri);
                    self.n_u += 1;
                }
                PeriodState::PartlyCongested | PeriodState::Silent => {}
            }
        }
        if state != PeriodState::Uncongested {
            self.n_u = 0;
        }
        if state != PeriodState::Undetermined {
            self.n_v = 0;
        }
        // dS accumulates over periods in which no ACK arrives.
        self.sent_prev = if self.acks == 0 {
            self.sent_prev + sent_now
        } else {
            sent_now
        };
        (self.acks, self.ce_acks, self.ue_acks) = (0, 0, 0);
        (self.nxt_at_start, self.una_at_start) = (tx.snd_nxt(), tx.snd_una());
    }
}

fn secs_to_ps(s: f64) -> u64 {
    (s * PS_PER_S as f64).round() as u64
}

impl SenderPart<AccParams> for AccSender {
    fn new(_: &AccParams) -> Self {
        AccSender::default()
    }
    fn on_start(&mut self, p: &AccParams, tx: &mut Tx) {
        self.rate_bps = tx.line_rate_bps() as f64;
        self.period_ps = if p.period.0 > 0 {
            p.period.0
        } else {
            tx.base_rtt_ps().max(1)
        };
        (self.nxt_at_start, self.una_at_start) = (tx.snd_nxt(), tx.snd_una());
        tx.set_timer(PERIOD, tx.now_ps + self.period_ps);
    }
    fn on_ack(&mut self, _: &AccParams, tx: &mut Tx, ack: &AckInfo) {
        self.acks += 1;
        self.acks_by_mark[ack.mark as usize] += 1;
        match ack.mark {
            Mark::Ce => self.ce_acks += 1,
            Mark::Ue => self.ue_acks += 1,
            Mark::None => {}
        }
        let halt_end = self.halts.last().map_or(0, |h| h.end_ps);
        self.ack_gap_ps = match self.last_ack_ps {
            Some(t) if t >= halt_end || tx.now_ps < halt_end => tx.now_ps - t,
            _ => 0,
        };
        self.last_ack_ps = Some(tx.now_ps);
    }
    fn on_timer(&mut self, p: &AccParams, tx: &mut Tx, _: u8) {
        self.end_period(p, tx);
        tx.set_timer(PERIOD, tx.now_ps + self.period_ps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::TestFlow;
    use crate::net::SchemeHdr;
    use crate::sim::PS_PER_US;

    const LINE: u64 = 100_000_000_000;
    const T: u64 = 10 * PS_PER_US;

    fn flow(p: &AccParams) -> (AccSender, TestFlow) {
        let mut f = TestFlow::new(LINE);
        f.f.base_rtt_ps = T;
        let mut s = AccSender::default();
        s.on_start(p, &mut f.tx(0));
        (s, f)
    }

    /// `n` ACKs of 1000 B each with `mark`, arriving evenly over the period ending at `end`,
    /// while the sender sent `sent` bytes.
    fn period(
        s: &mut AccSender,
        p: &AccParams,
        f: &mut TestFlow,
        end: u64,
        n: u32,
        mark: Mark,
        sent: u64,
    ) {
        f.f.snd_nxt += sent;
        for i in 0..n {
            f.f.snd_una += 1000;
            let a = AckInfo {
                nack: false,
                ack_seq: f.f.snd_una,
                newly_acked_bytes: 1000,
                mark,
                rtt_ps: T,
                hdr: SchemeHdr::default(),
                int: &[],
            };
            let now = end - T + (i as u64 + 1) * T / (n as u64 + 1);
            s.on_ack(p, &mut f.tx(now), &a);
        }
        s.on_timer(p, &mut f.tx(end), PERIOD);
    }

    fn rate(f: &TestFlow) -> f64 {
        f.f.ctl.rate_bps as f64
    }

    #[test]
    fn congested_flow_halts_for_its_excess_over_the_ack_rate_then_sends_at_it() {
        // Lines 2-5, 27-33. Period 1: 125 KB sent at line rate (10 us x 100G). Period 2: 25 ACKs
        // of 1 KB, all CE, so R = 25 KB / 10 us = 20 Gb/s and the excess is 125 - 25 = 100 KB:
        // t_Halt = 100 KB / 20 Gb/s = 40 us.
        let p = AccParams::default();
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 2 * T, 25, Mark::Ce, 125_000);
        assert_eq!(f.f.ctl.rate_bps, 20_000_000_000, "R_s = R");
        assert!(s.halted);
        assert_eq!(f.f.ctl.hold_until_ps, 2 * T + 40 * PS_PER_US);
        assert_eq!(s.snd_nxt_start, f.f.snd_nxt);
    }

    #[test]
    fn the_first_halted_period_extends_the_halt_by_the_unseen_excess() {
        // Lines 6-10: in period 2 the flow still sent 125 KB at R_s = 100G; the pipe took
        // R/R_s of it, so r = 125 KB x (1 - 20/100) = 100 KB more, t_extend = 40 us.
        let p = AccParams::default();
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 2 * T, 25, Mark::Ce, 125_000);
        period(&mut s, &p, &mut f, 3 * T, 25, Mark::Ce, 0);
        assert_eq!(f.f.ctl.hold_until_ps, 2 * T + 80 * PS_PER_US);
        // Only once per halt.
        period(&mut s, &p, &mut f, 4 * T, 25, Mark::Ce, 0);
        assert_eq!(f.f.ctl.hold_until_ps, 2 * T + 80 * PS_PER_US);
        assert_eq!(
            f.f.ctl.rate_bps, 20_000_000_000,
            "no rate change while halted"
        );
    }

    #[test]
    fn after_a_halt_only_acks_past_snd_nxt_start_count() {
        // Line 2: the halt ends at 2T + 80 us; ACKs of packets sent before it change nothing.
        let p = AccParams::default();
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 2 * T, 25, Mark::Ce, 125_000);
        let start = s.snd_nxt_start;
        let end = 2 * T + 80 * PS_PER_US + T;
        // snd_una stays below snd_nxt_start: ineligible, no new halt or throttle.
        f.f.snd_una = start - 30_000;
        period(&mut s, &p, &mut f, end, 5, Mark::Ce, 10_000);
        assert!(!s.halted && f.f.ctl.hold_until_ps < end);
        assert_eq!(f.f.ctl.rate_bps, 20_000_000_000);
        // Past it: throttled to the new ACK rate (10 ACKs / 10 us = 8 Gb/s) and halted again.
        period(&mut s, &p, &mut f, end + T, 0, Mark::None, 0);
        f.f.snd_una = start;
        period(&mut s, &p, &mut f, end + 2 * T, 10, Mark::Ce, 0);
        assert_eq!(f.f.ctl.rate_bps, 8_000_000_000);
    }

    #[test]
    fn sparse_acks_use_the_inter_arrival_time() {
        // Section 4.3: one ACK 30 us after the previous one gives 1 KB / 30 us, not / T.
        let p = AccParams::default();
        let (mut s, mut f) = flow(&p);
        let a = AckInfo {
            nack: false,
            ack_seq: 1000,
            newly_acked_bytes: 1000,
            mark: Mark::Ce,
            rtt_ps: T,
            hdr: SchemeHdr::default(),
            int: &[],
        };
        // The first ACK has no inter-arrival time: 1 KB / T, however long (50 us) the flow
        // waited for it.
        s.on_ack(&p, &mut f.tx(50 * PS_PER_US), &a);
        let r = s.ack_rate_bps(1000);
        assert!((r - 8e3 / 10e-6).abs() < 1.0, "{r}");
        s.acks = 0;
        s.on_ack(&p, &mut f.tx(80 * PS_PER_US), &a);
        let r = s.ack_rate_bps(1000);
        assert!((r - 8e3 / 30e-6).abs() < 1.0, "{r}");
        // A gap spanning a halt the sender sat out (ended at 150 us) is not the pipe's: T again.
        s.halts.push(Halt {
            start_ps: 90 * PS_PER_US,
            end_ps: 150 * PS_PER_US,
            rate_bps: 1e9,
        });
        s.acks = 0;
        s.on_ack(&p, &mut f.tx(170 * PS_PER_US), &a);
        let r = s.ack_rate_bps(1000);
        assert!((r - 8e3 / 10e-6).abs() < 1.0, "{r}");
    }

    #[test]
    fn uncongested_flows_increase_in_two_stages() {
        // Lines 13-21: RI_Low = 100G / 250 = 400 Mb/s for two periods, then RI_High = 4 Gb/s,
        // each scaled by (line - R_s) / line.
        let p = AccParams::default();
        let (mut s, mut f) = flow(&p);
        s.set_rate(&p, &mut f.tx(0), 50e9);
        let mut expect = 50e9;
        for k in 1..=4u64 {
            period(&mut s, &p, &mut f, k * T, 10, Mark::None, 10_000);
            let ri = if k <= 2 { 0.4e9 } else { 4e9 };
            expect += (100e9 - expect) / 100e9 * ri;
            assert!(
                (rate(&f) - expect).abs() < 2.0,
                "period {k}: {} vs {expect}",
                rate(&f)
            );
        }
    }

    #[test]
    fn victim_flows_halve_only_after_p_thresh_ue_periods() {
        // Lines 22-26 with P_thresh = 1: the first UE period keeps the rate, the second halves.
        let p = AccParams::default();
        let (mut s, mut f) = flow(&p);
        s.set_rate(&p, &mut f.tx(0), 40e9);
        period(&mut s, &p, &mut f, T, 10, Mark::Ue, 10_000);
        assert_eq!(rate(&f), 40e9);
        period(&mut s, &p, &mut f, 2 * T, 10, Mark::Ue, 10_000);
        assert_eq!(rate(&f), 20e9);
        period(&mut s, &p, &mut f, 3 * T, 10, Mark::Ue, 10_000);
        assert_eq!(rate(&f), 10e9);
        // A clean period resets the count.
        period(&mut s, &p, &mut f, 4 * T, 10, Mark::None, 10_000);
        period(&mut s, &p, &mut f, 5 * T, 10, Mark::Ue, 10_000);
        assert!(rate(&f) > 10e9);
    }

    #[test]
    fn ce_below_ninety_percent_is_not_steady_congestion_and_ce_beats_ue() {
        let p = AccParams::default();
        let (mut s, _) = flow(&p);
        (s.acks, s.ce_acks, s.ue_acks) = (10, 8, 2);
        assert_eq!(s.classify(&p), PeriodState::PartlyCongested);
        (s.acks, s.ce_acks, s.ue_acks) = (10, 9, 1);
        assert_eq!(s.classify(&p), PeriodState::Congested);
        (s.acks, s.ce_acks, s.ue_acks) = (10, 0, 1);
        assert_eq!(s.classify(&p), PeriodState::Undetermined);
    }

    #[test]
    fn without_halt_the_flow_is_only_throttled() {
        let p = Acc::default_params("acc_nohalt");
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 2 * T, 25, Mark::Ce, 125_000);
        assert_eq!(f.f.ctl.rate_bps, 20_000_000_000);
        assert!(!s.halted && f.f.ctl.hold_until_ps == 0);
    }

    #[test]
    fn delta_s_accumulates_over_periods_without_acks() {
        // 125 KB in each of two silent periods, then 25 CE ACKs: excess 250 - 25 = 225 KB at
        // 20 Gb/s = 90 us.
        let p = AccParams::default();
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 2 * T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 3 * T, 25, Mark::Ce, 0);
        assert_eq!(f.f.ctl.hold_until_ps, 3 * T + 90 * PS_PER_US);
    }
}
