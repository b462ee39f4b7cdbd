//! AMRT: receiver-driven transport with anti-ECN marking, on a lossy fabric.
//!
//! Source: Hu, Huang, Li, Wang, He, "A Receiver-Driven Transport Protocol With High Link
//! Utilization Using Anti-ECN Marking in Data Center Networks", IEEE TNSM 2023, §IV (design),
//! §VI (the testbed switch), §VIII-A (settings).
//!
//! * **Switch** (§IV-A, Eq. 1): a data packet leaving an egress port keeps its "room" bit (the
//!   anti-ECN CE code point, set to 1 by the sender) only if the port was idle for at least one
//!   MSS time (`mss` x 8 / port rate, MSS = 1500 B) before it; otherwise the bit is cleared, so
//!   across hops it is the AND of every hop's verdict. The paper's t_inv is the time between two
//!   dequeues; read literally, back-to-back frames of 1538 B would always count as idle, so
//!   ccsim measures the idle gap: from the end of the port's previous transmission (any packet:
//!   data, grants, ACKs all occupy the link) to the start of this one. `marking = "queue"` is
//!   the testbed switch of §VI instead: the bit survives when at most one packet waits behind.
//! * **Receiver** (§IV-B): one grant per data packet that arrives, echoing its room bit. A
//!   grant entitles the sender to one packet, or two when it says "room". If nothing of a flow
//!   arrives for `regrant_after` (one RTT by default: twice the data's smoothed one-way delay,
//!   queueing included, at least the base RTT) while packets it is entitled to are
//!   missing, or a gap below what arrived stays that long, the receiver re-issues a grant for
//!   each missing packet (naming it), which covers lost data and lost grants alike. The paper
//!   times each grant ("not arrived ... within 1 x RTT"); ccsim times the flow (one lazily
//!   re-armed timer), so a packet skipped by a later arrival is granted again once the hole
//!   has stood one RTT. `regrant_at_once = true` (ccsim's earlier addition, not the paper's)
//!   re-grants a skipped packet as soon as a later one arrives (a flow keeps one path and
//!   queues are FIFO, so it was lost); in Web Search at 0.7 that doubles AMRT's drops.
//! * **Fair marks** (`fair_marks = true`; §VIII-F has no algorithm, this one is ccsim's): a
//!   receiving host pools the room marks its flows' data brings and hands each one out
//!   round-robin over its inbound flows that the sender still has packets for. A mark that
//!   goes to another flow than the one it arrived on turns into a plain grant for the arrival
//!   and an extra one-packet grant for the chosen flow, so the host grants the same number of
//!   packets and only who gets the extra one changes.
//! * **Sender** (§IV-C): line rate in the first RTT: `unscheduled` bytes (default one BDP of
//!   the fabric's longest base RTT; the paper says the flow starts at line rate "in the first
//!   RTT", so one BDP is inferred), then one packet per grant and two per grant with "room". No
//!   rate decrease. A grant naming a packet resends it first.
//!
//! * **Sender backstop** (ccsim's, not the paper's; `cc/backstop.rs`): a sender that hears
//!   nothing (no grant, no ACK) for `sender_timeout` (default four base RTTs) sends its first
//!   unacknowledged packet again.
//!
//! Switch hooks see only data packets here; every packet counts in the idle gap through the
//! port's transmitter state. The engine's cumulative ACKs still flow (they end the flow); the
//! paper's receiver folds them into its grants.

use super::{
    AckInfo, BaseRtt, CtrlInfo, DataInfo, DataOut, FabricMode, Params, ReceiverPart, Rx, Scheme,
    SchemeInfo, SenderPart, Sw, SwitchPart, Tx,
};
use super::backstop::Backstop;
use crate::net::{Mark, Packet, PktKind, Port, SchemeHdr};
use crate::sim::input::ScenarioError;
use crate::sim::quantity::{Size, Time};
use serde::{Deserialize, Serialize};

/// The scheme type of `amrt`.
pub struct Amrt;

/// Control code of a grant: `hdr.a` = 1 when the data packet it answers kept its room bit,
/// `hdr.b` = 1 + the index of a packet to send again (0: the next packet).
pub const GRANT: u8 = 1;
/// Largest number of packets one regrant timeout asks for again.
const MAX_REGRANTS: u64 = 64;
/// Receiver timer kind of the regrant timeout.
const REGRANT_TIMER: u8 = 0;
/// Sender timer kind of the backstop.
const BACKSTOP_TIMER: u8 = 0;

