//! NDP: receiver-pulled transport over trimming switches and per-packet spraying.
//!
//! Source: Handley et al., "Re-architecting Datacenter Networks and Stacks for Low Latency and
//! High Performance", SIGCOMM 2017, and its simulator htsim (`ndp.cpp`, `ndppacket.h`,
//! `compositequeue.cpp`); the AMRT paper (IEEE TNSM 2023, §VII-VIII) for its settings (data
//! queues of 8 packets).
//!
//! * **Switches** (the engine's trimming, `SchemeInfo::trim`): a data packet that finds its
//!   queue full loses its payload and its header goes on in the control queue (priority 0;
//!   bound it with `fabric.loss.ctrl_packets`), which gets 10 turns to data's 1 while data
//!   waits (`fabric.loss.header_turns`; 10 is the NDP authors' htsim CompositeQueue of the
//!   paper's time, Broadcom's csg-htsim has 100000). The data queue limit is the scenario's
//!   `fabric.loss.queue_packets` (8 in the AMRT paper). As in htsim, the switch trims the
//!   arriving packet or the newest queued one (not the next to leave) with equal chance, and
//!   in the second case the arrival takes the room its payload leaves.
//! * **Pulls are numbered** per flow, cumulatively, as in htsim: the receiver counts every data
//!   packet or trimmed header that arrives, and each pull, ACK and NACK carries the count. A
//!   pull numbered n entitles the sender to n packets beyond its first window in all, so a lost
//!   or overtaken pull costs nothing once a later one arrives.
//! * **Sender:** the first window (`initial_window`, default one BDP of the flow's path) at
//!   line rate, then one packet per pull: a retransmission first, else new data. A pull that
//!   finds nothing waiting is kept (htsim's `_last_pull < _max_pull`): a NACK that comes while
//!   pulls are kept sends its packet again at once. Each packet takes its own path (a path key
//!   per packet, hashed by ECMP, as htsim's `-strat rand`; its `perm`, a source walking a
//!   permutation of its paths, is not modelled: docs/fidelity.md), and so does each ACK, NACK
//!   and pull (`SchemeInfo::spray_ctrl`, as htsim sprays them).
//! * **Receiver** (per host): a pacer sends at most one pull per data-packet time at the
//!   receiver's link rate, round-robin over the flows with pulls queued (htsim's fair pull
//!   queue). When the pacer is idle and its last pull left a packet time ago or more, the ACK
//!   or NACK of the arrival carries the pull itself (htsim's pull bit) and no pull packet is
//!   sent; otherwise the ACK goes without it and a pull is queued.
//! * **Sender backstop** (`cc/backstop.rs`): a retransmission timeout for what no pull
//!   recovers (a lost header, a lost pull).

use super::backstop::Backstop;
use super::{
    AckInfo, BaseRtt, CtrlInfo, DataInfo, DataOut, FabricMode, HostCtx, Params,
    ReceiverPart, Rx, Scheme, SchemeInfo, SenderPart, Tx,
};
use crate::net::SchemeHdr;
use crate::sim::quantity::{Size, Time};
use std::collections::BTreeMap;

/// The scheme type of `ndp`.
pub struct Ndp;

/// Control code of a pull.
pub const PULL: u8 = 1;
/// `SchemeHdr::b` of an ACK or NACK that carries the pull (`a` is the flow's pull number).
const PULL_BIT: u32 = 1;
const BACKSTOP_TIMER: u8 = 0;
const PACER_TIMER: u8 = 0;

