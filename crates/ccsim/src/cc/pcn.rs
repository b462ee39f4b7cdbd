//! PCN (Cheng et al., "Re-architecting Congestion Management in Lossless Ethernet", NSDI 2020;
//! seed 004): NP-ECN marking at switches (CP), receiver-computed rates sent in periodic CNPs
//! (NP), and the gentle-to-aggressive rate law at senders (RP).
//!
//! * CP, per egress port and priority (section 5.1, Fig. 7): when the port receives a RESUME,
//!   the N packets waiting in that priority's queue leave unmarked (PN = N, one less per
//!   departure); every other departing data packet is ECN-marked if packets are still queued
//!   behind it (ECN with threshold zero). A port that is never paused marks whenever it holds a
//!   queue (real congestion); a paused port's backlog leaves unmarked (quasi-congestion).
//! * NP, per flow (5.2, Fig. 8): at the end of every period T, if packets arrived, the flow is
//!   congested when at least 95% of them were marked; RecRate = their wire bytes / T, or / the
//!   gap since the packet before them when that gap exceeds T (one packet spanning periods). A CNP
//!   then carries the ECN bit and RecRate in Mb/s (32 bits, Fig. 9), for increase as well as
//!   decrease. A period without packets sends nothing.
//! * RP, per flow (Algorithm 1): start at line rate with w = w_min. A CNP with ECN:
//!   rate = min(rate, RecRate (1 - w_min)) and w = w_min. Without: rate = rate (1 - w) +
//!   line rate x w, then w = w (1 - w) + w_max x w.
//!
//! Decisions the paper leaves open:
//! * marking is judged at dequeue, from the queue left behind, so packets that waited through a
//!   PAUSE leave unmarked and a lone packet in an idle port is not marked;
//! * PN is kept per port and priority, since PFC pauses per priority;
//! * a PAUSE that comes back while PN > 0 does not touch PN (the paused packets are still the
//!   ones waiting); the next RESUME sets PN to the packets then queued, old and new;
//! * "95%" is inclusive: congested when marked >= 95% of received;
//! * periods lie on one grid of T for every flow (boundaries at k T, clocks synchronized), as
//!   in the fluid model of Appendix A (t_k = kT for all sources). A flow's first period runs from
//!   its first packet to the first boundary at least T later (T to 2T, measured over its
//!   length); a period without packets stops the timer until the next packet. Per-flow periods
//!   (each from its own first packet) were tried: flows then settle at unequal shares, e.g.
//!   Jain 0.98 among 4 flows after 100 ms;
//! * RecRate counts wire bytes (headers included), since the RP paces wire bytes;
//! * RecRate is "normalized by 1Mbps" (5.2; a 32-bit field, Fig. 9), to the nearest Mb/s
//!   (`rec_rate_unit`, default 1 Mb/s, the packet format's). Truncated, it is below the
//!   receiving rate by up to 1 Mb/s, and at a fair share near 10 Mb/s (1024 flows on 10G)
//!   every congested CNP's min(rate, RecRate (1 - w_min)) ratchets the flows down to the
//!   floor (b1's Jain 0.010); rounded, the error is unbiased but up to 5% of a 10 Mb/s share,
//!   and with exact pacing the flows stay in phase (pcn-b1 at 1024 flows, full size: 0.76 of
//!   the bottleneck and Jain 0.96 with Mb/s, 0.97 and Jain 0.85 with `rec_rate_unit =
//!   "1kbps"`). The paper's simulator is not public; its packet format is followed;
//! * the RP floors its rate at `min_rate`, RecRate's unit of 1 Mb/s: a flow receiving less than
//!   half of that gets RecRate 0, and a flow at rate 0 would never send the packet that brings the next
//!   CNP. (The paper names no floor; 1024 flows on 10G need one below 9.7 Mb/s.)
//!
//! Defaults: T = 50 us (5.2; 6.2 recommends the network's largest RTT, so the experiments set
//! it), w_min = 1/128 (the Fig. 10 example; 6.2 recommends 0.1/N for N flows, about 1/128 for
//! N = 13, and each experiment sets its own), w_max = 0.5 (6.2).