impl Scheme for Amrt {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "amrt",
        description: "AMRT: receiver-driven, one BDP at line rate in the first RTT, then one packet per grant and two per grant whose data kept the anti-ECN room bit (switches clear it unless the port idled one MSS time); receiver regrants after one RTT without progress. Lossy fabric.",
        paper: "Hu et al., A Receiver-Driven Transport Protocol With High Link Utilization Using Anti-ECN Marking in Data Center Networks (AMRT), IEEE TNSM 2023",
        base_rtt: BaseRtt::Fabric,
        own_recovery: true,
        first_window: true,
        fabric: FabricMode::Lossy,
        ..SchemeInfo::BASE
    }];
    type Params = AmrtParams;
    type Sender = AmrtSender;
    type Receiver = AmrtReceiver;
    type Switch = AmrtSwitch;
    fn default_params(_: &str) -> AmrtParams {
        AmrtParams::default()
    }
}

/// How a switch decides that the path has room.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Marking {
    /// Eq. 1: the port idled at least one MSS time before the packet.
    IdleGap,
    /// The testbed switch (§VI): at most one packet waits behind it.
    Queue,
}

/// AMRT parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AmrtParams {
    /// Eq. 1's MSS: an idle gap of this many bytes' time at the port's rate is room.
    pub mss: Size,
    pub marking: Marking,
    /// Bytes sent at line rate before any grant; 0 = the fabric's BDP.
    pub unscheduled: Size,
    /// Without an arrival for this long, missing packets are granted again; 0 = one RTT (twice
    /// the data's smoothed one-way delay, at least the base RTT).
    pub regrant_after: Time,
    /// A sender that hears nothing for this long resends its first unacknowledged packet;
    /// 0 = four base RTTs.
    pub sender_timeout: Time,
    /// Reassign room marks fairly among a receiver's flows (§VIII-F; ccsim's design).
    pub fair_marks: bool,
    /// Re-grant a packet skipped by a later arrival at once instead of after one RTT (ccsim's).
    pub regrant_at_once: bool,
}

impl Default for AmrtParams {
    fn default() -> Self {
        AmrtParams {
            mss: Size(1500),
            marking: Marking::IdleGap,
            unscheduled: Size(0),
            regrant_after: Time(0),
            sender_timeout: Time(0),
            fair_marks: false,
            regrant_at_once: false,
        }
    }
}

impl Params for AmrtParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        if self.mss.0 == 0 {
            return Err(ScenarioError::new(
                "cc.params.mss",
                "must be > 0 bytes (the paper's is 1500B)",
            ));
        }
        Ok(())
    }
}

/// Per-flow sender state.
#[derive(Clone, Debug, Default)]
pub struct AmrtSender {
    unscheduled_bytes: u64,
    pub backstop: Backstop,
    /// Grants received, and those that said "room" (for tests and traces).
    pub grants: u64,
    pub room_grants: u64,
}

impl SenderPart<AmrtParams> for AmrtSender {
    fn new(_: &AmrtParams) -> Self {
        AmrtSender::default()
    }
    fn on_start(&mut self, p: &AmrtParams, tx: &mut Tx) {
        self.unscheduled_bytes = super::first_window_bytes(p.unscheduled, tx);
        tx.ctl().credit_bytes = self.unscheduled_bytes;
        self.backstop.start(tx, p.sender_timeout.0, BACKSTOP_TIMER);
    }
    fn on_ack(&mut self, _: &AmrtParams, tx: &mut Tx, _: &AckInfo) {
        self.backstop.heard(tx.now_ps);
    }
    fn on_timer(&mut self, _: &AmrtParams, tx: &mut Tx, kind: u8) {
        self.backstop.on_timer(tx, kind);
    }
    fn on_send(&mut self, _: &AmrtParams, _: &mut Tx, d: &mut DataOut) {
        // The room bit starts set; `b` tells the receiver what the first RTT entitles.
        d.hdr = SchemeHdr {
            a: 1,
            b: self.unscheduled_bytes.min(u32::MAX as u64) as u32,
        };
    }
    fn on_ctrl(&mut self, _: &AmrtParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code != GRANT {
            return;
        }
        let mtu = tx.mtu_payload_bytes();
        self.grants += 1;
        self.backstop.heard(tx.now_ps);
        let packets = if c.hdr.b > 0 {
            let seq = (c.hdr.b as u64 - 1) * mtu;
            if seq < tx.snd_nxt() {
                tx.resend(seq);
            }
            1
        } else {
            self.room_grants += c.hdr.a as u64;
            1 + c.hdr.a as u64
        };
        let c = tx.ctl();
        c.credit_bytes = c.credit_bytes.saturating_add(packets * mtu);
    }
}