impl Scheme for Ndp {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "ndp",
        description: "NDP: first window of one BDP at line rate, sprayed per packet; full switch queues trim payloads and forward headers ahead of data (10 turns to 1); each header or data packet earns a pull, numbered cumulatively per flow and paced per receiver at one per packet time (on the ACK itself while the pacer is idle); one packet per pull, retransmissions first, pulls that find nothing kept for a NACK. Lossy fabric.",
        paper: "Handley et al., Re-architecting Datacenter Networks and Stacks for Low Latency and High Performance (NDP), SIGCOMM 2017; htsim ndp.cpp",
        base_rtt: BaseRtt::Path,
        trim: true,
        path_per_packet: true,
        spray_ctrl: true,
        own_recovery: true,
        first_window: true,
        fabric: FabricMode::Lossy,
        ..SchemeInfo::BASE
    }];
    type Params = NdpParams;
    type Sender = NdpSender;
    type Receiver = NdpReceiver;
    type Switch = ();
    fn default_params(_: &str) -> NdpParams {
        NdpParams::default()
    }
}

/// NDP parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct NdpParams {
    /// Bytes sent before any pull; 0 = one BDP of the flow's path.
    pub initial_window: Size,
    /// The sender's retransmission backstop; 0 = four base RTTs.
    pub sender_timeout: Time,
}

impl Params for NdpParams {}

/// Per-flow sender state.
#[derive(Clone, Debug, Default)]
pub struct NdpSender {
    sent: u32,
    pub backstop: Backstop,
    /// The highest pull number heard, and how many pulls released a packet so far.
    max_pull: u32,
    used_pulls: u32,
    /// Pulls received (pull packets and ACKs or NACKs with the pull bit), and NACKs.
    pub pulls: u64,
    pub nacks: u64,
}

impl NdpSender {
    /// Pull number `n` arrived: release what it entitles, one packet per pull, as long as
    /// packets wait that the credit does not already cover; the rest is kept. Out of line, so
    /// that the scheme dispatch inlined into the run loop stays small.
    #[inline(never)]
    fn pull(&mut self, tx: &mut Tx, n: u32) {
        self.max_pull = self.max_pull.max(n);
        let mtu = tx.mtu_payload_bytes();
        let waiting = tx.resends_waiting() + tx.unsent_bytes().div_ceil(mtu);
        let covered = tx.ctl().credit_bytes.div_ceil(mtu);
        let k = u64::from(self.max_pull - self.used_pulls).min(waiting.saturating_sub(covered));
        if k > 0 {
            self.used_pulls += k as u32;
            let ctl = tx.ctl();
            ctl.credit_bytes = ctl.credit_bytes.saturating_add(k * mtu);
        }
    }
    /// An ACK or NACK arrived: a NACK queues its packet again; a pull on it (or, for a NACK,
    /// pulls kept) releases packets. Out of line, as `pull`.
    #[inline(never)]
    fn acked(&mut self, tx: &mut Tx, ack: &AckInfo) {
        self.backstop.heard(tx.now_ps);
        let pull_bit = ack.hdr.b == PULL_BIT;
        if pull_bit {
            self.pulls += 1;
        }
        if let (true, Some(seq)) = (ack.trimmed, ack.sack_seq) {
            self.nacks += 1;
            tx.resend(seq);
            // htsim: a NACK's pull number counts when it carries the pull, or while pulls are
            // kept; then the retransmission goes at once.
            if pull_bit || self.used_pulls < self.max_pull {
                self.pull(tx, ack.hdr.a);
            }
        } else if pull_bit {
            self.pull(tx, ack.hdr.a);
        }
    }
}

impl SenderPart<NdpParams> for NdpSender {
    fn new(_: &NdpParams) -> Self {
        NdpSender::default()
    }
    fn on_start(&mut self, p: &NdpParams, tx: &mut Tx) {
        tx.ctl().credit_bytes = super::first_window_bytes(p.initial_window, tx);
        self.backstop.start(tx, p.sender_timeout.0, BACKSTOP_TIMER);
    }
    fn on_send(&mut self, _: &NdpParams, _: &mut Tx, d: &mut DataOut) {
        // A new path for every packet (key 0 is the flow's own path).
        self.sent = self.sent.wrapping_add(1);
        d.path_key = self.sent;
    }
    fn on_ack(&mut self, _: &NdpParams, tx: &mut Tx, ack: &AckInfo) {
        self.acked(tx, ack);
    }
    fn on_ctrl(&mut self, _: &NdpParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code == PULL {
            self.pulls += 1;
            self.backstop.heard(tx.now_ps);
            self.pull(tx, c.hdr.a);
        }
    }
    fn on_timer(&mut self, _: &NdpParams, tx: &mut Tx, kind: u8) {
        self.backstop.on_timer(tx, kind);
    }
}