use super::{
    CtrlInfo, DataInfo, FabricMode, Params, ReceiverPart, Rx, Scheme, SchemeInfo, SenderPart, Sw,
    SwitchPart, Tx,
};
use crate::net::{Mark, Packet, PktKind, Port, SchemeHdr, NUM_PRIO};
use crate::sim::quantity::{Rate, Time};
use crate::sim::input::ScenarioError;
use crate::sim::PS_PER_US;
use serde::{Deserialize, Serialize};

/// The scheme type of `pcn`.
pub struct Pcn;

impl Scheme for Pcn {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "pcn",
        description: "PCN: switches ECN-mark with threshold 0 except the packets a RESUME releases (NP-ECN); receivers send a CNP per period with the receiving rate and whether >= 95% of packets were marked; senders cut to the receiving rate x (1 - w_min) or move toward line rate with a weight growing from w_min to w_max.",
        paper: "Cheng et al., Re-architecting Congestion Management in Lossless Ethernet, NSDI 2020",
        fabric: FabricMode::Lossless,
        ..SchemeInfo::BASE
    }];
    type Params = PcnParams;
    type Sender = PcnRp;
    type Receiver = PcnNp;
    type Switch = PcnCp;
    fn default_params(_: &str) -> PcnParams {
        PcnParams::default()
    }
}

/// Control code of a CNP: `mark` is its ECN bit, `hdr.a` the receiving rate in Mb/s.
pub const CNP: u8 = 1;
const TIMER_PERIOD: u8 = 0;

/// PCN parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PcnParams {
    /// CNP period T of the notification point.
    pub period: Time,
    /// Weight of a rate decrease, and the increase weight's start.
    pub w_min: f64,
    /// Limit of the increase weight.
    pub w_max: f64,
    /// A period is congested when at least this fraction of its packets were marked.
    pub congested_fraction: f64,
    /// Lowest sending rate (ccsim's floor, see the module header).
    pub min_rate: Rate,
    /// The unit RecRate is carried in (the paper's format: 1 Mb/s).
    pub rec_rate_unit: Rate,
}

impl Default for PcnParams {
    fn default() -> Self {
        PcnParams {
            period: Time(50 * PS_PER_US),
            w_min: 1.0 / 128.0,
            w_max: 0.5,
            congested_fraction: 0.95,
            min_rate: Rate(1_000_000),
            rec_rate_unit: Rate(1_000_000),
        }
    }
}

impl Params for PcnParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        let e = |f: &str, m: &str| Err(ScenarioError::new(&format!("cc.params.{f}"), m));
        if self.period.0 == 0 {
            return e(
                "period",
                "must be > 0 (e.g. \"50us\", the network's largest RTT)",
            );
        }
        if !(self.w_min > 0.0 && self.w_min <= self.w_max && self.w_max < 1.0) {
            return e(
                "w_min",
                "need 0 < w_min <= w_max < 1 (the paper: w_min = 0.1/N flows, w_max = 0.5)",
            );
        }
        if !(self.congested_fraction > 0.0 && self.congested_fraction <= 1.0) {
            return e("congested_fraction", "must be in (0, 1] (the paper: 0.95)");
        }
        if self.rec_rate_unit.0 == 0 {
            return e(
                "rec_rate_unit",
                "must be > 0 (the paper's CNP format: \"1Mbps\")",
            );
        }
        if self.min_rate.0 == 0 {
            return e(
                "min_rate",
                "must be > 0: a flow at rate 0 never hears from its receiver again",
            );
        }
        Ok(())
    }
}

/// CP: NP-ECN state of one egress port.
#[derive(Clone, Debug)]
pub struct PcnCp {
    /// Per priority: packets still to leave unmarked since the last RESUME.
    pn: [u32; NUM_PRIO],
}

impl SwitchPart<PcnParams> for PcnCp {
    fn new(_: &PcnParams, _: &Port) -> Self {
        PcnCp { pn: [0; NUM_PRIO] }
    }
    fn on_resume(&mut self, _: &PcnParams, sw: &mut Sw) {
        let prio = sw.prio as usize;
        self.pn[prio] = sw.port().prios[prio].len() as u32;
    }
    fn on_dequeue(&mut self, _: &PcnParams, sw: &mut Sw, pkt: &mut Packet) {
        let pn = &mut self.pn[sw.prio as usize];
        if *pn > 0 {
            *pn -= 1;
        } else if pkt.kind == PktKind::Data && sw.queue_bytes() > 0 {
            pkt.mark = pkt.mark.merge(Mark::Ce);
        }
    }
}