/// Per-flow receiver state.
#[derive(Clone, Debug, Default)]
pub struct AmrtReceiver {
    /// Bytes the sender may have sent: its first RTT plus what the grants entitle.
    entitled_bytes: u64,
    /// One past the highest byte that arrived, and when the last packet arrived.
    seen_end: u64,
    arrived_ps: u64,
    /// The in-order point when a gap below `seen_end` was first seen, and when.
    gap_at: u64,
    gap_since_ps: u64,
    /// The pending timer's time (0: none).
    timer_ps: u64,
    /// Smoothed one-way delay of the flow's data (gain 1/8), for the current RTT.
    owd_ps: u64,
    /// Grants sent, re-issued grants among them, and data packets that arrived with room.
    pub grants: u64,
    pub regrants: u64,
    pub room_arrivals: u64,
}

impl AmrtReceiver {
    fn grant(&mut self, rx: &mut Rx, room: bool, resend_idx: Option<u64>) {
        let b = resend_idx.map_or(0, |i| (i + 1).min(u32::MAX as u64) as u32);
        rx.send_ctrl(GRANT, SchemeHdr { a: room as u32, b }, Mark::None);
        self.grants += 1;
    }
    /// One RTT: the parameter, or the current RTT (twice the data's smoothed one-way delay,
    /// queueing included), at least the base RTT.
    fn timeout_ps(&self, p: &AmrtParams, rx: &Rx) -> u64 {
        let t = if p.regrant_after.0 > 0 {
            p.regrant_after.0
        } else {
            rx.base_rtt_ps().max(2 * self.owd_ps)
        };
        t.max(1)
    }
    /// Grant again every packet in [`from`, `end`) that is still missing (at most
    /// `MAX_REGRANTS`).
    fn regrant_missing(&mut self, rx: &mut Rx, from: u64, end: u64) {
        let mtu = rx.mtu_payload_bytes();
        let mut idx = from / mtu;
        let mut asked = 0;
        while idx * mtu < end && asked < MAX_REGRANTS {
            if !rx.has_arrived(idx * mtu) {
                self.grant(rx, false, Some(idx));
                self.regrants += 1;
                asked += 1;
            }
            idx += 1;
        }
    }
    /// Arm the timer at `at_ps` unless one is pending.
    fn arm(&mut self, rx: &mut Rx, at_ps: u64) {
        if self.timer_ps == 0 {
            self.timer_ps = at_ps;
            rx.set_timer(REGRANT_TIMER, at_ps);
        }
    }
}

/// A receiving host's flows for `fair_marks`: each inbound flow the sender still has packets
/// for, with the bytes other flows' marks granted it that its receiver has not yet counted.
#[derive(Clone, Debug, Default)]
pub struct AmrtHost {
    flows: std::collections::BTreeMap<u32, u64>,
    /// The flow the last mark went to (round-robin cursor).
    last: u32,
    /// Marks handed to another flow than the one they arrived on.
    pub reassigned: u64,
}

impl AmrtHost {
    /// The next flow after the last one served, wrapping.
    fn next_flow(&self) -> Option<u32> {
        let after = self.flows.range(self.last + 1..).next();
        after.or_else(|| self.flows.iter().next()).map(|(&id, _)| id)
    }
}

