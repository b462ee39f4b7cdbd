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
//!     r = dS - dS x R / R_s (lines 6-10), dS the bytes sent in the period the halt was
//!     decided in (T_i) and R_s the *measured* sending rate of the period before (T_{i-1},
//!     section 4.2: "the sending rate R_s in the period before source halt"), which is
//!     below the set rate when PFC paused the NIC. Applied once per halt: Figure 7 has only
//!     T_i's excess unseen by the ACKs.
//!
//! * **undetermined** (UE, no steady CE): N_v += 1, and if N_v > P_thresh, R_s = R_s / 2
//!   (lines 22-26);
//! * **uncongested** (no mark): R_s += (lineRate - R_s) / lineRate x RI, with RI = RI_Low for
//!   the first 2 consecutive uncongested periods and RI_High after (lines 13-21).
//!
//! `acc_nohalt` (section 6.4, Figure 16) throttles to R without halting.
//!
//! Readings (section 4.2-4.3, named here and in the docs):
//! * R counts each ACK as one packet's payload (`r_bytes = "payload"`): MTU in line 3 is the
//!   `Mtu` of the HPCC simulator the authors built ACC in (section 6.1), which its scripts
//!   set to the payload size, while its pacer charges whole frames; so flows resume at R
//!   a little below C (0.954 C with 1000 B payloads) and the queue drains. `"wire"` counts
//!   whole frames (ccsim's earlier reading of Proposition 1): the resumed rates then add up
//!   to C, a queue of a few packets stands at TCD's 2 KB threshold, no period is clean and
//!   the rates freeze unequal (Jain 0.91 on the 10-to-1, against 0.99 with payload bytes).
//! * Section 4.2: out of a halt, an ACK counts in a period only once snd_una has passed the
//!   snd_nxt recorded at the halt ("the ACK is considered eligible"); during the halt every
//!   ACK counts, for lines 6-10.
//! * R is clamped to [`min_rate`, line rate] before use, and t_Halt uses the clamped R, the
//!   rate the flow will actually drain and then send at.
//! * t_Halt exists to drain the flow's own backlog, so it is bounded by it: the flow's
//!   bytes in flight less one base RTT at R (the pipe's share), drained at R. dS - dA is the
//!   paper's estimate of that backlog when ACKs are regular; without the bound, dS summed
//!   over silent periods and R from one ACK after a long gap gave halts of many ms. The
//!   extension is bounded the same way (the halt never ends later than the bytes still in
//!   flight need).
//!
//! Choices where the paper is silent (named here and in the docs): a period with CE on fewer
//! than 90% of its ACKs, a period without any ACK, and periods while halted change no rate
//! (the flow is neither steadily congested nor known to be uncongested); N_u and N_v count
//! consecutive periods and reset otherwise; the initial rate is line rate; the rate never
//! falls below `min_rate` (100 Mb/s; the paper gives no floor).
//!
//! Defaults (section 6.1): RI_Low = lineRate / 250 (400 Mb/s at 100G), RI_High = 10 RI_Low,
//! P_thresh = 1, ce_fraction 0.9, T = base RTT (0), TCD threshold 2 MTU and max(T_on) 24 us.

use super::tcd::{TcdParams, TcdPort, WithTcd};
use super::{AckInfo, Params, Scheme, SchemeInfo, SenderPart, Tx};
use crate::net::Mark;
use crate::sim::quantity::{Rate, Time};
use crate::sim::input::ScenarioError;
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
    /// What one ACK counts for in R = recvNum x MTU / T (module header).
    pub r_bytes: AckBytes,
    pub tcd: TcdParams,
}