/// NP: what one flow's receiver counts in the current period.
#[derive(Clone, Debug, Default)]
pub struct PcnNp {
    /// A period is running (its timer is set).
    running: bool,
    packets: u32,
    marked: u32,
    wire_bytes: u64,
    /// Arrival of the last packet of earlier periods, and the gap from it to this period's
    /// first packet.
    last_arrival_ps: Option<u64>,
    gap_ps: u64,
    /// Start of the current measurement: the period's start, or a flow's first packet.
    first_ps: u64,
}

impl PcnNp {
    /// The CNP that closes a period at `now_ps`: (congested, receiving rate in b/s), or None
    /// if no packet arrived. Resets the counts.
    pub fn close_period(&mut self, p: &PcnParams, now_ps: u64) -> Option<(bool, f64)> {
        if self.packets == 0 {
            return None;
        }
        let congested = self.marked as f64 >= p.congested_fraction * self.packets as f64;
        // Over T; over the gap to the packet before when it exceeds T; over the time since the
        // flow's first packet when that is longer (a first period runs T to 2T).
        let t = p.period.0;
        let span_ps = if self.gap_ps > t {
            self.gap_ps
        } else {
            t.max(now_ps - self.first_ps)
        };
        let rate_bps = self.wire_bytes as f64 * 8e12 / span_ps as f64;
        (self.packets, self.marked, self.wire_bytes, self.gap_ps) = (0, 0, 0, 0);
        self.first_ps = now_ps;
        Some((congested, rate_bps))
    }

    /// A data packet of `wire_bytes` arrived at `now_ps` with `mark`.
    pub fn count(&mut self, now_ps: u64, wire_bytes: u64, mark: Mark) {
        if self.packets == 0 {
            self.gap_ps = self.last_arrival_ps.map_or(0, |t| now_ps - t);
            if !self.running {
                self.first_ps = now_ps;
            }
        }
        self.packets += 1;
        self.marked += (mark == Mark::Ce) as u32;
        self.wire_bytes += wire_bytes;
        self.last_arrival_ps = Some(now_ps);
    }
}

/// RecRate as the CNP carries it: units of `unit_bps` (the paper's 1 Mb/s) in 32 bits,
/// rounded to the nearest (module header).
pub fn rec_rate_field(rate_bps: f64, unit_bps: u64) -> u32 {
    (rate_bps / unit_bps as f64).round().min(u32::MAX as f64) as u32
}

impl ReceiverPart<PcnParams> for PcnNp {
    type Host = ();
    fn new(_: &PcnParams) -> Self {
        PcnNp::default()
    }
    fn on_data(&mut self, _: &mut (), p: &PcnParams, rx: &mut Rx, d: &DataInfo) {
        self.count(rx.now_ps, d.size_bytes as u64, d.mark);
        if !self.running {
            // The first boundary of the common grid at least T away.
            self.running = true;
            let t = p.period.0;
            rx.set_timer(TIMER_PERIOD, (rx.now_ps + t).div_ceil(t) * t);
        }
    }
    fn on_timer(&mut self, _: &mut (), p: &PcnParams, rx: &mut Rx, _: u8) {
        match self.close_period(p, rx.now_ps) {
            Some((congested, rate_bps)) => {
                let mark = if congested { Mark::Ce } else { Mark::None };
                let hdr = SchemeHdr {
                    a: rec_rate_field(rate_bps, p.rec_rate_unit.0),
                    b: 0,
                };
                rx.send_ctrl(CNP, hdr, mark);
                rx.set_timer(TIMER_PERIOD, rx.now_ps + p.period.0);
            }
            None => self.running = false,
        }
    }
}

/// RP: one flow's sending rate and increase weight (Algorithm 1).
#[derive(Clone, Debug, Default)]
pub struct PcnRp {
    rate_bps: f64,
    line_bps: f64,
    w: f64,
}