/// Per-flow receiver state.
#[derive(Clone, Debug, Default)]
pub struct NdpReceiver {
    /// Arrivals so far (the flow's pull number), and whether the next ACK carries the pull.
    pull_no: u32,
    ack_pulls: bool,
    /// ACKs and NACKs that carried the pull.
    acks_pulled: u64,
}

/// A receiving host: the pulls queued per flow and the pull pacer.
#[derive(Clone, Debug, Default)]
pub struct NdpHost {
    /// Per flow: pulls queued, and the number the first of them carries (a flow's queued
    /// pulls are consecutive: an arrival's pull rides on its ACK only while none is queued).
    due: BTreeMap<u32, (u32, u32)>,
    tick_ps: u64,
    running: bool,
    /// When the last pull left (on a pull packet or an ACK), if one did.
    last_pull_ps: Option<u64>,
    /// The last flow pulled (round-robin cursor).
    last: u32,
    /// Pull packets sent.
    pub pulls: u64,
}

impl NdpReceiver {
    /// A data packet or trimmed header arrived: it earns its flow a pull, on its ACK while
    /// the pacer is idle, else queued for the pacer. Out of line, so that the scheme dispatch
    /// inlined into the run loop stays small.
    #[inline(never)]
    fn earn_pull(&mut self, host: &mut NdpHost, rx: &mut Rx) {
        self.ack_pulls = false;
        // Data and trimmed headers alike earn a pull, until the flow has everything.
        if rx.rcv_nxt() >= rx.size_bytes() {
            host.due.remove(&rx.flow_id());
            return;
        }
        self.pull_no += 1;
        if host.tick_ps == 0 {
            host.tick_ps = crate::sim::tx_time_ps(rx.mtu_wire_bytes(), rx.last_hop_bps().max(1))
                .max(1);
        }
        let now = rx.now_ps;
        let next_ok = host.last_pull_ps.map_or(now, |t| t + host.tick_ps);
        if host.due.is_empty() && now >= next_ok {
            // The pacer is idle: this arrival's ACK or NACK is the pull.
            self.ack_pulls = true;
            self.acks_pulled += 1;
            host.last_pull_ps = Some(now);
            return;
        }
        host.due.entry(rx.flow_id()).or_insert((0, self.pull_no)).0 += 1;
        if !host.running {
            host.running = true;
            rx.set_host_timer(PACER_TIMER, next_ok.max(now));
        }
    }
}