/// The MTU of line 3's R = recvNum x MTU / T (`cc.params.r_bytes`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AckBytes {
    /// A packet's payload: the `Mtu` of the HPCC simulator the authors built ACC in (its
    /// configuration sets it to the payload size; its pacer charges whole frames).
    #[default]
    Payload,
    /// A whole frame on the wire, the pacer's unit (ccsim's earlier reading of Proposition 1).
    Wire,
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
            r_bytes: AckBytes::Payload,
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
        if self.tcd.victims != super::tcd::Victims::Hold {
            return Err(ScenarioError::new(
                "cc.params.tcd.victims",
                "is for dcqcn_tcd and timely_tcd; ACC treats victims by Algorithm 1 (p_thresh)",
            ));
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
    /// dS of the previous period(s): bytes sent, accumulated while no ACK arrives, and over
    /// how many periods.
    sent_prev: u64,
    sent_prev_periods: u32,
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

/// One source halt: when, the rate R it throttled to (bytes on the wire), and the dS and dA
/// (payload bytes) it was decided from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Halt {
    pub start_ps: u64,
    pub end_ps: u64,
    pub rate_bps: f64,
    pub sent_bytes: u64,
    pub acked_bytes: u64,
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
    /// are sparser than one per period), each ACK standing for `mtu` bytes (line 3's
    /// recvNum x MTU; `AckBytes`).
    pub fn ack_rate_bps(&self, mtu: u64) -> f64 {
        let span = self.period_ps.max(self.ack_gap_ps);
        (self.acks as u64 * mtu) as f64 * 8.0 * PS_PER_S as f64 / span as f64
    }

    fn set_rate(&mut self, p: &AccParams, tx: &mut Tx, rate: f64) {
        self.rate_bps = rate.clamp(p.min_rate.0 as f64, tx.line_rate_bps() as f64);
        tx.ctl().rate_bps = (self.rate_bps.round() as u64).max(1);
    }

    /// Time to drain `excess` payload bytes of the flow at `rate_bps` (on the wire), bounded by
    /// what the flow can have queued: its bytes in flight beyond one base RTT at that rate
    /// (the pipe's share of them). The paper's estimate (dS - dA, or the extension's r) is the
    /// flow's queued bytes when its ACKs are regular; the bound keeps it physical when they
    /// are not (dS accumulated over silent periods, R from one ACK after a long gap).
    fn drain_ps(&self, tx: &Tx, excess: f64, rate_bps: f64) -> u64 {
        let wire_per_payload = wire_per_payload(tx);
        let in_flight = (tx.snd_nxt() - tx.snd_una()) as f64;
        let pipe = rate_bps / 8.0 * tx.base_rtt_ps() as f64 / PS_PER_S as f64 / wire_per_payload;
        let queued = excess.min(in_flight - pipe).max(0.0);
        secs_to_ps(queued * wire_per_payload * 8.0 / rate_bps)
    }

    /// Lines 1-5 and 27-33: a steadily congested period. The flow is throttled to R (within
    /// `min_rate` and line rate) and halts for t_Halt = (dS - dA) / R at that rate.
    fn congested(&mut self, p: &AccParams, tx: &mut Tx, sent_bytes: u64, acked_bytes: u64) {
        if !self.halted && tx.snd_una() > self.snd_nxt_start {
            let mtu = match p.r_bytes {
                AckBytes::Payload => tx.mtu_payload_bytes(),
                AckBytes::Wire => tx.mtu_wire_bytes(),
            };
            let r = self.ack_rate_bps(mtu);
            self.set_rate(p, tx, r);
            let r = self.rate_bps;
            if p.halt && sent_bytes > acked_bytes {
                let t_halt = self.drain_ps(tx, (sent_bytes - acked_bytes) as f64, r);
                tx.ctl().hold_until_ps = tx.now_ps + t_halt;
                self.halted = true;
                self.extended = false;
                self.snd_nxt_start = tx.snd_nxt();
                // R_s of line 7: the rate the flow sent at in the period before (T_{i-1}),
                // measured from dS (lower than the set rate when PFC paused the NIC).
                let secs = (self.sent_prev_periods.max(1) as u64 * self.period_ps) as f64
                    / PS_PER_S as f64;
                self.halt_rs_bps = sent_bytes as f64 * 8.0 / secs * wire_per_payload(tx);
                self.halt_r_bps = r;
                self.halts.push(Halt {
                    start_ps: tx.now_ps,
                    end_ps: tx.now_ps + t_halt,
                    rate_bps: r,
                    sent_bytes,
                    acked_bytes,
                });
            }
        }
    }

    /// Lines 6-10, at the end of the first period of a halt: extend it by the excess sent in
    /// the period the halt was decided in (T_i), which its ACKs have not shown yet:
    /// r = dS - dS x R / R_s with dS the bytes sent in T_i and R_s the measured rate of
    /// T_{i-1}; t_extend = r / R. Once per halt (Figure 7: only T_i's excess is unseen).
    fn extend_halt(&mut self, tx: &mut Tx, sent_bytes: u64) {
        self.extended = true;
        let (r, rs) = (self.halt_r_bps, self.halt_rs_bps);
        if rs <= r {
            return;
        }
        let excess = sent_bytes as f64 * (1.0 - r / rs);
        let end = tx.ctl().hold_until_ps;
        let bound = tx.now_ps + self.drain_ps(tx, f64::INFINITY, r);
        let t_extend = secs_to_ps(excess * wire_per_payload(tx) * 8.0 / r);
        let new_end = (end + t_extend).min(bound).max(end);
        tx.ctl().hold_until_ps = new_end;
        if let Some(h) = self.halts.last_mut() {
            h.end_ps = new_end;
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
        (self.sent_prev, self.sent_prev_periods) = if self.acks == 0 {
            (self.sent_prev + sent_now, self.sent_prev_periods + 1)
        } else {
            (sent_now, 1)
        };
        (self.acks, self.ce_acks, self.ue_acks) = (0, 0, 0);
        (self.nxt_at_start, self.una_at_start) = (tx.snd_nxt(), tx.snd_una());
    }
}

/// Bytes on the wire per payload byte of a full packet.
fn wire_per_payload(tx: &Tx) -> f64 {
    tx.mtu_wire_bytes() as f64 / tx.mtu_payload_bytes() as f64
}

fn secs_to_ps(s: f64) -> u64 {
    (s * PS_PER_S as f64).round() as u64
}

impl SenderPart<AccParams> for AccSender {
    fn new(_: &AccParams) -> Self {
        AccSender::default()
    }
    fn on_start(&mut self, p: &AccParams, tx: &mut Tx) {
        self.rate_bps = tx.rate_bps() as f64; // the line rate, or the flow's start_rate
        self.period_ps = if p.period.0 > 0 {
            p.period.0
        } else {
            tx.base_rtt_ps().max(1)
        };
        (self.nxt_at_start, self.una_at_start) = (tx.snd_nxt(), tx.snd_una());
        tx.set_timer(PERIOD, tx.now_ps + self.period_ps);
    }
    fn on_ack(&mut self, _: &AccParams, tx: &mut Tx, ack: &AckInfo) {
        let halt_end = self.halts.last().map_or(0, |h| h.end_ps);
        self.ack_gap_ps = match self.last_ack_ps {
            Some(t) if t >= halt_end || tx.now_ps < halt_end => tx.now_ps - t,
            _ => 0,
        };
        self.last_ack_ps = Some(tx.now_ps);
        // Section 4.2: once out of a halt, only ACKs of packets sent after it count ("the ACK
        // is considered eligible" when snd_una has passed the snd_nxt recorded at the halt).
        // During the halt they do: lines 6-10 judge the halt's first period by them.
        let halted = tx.now_ps < tx.ctl().hold_until_ps;
        if !halted && tx.snd_una() <= self.snd_nxt_start {
            return;
        }
        self.acks += 1;
        self.acks_by_mark[ack.mark as usize] += 1;
        match ack.mark {
            Mark::Ce => self.ce_acks += 1,
            Mark::Ue => self.ue_acks += 1,
            Mark::None => {}
        }
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
    /// A full packet on the wire in `TestFlow`: 1000 B payload + 48 B headers.
    const WIRE: f64 = 1048.0;

    /// Algorithm 1's arithmetic below is written with R in wire bytes (1048 B per ACK);
    /// `r_bytes_is_the_simulators_payload_mtu` checks the default.
    fn wire() -> AccParams {
        AccParams {
            r_bytes: AckBytes::Wire,
            ..AccParams::default()
        }
    }

    fn flow(p: &AccParams) -> (AccSender, TestFlow) {
        let mut f = TestFlow::new(LINE);
        f.f.base_rtt_ps = T;
        let mut s = AccSender::default();
        s.on_start(p, &mut f.tx(0));
        (s, f)
    }

    fn ack(mark: Mark, seq: u64) -> AckInfo<'static> {
        AckInfo {
            nack: false,
            ack_seq: seq,
            newly_acked_bytes: 1000,
            mark,
            rtt_ps: T,
            hdr: SchemeHdr::default(),
            int: &[],
            sack_seq: None,
            trimmed: false,
        }
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
            let now = end - T + (i as u64 + 1) * T / (n as u64 + 1);
            let a = ack(mark, f.f.snd_una);
            s.on_ack(p, &mut f.tx(now), &a);
        }
        s.on_timer(p, &mut f.tx(end), PERIOD);
    }

    fn rate(f: &TestFlow) -> f64 {
        f.f.ctl.rate_bps as f64
    }

    /// Seconds to send `bytes` at `bps`, in ps.
    fn at(bytes: f64, bps: f64) -> u64 {
        secs_to_ps(bytes * 8.0 / bps)
    }

    #[test]
    fn congested_flow_halts_for_its_excess_over_the_ack_rate_then_sends_at_it() {
        // Lines 2-5, 27-33. Period 1: 125 KB sent. Period 2: 25 ACKs, all CE, so
        // R = 25 x 1048 B / 10 us = 20.96 Gb/s on the wire and the excess is dS - dA =
        // 125 - 25 = 100 KB of payload, 104.8 KB on the wire: t_Halt = 40 us.
        let p = wire();
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 2 * T, 25, Mark::Ce, 125_000);
        assert_eq!(f.f.ctl.rate_bps, 20_960_000_000, "R_s = R");
        assert!(s.halted);
        assert_eq!(f.f.ctl.hold_until_ps, 2 * T + 40 * PS_PER_US);
        assert_eq!(s.snd_nxt_start, f.f.snd_nxt);
        let h = s.halts[0];
        assert_eq!((h.sent_bytes, h.acked_bytes), (125_000, 25_000));
    }

    #[test]
    fn r_bytes_is_the_simulators_payload_mtu() {
        // Line 3, R = recvNum x MTU / T: 25 CE ACKs in a period of 10 us. The authors' HPCC
        // simulator sets its Mtu to the payload (1000 B here): R = 20 Gb/s, which its pacer
        // then charges in whole frames. Counted as frames on the wire (1048 B): 20.96 Gb/s.
        assert_eq!(AccParams::default().r_bytes, AckBytes::Payload);
        for (r_bytes, want) in [(AckBytes::Payload, 20_000_000_000), (AckBytes::Wire, 20_960_000_000)] {
            let p = AccParams {
                r_bytes,
                ..AccParams::default()
            };
            let (mut s, mut f) = flow(&p);
            period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
            period(&mut s, &p, &mut f, 2 * T, 25, Mark::Ce, 125_000);
            assert_eq!(f.f.ctl.rate_bps, want, "{r_bytes:?}");
        }
    }

    #[test]
    fn the_first_halted_period_extends_the_halt_by_the_unseen_excess() {
        // Lines 6-10: in period 2 (T_i) the flow sent 125 KB more. R_s, the measured rate of
        // period 1, is 125 KB / 10 us on the wire (104.8 Gb/s); r = 125 KB x (1 - R / R_s) =
        // 100 KB of payload, t_extend = 40 us.
        let p = wire();
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 2 * T, 25, Mark::Ce, 125_000);
        period(&mut s, &p, &mut f, 3 * T, 25, Mark::Ce, 0);
        assert_eq!(f.f.ctl.hold_until_ps, 2 * T + 80 * PS_PER_US);
        // Only once per halt.
        period(&mut s, &p, &mut f, 4 * T, 25, Mark::Ce, 0);
        assert_eq!(f.f.ctl.hold_until_ps, 2 * T + 80 * PS_PER_US);
        assert_eq!(
            f.f.ctl.rate_bps, 20_960_000_000,
            "no rate change while halted"
        );
        assert_eq!(s.halts[0].end_ps, 2 * T + 80 * PS_PER_US);
    }

    #[test]
    fn the_extension_uses_the_measured_rate_of_the_period_before_the_halt() {
        // PFC paused the NIC for half of period 1: it sent 62.5 KB, R_s = 52.4 Gb/s. Then
        // r = 125 KB x (1 - 20.96 / 52.4) = 75 KB, t_extend = 30 us (the set rate, line
        // rate, would have given 100 KB and 40 us).
        let p = wire();
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 62_500);
        period(&mut s, &p, &mut f, 2 * T, 25, Mark::Ce, 125_000);
        // t_Halt = (62.5 - 25) KB at R = 15 us.
        assert_eq!(f.f.ctl.hold_until_ps, 2 * T + 15 * PS_PER_US);
        period(&mut s, &p, &mut f, 3 * T, 25, Mark::Ce, 0);
        assert_eq!(f.f.ctl.hold_until_ps, 2 * T + 45 * PS_PER_US);
    }

    #[test]
    fn a_halt_never_outlasts_the_flow_s_own_queued_bytes_at_its_rate() {
        // dS accumulates over 50 silent periods (50 x 125 KB), then one CE ACK arrives 500 us
        // after the previous one: R = 1048 B / 500 us = 16.8 Mb/s, clamped to min_rate
        // (100 Mb/s), the rate the flow then sends at. Unbounded, t_Halt would be
        // 6.2 MB / 100 Mb/s = 0.5 s; but the flow has only 64 KB in flight, of which one base
        // RTT at R is the pipe's: the halt drains the rest at R.
        let p = wire();
        let (mut s, mut f) = flow(&p);
        s.on_ack(&p, &mut f.tx(1), &ack(Mark::Ce, 0));
        for k in 1..=50 {
            period(&mut s, &p, &mut f, k * T, 0, Mark::None, 125_000);
        }
        f.f.snd_una = f.f.snd_nxt - 64_000;
        f.f.snd_una -= 1000;
        period(&mut s, &p, &mut f, 51 * T, 1, Mark::Ce, 0);
        assert_eq!(rate(&f), 100e6, "R clamped to min_rate");
        let pipe = 100e6 / 8.0 * 10e-6 / (WIRE / 1000.0);
        let t = f.f.ctl.hold_until_ps - 51 * T;
        assert_eq!(t, at((64_000.0 - pipe) * WIRE / 1000.0, 100e6));
        assert!(t < 6 * 1000 * PS_PER_US, "{t}");
    }

    #[test]
    fn after_a_halt_only_acks_past_snd_nxt_start_count() {
        // Line 2: the halt ends at 2T + 80 us; ACKs of packets sent before it change nothing.
        let p = wire();
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 2 * T, 25, Mark::Ce, 125_000);
        let start = s.snd_nxt_start;
        let end = 2 * T + 80 * PS_PER_US + T;
        // snd_una stays below snd_nxt_start: ineligible, no new halt or throttle.
        f.f.snd_una = start - 30_000;
        period(&mut s, &p, &mut f, end, 5, Mark::Ce, 10_000);
        assert!(!s.halted && f.f.ctl.hold_until_ps < end);
        assert_eq!(f.f.ctl.rate_bps, 20_960_000_000);
        // Section 4.2, per ACK: of 15 ACKs the first 5 bring snd_una only up to snd_nxt_start
        // and do not count; the 10 past it throttle the flow to 10 ACKs / 10 us = 8.384 Gb/s
        // on the wire, and halt it again.
        period(&mut s, &p, &mut f, end + T, 0, Mark::None, 0);
        f.f.snd_una = start - 5000;
        period(&mut s, &p, &mut f, end + 2 * T, 15, Mark::Ce, 0);
        assert_eq!(f.f.ctl.rate_bps, 8_384_000_000);
        assert!(s.halted);
    }

    #[test]
    fn sparse_acks_use_the_inter_arrival_time() {
        // Section 4.3: one ACK 30 us after the previous one gives 1 packet / 30 us, not / T.
        let p = wire();
        let (mut s, mut f) = flow(&p);
        f.f.snd_una = 1000;
        let a = ack(Mark::Ce, 1000);
        // The first ACK has no inter-arrival time: 1 packet / T, however long (50 us) the
        // flow waited for it.
        s.on_ack(&p, &mut f.tx(50 * PS_PER_US), &a);
        let r = s.ack_rate_bps(1048);
        assert!((r - 8.0 * WIRE / 10e-6).abs() < 1.0, "{r}");
        s.acks = 0;
        s.on_ack(&p, &mut f.tx(80 * PS_PER_US), &a);
        let r = s.ack_rate_bps(1048);
        assert!((r - 8.0 * WIRE / 30e-6).abs() < 1.0, "{r}");
        // A gap spanning a halt the sender sat out (ended at 150 us) is not the pipe's: T again.
        s.halts.push(Halt {
            start_ps: 90 * PS_PER_US,
            end_ps: 150 * PS_PER_US,
            rate_bps: 1e9,
            sent_bytes: 0,
            acked_bytes: 0,
        });
        s.acks = 0;
        s.on_ack(&p, &mut f.tx(170 * PS_PER_US), &a);
        let r = s.ack_rate_bps(1048);
        assert!((r - 8.0 * WIRE / 10e-6).abs() < 1.0, "{r}");
    }

    #[test]
    fn uncongested_flows_increase_in_two_stages() {
        // Lines 13-21: RI_Low = 100G / 250 = 400 Mb/s for two periods, then RI_High = 4 Gb/s,
        // each scaled by (line - R_s) / line.
        let p = wire();
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
        let p = wire();
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
        let p = wire();
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
        // 125 KB in each of two silent periods, then 25 CE ACKs: dS - dA = 250 - 25 = 225 KB.
        // The flow has 225 KB in flight, of which one base RTT at R (25 KB) is in the pipe,
        // so 200 KB can be queued: t_Halt = 200 KB at 20.96 Gb/s on the wire = 80 us.
        let p = wire();
        let (mut s, mut f) = flow(&p);
        period(&mut s, &p, &mut f, T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 2 * T, 0, Mark::None, 125_000);
        period(&mut s, &p, &mut f, 3 * T, 25, Mark::Ce, 0);
        assert_eq!(f.f.ctl.hold_until_ps, 3 * T + 80 * PS_PER_US);
    }
}