impl PcnRp {
    /// Algorithm 1 for one CNP: `congested` is its ECN bit, `rec_bps` its receiving rate.
    pub fn on_cnp(&mut self, p: &PcnParams, congested: bool, rec_bps: f64) {
        if congested {
            self.rate_bps = self.rate_bps.min(rec_bps * (1.0 - p.w_min));
            self.w = p.w_min;
        } else {
            self.rate_bps = self.rate_bps * (1.0 - self.w) + self.line_bps * self.w;
            self.w = self.w * (1.0 - self.w) + p.w_max * self.w;
        }
        self.rate_bps = self.rate_bps.clamp(p.min_rate.0 as f64, self.line_bps);
    }
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
    pub fn w(&self) -> f64 {
        self.w
    }
}

impl SenderPart<PcnParams> for PcnRp {
    fn new(_: &PcnParams) -> Self {
        PcnRp::default()
    }
    fn on_start(&mut self, p: &PcnParams, tx: &mut Tx) {
        self.line_bps = tx.line_rate_bps() as f64;
        self.rate_bps = tx.rate_bps() as f64; // the line rate, or the flow's start_rate
        self.w = p.w_min;
    }
    fn on_ctrl(&mut self, p: &PcnParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code == CNP {
            self.on_cnp(p, c.mark == Mark::Ce, c.hdr.a as f64 * p.rec_rate_unit.0 as f64);
            tx.ctl().rate_bps = self.rate_bps.round() as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::with_sw;

    #[test]
    fn packets_waiting_at_a_resume_leave_unmarked_then_threshold_zero_applies() {
        let p = PcnParams::default();
        let mut port = Port::new(0, 1, 40_000_000_000, 0, false);
        for id in 0..3 {
            port.enqueue(3, id, 1_048);
        }
        let mut cp = PcnCp::new(&p, &port);
        with_sw(&port, 3 * 1_048, 0, false, |sw| cp.on_resume(&p, sw));
        let leave = |cp: &mut PcnCp, behind: u64| {
            let mut pkt = Packet::new(PktKind::Data, 0, 1, 1_048, 3);
            with_sw(&port, behind, 0, false, |sw| {
                cp.on_dequeue(&p, sw, &mut pkt)
            });
            pkt.mark
        };
        // The three paused packets leave unmarked although packets wait behind them.
        for _ in 0..3 {
            assert_eq!(leave(&mut cp, 5_000), Mark::None);
        }
        // Later packets: marked while a queue is left behind, not when the port is empty.
        assert_eq!(leave(&mut cp, 1_048), Mark::Ce);
        assert_eq!(leave(&mut cp, 0), Mark::None);
    }

    fn rp(line_bps: f64, rate_bps: f64) -> PcnRp {
        PcnRp {
            rate_bps,
            line_bps,
            w: 1.0 / 128.0,
        }
    }

    #[test]
    fn a_marked_cnp_cuts_to_the_receiving_rate_less_w_min_and_never_raises() {
        let p = PcnParams::default();
        let mut r = rp(40e9, 30e9);
        r.w = 0.3;
        r.on_cnp(&p, true, 9.5e9);
        assert_eq!(r.rate_bps(), 9.5e9 * (1.0 - 1.0 / 128.0));
        assert_eq!(r.w(), 1.0 / 128.0);
        // While the queue drains, the receiving rate can exceed the sending rate: no increase.
        r.on_cnp(&p, true, 20e9);
        assert_eq!(r.rate_bps(), 9.5e9 * (1.0 - 1.0 / 128.0));
    }

    #[test]
    fn an_unmarked_cnp_averages_toward_line_rate_and_grows_the_weight() {
        let p = PcnParams::default();
        let mut r = rp(40e9, 10e9);
        r.w = 0.25;
        r.on_cnp(&p, false, 1.0);
        assert_eq!(r.rate_bps(), 10e9 * 0.75 + 40e9 * 0.25);
        assert_eq!(r.w(), 0.25 * 0.75 + 0.5 * 0.25);
    }

    #[test]
    fn the_weight_rises_gently_then_aggressively_as_in_fig_10() {
        // w_min = 1/128, w_max = 0.5, from (almost) zero: under 10% of line rate after 5
        // unmarked CNPs, 95% after 15 (section 5.3); w tends to w_max.
        let p = PcnParams {
            min_rate: Rate(1),
            ..PcnParams::default()
        };
        let mut r = rp(100e9, 1.0);
        let mut rates = Vec::new();
        for _ in 0..40 {
            r.on_cnp(&p, false, 0.0);
            rates.push(r.rate_bps() / 100e9);
        }
        assert!(rates[4] <= 0.10, "after 5 CNPs: {}", rates[4]);
        assert!(rates[14] >= 0.95, "after 15 CNPs: {}", rates[14]);
        assert!((r.w() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn the_rate_stays_between_min_rate_and_line_rate() {
        let p = PcnParams::default();
        let mut r = rp(10e9, 5e9);
        r.on_cnp(&p, true, 0.0);
        assert_eq!(r.rate_bps(), 1e6);
        for _ in 0..100 {
            r.on_cnp(&p, false, 0.0);
        }
        assert!(r.rate_bps() <= 10e9);
    }

    #[test]
    fn the_receiver_judges_95_percent_inclusive_and_measures_over_t() {
        let p = PcnParams::default();
        let t = p.period.0;
        let mut np = PcnNp::default();
        for i in 0..20 {
            let mark = if i == 0 { Mark::None } else { Mark::Ce };
            np.count(i * 1_000_000, 1_048, mark);
        }
        // 19 of 20 = 95%: congested; 20 x 1048 B in 50 us.
        let (congested, rate) = np.close_period(&p, t).unwrap();
        assert!(congested);
        assert!((rate - 20.0 * 1048.0 * 8.0 / 50e-6).abs() < 1e-3);
        for i in 0..20 {
            let mark = if i < 2 { Mark::None } else { Mark::Ce };
            np.count(t + i * 1_000_000, 1_048, mark);
        }
        assert!(
            !np.close_period(&p, 2 * t).unwrap().0,
            "18 of 20 is below 95%"
        );
        // A period without packets sends nothing.
        assert_eq!(np.close_period(&p, 3 * t), None);
    }

    #[test]
    fn one_packet_spanning_periods_is_measured_over_its_gap() {
        let p = PcnParams::default();
        let t = p.period.0;
        let mut np = PcnNp::default();
        np.count(0, 1_048, Mark::None);
        np.close_period(&p, t);
        // The next packet comes 3 periods later: its rate is over the 150 us gap, not T.
        np.count(3 * t, 1_048, Mark::None);
        let (_, rate) = np.close_period(&p, 4 * t).unwrap();
        assert!((rate - 1048.0 * 8.0 / 150e-6).abs() < 1e-3);
    }

    #[test]
    fn a_first_period_is_measured_from_the_first_packet_to_its_boundary() {
        // A flow's first packet at 0.3 T: its period closes at the grid boundary 2 T, and its
        // rate is over the 1.7 T since that packet, not over T.
        let p = PcnParams::default();
        let t = p.period.0;
        let mut np = PcnNp::default();
        np.count(3 * t / 10, 1_048, Mark::None);
        np.count(t, 1_048, Mark::None);
        let (_, rate) = np.close_period(&p, 2 * t).unwrap();
        let span_s = 1.7 * t as f64 / 1e12;
        assert!((rate - 2.0 * 1048.0 * 8.0 / span_s).abs() < 1e-3 * rate);
    }

    #[test]
    fn rec_rate_is_carried_in_mbps_in_32_bits() {
        let mbps = PcnParams::default().rec_rate_unit.0;
        assert_eq!(mbps, 1_000_000);
        assert_eq!(rec_rate_field(9.5e9, mbps), 9_500);
        // To the nearest Mb/s: a truncated field would sit below the receiving rate, and
        // min(rate, RecRate (1 - w_min)) would ratchet slow flows down.
        assert_eq!(rec_rate_field(9.7e6, mbps), 10);
        assert_eq!(rec_rate_field(9.4e6, mbps), 9);
        assert_eq!(rec_rate_field(499_999.0, mbps), 0);
        assert_eq!(rec_rate_field(1e30, mbps), u32::MAX);
        // The fair share of 1024 flows on 10G, 9.766 Mb/s: 10 in Mb/s (2.4% over), 9,766 in
        // kb/s; 400 Gb/s still fits 32 bits of kb/s.
        assert_eq!(rec_rate_field(10e9 / 1024.0, mbps), 10);
        assert_eq!(rec_rate_field(10e9 / 1024.0, 1_000), 9_766);
        assert_eq!(rec_rate_field(400e9, 1_000), 400_000_000);
    }
}