impl ReceiverPart<AmrtParams> for AmrtReceiver {
    type Host = AmrtHost;
    fn new(_: &AmrtParams) -> Self {
        AmrtReceiver::default()
    }
    fn on_data(&mut self, host: &mut AmrtHost, p: &AmrtParams, rx: &mut Rx, d: &DataInfo) {
        self.entitled_bytes = self.entitled_bytes.max(d.hdr.b as u64);
        let duplicate = !d.in_order && d.seq < rx.rcv_nxt();
        let (size, now, rcv_nxt, id) = (rx.size_bytes(), rx.now_ps, rx.rcv_nxt(), rx.flow_id());
        if p.fair_marks {
            self.entitled_bytes += host.flows.remove(&id).unwrap_or(0);
        }
        if !duplicate && self.entitled_bytes < size {
            let mtu = rx.mtu_payload_bytes();
            let room = d.hdr.a == 1;
            self.room_arrivals += room as u64;
            self.entitled_bytes += mtu;
            let to = match room && p.fair_marks {
                true => {
                    host.flows.insert(id, 0);
                    let to = host.next_flow().unwrap_or(id);
                    host.last = to;
                    to
                }
                false => id,
            };
            if room && to != id {
                host.reassigned += 1;
                *host.flows.get_mut(&to).expect("picked") += mtu;
                rx.send_ctrl_to(to, GRANT, SchemeHdr { a: 0, b: 0 });
                self.grant(rx, false, None);
            } else {
                self.entitled_bytes += mtu * room as u64;
                self.grant(rx, room, None);
            }
        }
        if p.fair_marks {
            if self.entitled_bytes < size && rcv_nxt < size {
                host.flows.entry(id).or_insert(0);
            } else {
                host.flows.remove(&id);
            }
        }
        self.arrived_ps = now;
        let owd = now.saturating_sub(d.sent_ps);
        self.owd_ps = if self.owd_ps == 0 {
            owd
        } else {
            (7 * self.owd_ps + owd) / 8
        };
        // `regrant_at_once`: a flow keeps one path and queues are FIFO, so packets skipped by
        // this one were lost; grant each once now (the timer asks again later).
        if p.regrant_at_once && !duplicate && d.seq > rcv_nxt && d.seq > self.seen_end {
            let from = self.seen_end.max(rcv_nxt);
            self.regrant_missing(rx, from, d.seq);
        }
        self.seen_end = self.seen_end.max(d.seq + d.payload_bytes as u64);
        if rcv_nxt != self.gap_at {
            (self.gap_at, self.gap_since_ps) = (rcv_nxt, now);
        }
        if rcv_nxt < size {
            let t = self.timeout_ps(p, rx);
            self.arm(rx, now + t);
        }
    }
    fn counters(hosts: &[AmrtHost], flows: &[AmrtReceiver]) -> Vec<(&'static str, u64)> {
        vec![
            ("grants", flows.iter().map(|f| f.grants).sum()),
            ("regrants", flows.iter().map(|f| f.regrants).sum()),
            ("room_arrivals", flows.iter().map(|f| f.room_arrivals).sum()),
            ("marks_reassigned", hosts.iter().map(|h| h.reassigned).sum()),
        ]
    }
    fn on_timer(&mut self, _: &mut AmrtHost, p: &AmrtParams, rx: &mut Rx, _: u8) {
        // The paper re-issues a grant whose data has not arrived within one RTT. ccsim times
        // the flow instead: after a timeout without any arrival, every packet the sender was
        // entitled to and that is missing was lost (or its grant was); a gap below what has
        // arrived that stays a timeout long lost its first regrant too.
        self.timer_ps = 0;
        let (now, rcv_nxt, t) = (rx.now_ps, rx.rcv_nxt(), self.timeout_ps(p, rx));
        if rcv_nxt >= rx.size_bytes() {
            return;
        }
        if now >= self.arrived_ps + t {
            let end = self.entitled_bytes.min(rx.size_bytes());
            self.regrant_missing(rx, rcv_nxt, end);
            (self.arrived_ps, self.gap_since_ps) = (now, now);
        } else if self.seen_end > rcv_nxt && now >= self.gap_since_ps + t {
            let end = self.seen_end;
            self.regrant_missing(rx, rcv_nxt, end);
            self.gap_since_ps = now;
        }
        let mut next = self.arrived_ps + t;
        if self.seen_end > rcv_nxt {
            next = next.min(self.gap_since_ps + t);
        }
        self.arm(rx, next.max(now + 1));
    }
}

/// Per-port switch state: none beyond the port's own (its transmitter's busy time).
#[derive(Clone, Debug, Default)]
pub struct AmrtSwitch;

impl SwitchPart<AmrtParams> for AmrtSwitch {
    fn new(_: &AmrtParams, _: &Port) -> Self {
        AmrtSwitch
    }
    fn on_dequeue(&mut self, p: &AmrtParams, sw: &mut Sw, pkt: &mut Packet) {
        if pkt.kind != PktKind::Data || pkt.hdr.a == 0 {
            return;
        }
        if !has_room(p, sw.port(), sw.prio, sw.now_ps) {
            pkt.hdr.a = 0;
        }
    }
}