impl ReceiverPart<NdpParams> for NdpReceiver {
    type Host = NdpHost;
    fn new(_: &NdpParams) -> Self {
        NdpReceiver::default()
    }
    fn on_data(&mut self, host: &mut NdpHost, _: &NdpParams, rx: &mut Rx, _: &DataInfo) {
        self.earn_pull(host, rx);
    }
    fn ack_hdr(&self, _: &NdpParams) -> SchemeHdr {
        SchemeHdr {
            a: self.pull_no,
            b: if self.ack_pulls { PULL_BIT } else { 0 },
        }
    }
    fn on_host_timer(host: &mut NdpHost, _: &NdpParams, hx: &mut HostCtx, _: u8) {
        // Round-robin: the first flow with a pull queued after the last one pulled, wrapping.
        let last = host.last;
        let next = host
            .due
            .range(last + 1..)
            .chain(host.due.range(..=last))
            .next()
            .map(|(&id, _)| id);
        let Some(id) = next else {
            host.running = false;
            return;
        };
        let (n, no) = host.due.get_mut(&id).expect("found");
        let number = *no;
        *n -= 1;
        *no += 1;
        if *n == 0 {
            host.due.remove(&id);
        }
        host.last = id;
        host.pulls += 1;
        host.last_pull_ps = Some(hx.now_ps);
        hx.send_ctrl_to(id, PULL, SchemeHdr { a: number, b: 0 });
        hx.set_timer(PACER_TIMER, hx.now_ps + host.tick_ps);
    }
    fn counters(hosts: &[NdpHost], flows: &[NdpReceiver]) -> Vec<(&'static str, u64)> {
        vec![
            ("pull_packets", hosts.iter().map(|h| h.pulls).sum()),
            ("pulls_on_acks", flows.iter().map(|f| f.acks_pulled).sum()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::TestFlow;
    use crate::net::Mark;

    /// A flow of 100 packets of 1000 B with `sent` of them sent and no credit left.
    fn flow(sent: u64) -> TestFlow {
        let mut f = TestFlow::new(10_000_000_000);
        f.f.size_bytes = 100_000;
        f.f.snd_nxt = sent * 1000;
        f.f.ctl.credit_bytes = 0;
        f.f.loss.resend = Some(Box::default());
        f
    }

    fn pull(s: &mut NdpSender, f: &mut TestFlow, n: u32) {
        let c = CtrlInfo {
            code: PULL,
            hdr: SchemeHdr { a: n, b: 0 },
            mark: Mark::None,
            sent_ps: 0,
        };
        s.on_ctrl(&NdpParams::default(), &mut f.tx(0), &c);
    }

    fn nack(s: &mut NdpSender, f: &mut TestFlow, seq: u64, n: u32, pull_bit: bool) {
        let a = AckInfo {
            nack: true,
            ack_seq: 0,
            newly_acked_bytes: 0,
            mark: Mark::None,
            rtt_ps: 0,
            hdr: SchemeHdr { a: n, b: if pull_bit { PULL_BIT } else { 0 } },
            int: &[],
            sack_seq: Some(seq),
            trimmed: true,
        };
        s.on_ack(&NdpParams::default(), &mut f.tx(0), &a);
    }

    #[test]
    fn pull_numbers_are_cumulative() {
        // Pull 3 after pulls 1 and 2 were lost releases three packets; pull 2 arriving late
        // releases none; pull 5 two more.
        let (mut s, mut f) = (NdpSender::default(), flow(10));
        pull(&mut s, &mut f, 3);
        assert_eq!(f.f.ctl.credit_bytes, 3000);
        pull(&mut s, &mut f, 2);
        assert_eq!(f.f.ctl.credit_bytes, 3000);
        pull(&mut s, &mut f, 5);
        assert_eq!(f.f.ctl.credit_bytes, 5000);
    }

    #[test]
    fn a_pull_that_finds_nothing_to_send_is_kept_for_the_next_nack() {
        // Everything sent once: pulls 1-2 find nothing and are kept; a NACK without the pull
        // bit sends its packet again at once with one of them. With none kept, a NACK without
        // the pull bit waits for a pull.
        let (mut s, mut f) = (NdpSender::default(), flow(100));
        pull(&mut s, &mut f, 2);
        assert_eq!(f.f.ctl.credit_bytes, 0, "nothing waits");
        nack(&mut s, &mut f, 40_000, 3, false);
        assert_eq!(f.f.ctl.credit_bytes, 1000, "a kept pull sends the NACKed packet");
        let (mut s, mut f) = (NdpSender::default(), flow(100));
        nack(&mut s, &mut f, 40_000, 1, false);
        assert_eq!(f.f.ctl.credit_bytes, 0, "no pull kept: wait");
        pull(&mut s, &mut f, 1);
        assert_eq!(f.f.ctl.credit_bytes, 1000, "the pull sends it");
        let (mut s, mut f) = (NdpSender::default(), flow(100));
        nack(&mut s, &mut f, 40_000, 1, true);
        assert_eq!(f.f.ctl.credit_bytes, 1000, "a NACK with the pull bit is the pull");
    }
}