/// Whether a data packet leaving `port` (priority `prio`) at `now_ps` finds room (Eq. 1).
fn has_room(p: &AmrtParams, port: &Port, prio: u8, now_ps: u64) -> bool {
    match p.marking {
        Marking::IdleGap => {
            let idle_ps = now_ps.saturating_sub(port.busy_until_ps);
            idle_ps >= crate::sim::tx_time_ps(p.mss.0, port.rate_bps)
        }
        Marking::Queue => port.prios[prio as usize].len() <= 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port_at(rate_bps: u64, busy_until_ps: u64) -> Port {
        let mut port = Port::new(0, 1, rate_bps, 0, false);
        port.busy_until_ps = busy_until_ps;
        port
    }

    #[test]
    fn eq_1_room_needs_an_idle_gap_of_one_mss_time() {
        // 1500 B at 10 Gb/s is 1.2 us.
        let p = AmrtParams::default();
        let port = port_at(10_000_000_000, 5_000_000);
        assert!(!has_room(&p, &port, 3, 5_000_000), "back to back");
        assert!(!has_room(&p, &port, 3, 5_000_000 + 1_199_999), "idle 1 ps short");
        assert!(has_room(&p, &port, 3, 5_000_000 + 1_200_000), "idle one MSS time");
        assert!(has_room(&p, &port, 3, 9_000_000), "idle longer");
    }

    #[test]
    fn a_skipped_packet_is_granted_again_only_after_one_rtt() {
        // The paper re-issues a grant whose data has "not arrived ... within 1 x RTT". Packets
        // 0 and 2 of 10 arrive at RTT / 2 (the data takes half the 10 us base RTT), 3 at RTT,
        // 1 never: no grant names it before it has been missing one RTT, the timer names it
        // then (and only it).
        // `regrant_at_once` names it as soon as packet 2 arrives.
        const RTT: u64 = 10_000_000;
        let named = |out: &[crate::cc::CtrlMsg]| -> Vec<u32> {
            out.iter().filter(|c| c.hdr.b > 0).map(|c| c.hdr.b - 1).collect()
        };
        for at_once in [false, true] {
            let p = AmrtParams {
                regrant_at_once: at_once,
                ..AmrtParams::default()
            };
            let mut f = super::super::TestFlow::new(10_000_000_000);
            f.f.size_bytes = 10_000;
            f.f.base_rtt_ps = RTT;
            f.f.ooo = Some(Default::default());
            let (mut r, mut host) = (AmrtReceiver::default(), AmrtHost::default());
            let data = |seq: u64, in_order: bool, at_ps: u64| DataInfo {
                seq,
                payload_bytes: 1000,
                size_bytes: 1048,
                mark: Mark::None,
                sent_ps: at_ps - RTT / 2,
                hdr: SchemeHdr { a: 0, b: 10_000 },
                in_order,
                trimmed: false,
            };
            f.f.rcv_nxt = 1000;
            r.on_data(&mut host, &p, &mut f.rx(RTT / 2), &data(0, true, RTT / 2));
            f.f.ooo.as_mut().unwrap().held.insert(2);
            r.on_data(&mut host, &p, &mut f.rx(RTT / 2), &data(2000, false, RTT / 2));
            assert_eq!(named(&f.out), if at_once { vec![1] } else { vec![] });
            if at_once {
                continue;
            }
            f.f.ooo.as_mut().unwrap().held.insert(3);
            r.on_data(&mut host, &p, &mut f.rx(RTT), &data(3000, false, RTT));
            r.on_timer(&mut host, &p, &mut f.rx(RTT / 2 + RTT - 1), REGRANT_TIMER);
            assert_eq!(named(&f.out), Vec::<u32>::new(), "before one RTT");
            r.on_timer(&mut host, &p, &mut f.rx(RTT / 2 + RTT), REGRANT_TIMER);
            assert_eq!(named(&f.out), vec![1], "at one RTT: packet 1 only");
            assert_eq!(r.regrants, 1);
        }
    }

    #[test]
    fn a_grant_with_room_releases_two_packets_and_one_without_releases_one() {
        let p = AmrtParams::default();
        for (room, packets) in [(0, 1), (1, 2)] {
            let mut f = super::super::TestFlow::new(10_000_000_000);
            f.f.size_bytes = 100_000;
            f.f.snd_nxt = 10_000;
            let mut s = AmrtSender::default();
            f.f.ctl.credit_bytes = 0;
            let grant = CtrlInfo {
                code: GRANT,
                hdr: SchemeHdr { a: room, b: 0 },
                mark: Mark::None,
                sent_ps: 0,
            };
            s.on_ctrl(&p, &mut f.tx(0), &grant);
            assert_eq!(f.f.ctl.credit_bytes, packets * 1000, "room {room}");
        }
    }
}
