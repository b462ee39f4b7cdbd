//! Homa: receiver-driven, message-size-aware transport with in-network priorities and
//! overcommitment.
//!
//! Sources: Montazeri, Li, Alizadeh, Ousterhout, "Homa: A Receiver-Driven Low-Latency
//! Transport Protocol Using Network Priorities", SIGCOMM 2018; its simulator (PlatformLab
//! HomaSimulation: `HomaTransport.cc`, `PriorityResolver.cc`, `UnschedByteAllocator.cc`,
//! `homaTransportConfig.ini`) for the mechanisms and defaults; the Linux module (PlatformLab
//! HomaModule) for loss recovery, which the simulator does not have.
//!
//! * **Priorities.** The simulator has 8 levels, 0 the highest, grants at level 0. ccsim keeps
//!   priority 0 for control packets (grants, RESENDs), strictly first, and gives Homa's data
//!   the 7 others (1 the highest): `sched_levels` of them (default: the overcommitment, at most
//!   6) for scheduled packets, the rest (at least 1) for unscheduled ones. With the simulator's
//!   usual 7 scheduled levels of 8, one level is left for unscheduled data in both.
//!   Switches must serve priorities strictly (`fabric.scheduler = "strict"`).
//! * **Sender.** The first `rtt_bytes` of a message (default one BDP of the fabric's longest
//!   base RTT; the simulator's 10000 B on the wire) go at once, unscheduled, each packet at the
//!   unscheduled level its message's remaining size maps to through `unsched_cutoffs`
//!   ("graduated", as the simulator's default STATIC_CBF_GRADUATED; the simulator derives the
//!   cutoffs from the workload's byte distribution, which a scheme cannot see here: the
//!   default cutoffs are the Linux module's 200, 2800 and 15000 B, as many as there are levels
//!   between them). The rest goes on grants, at the priority each grant names. A host sends
//!   the message with the fewest bytes left first (`SchemeInfo::sender_srpt`; the
//!   simulator's SRBF). Packets are sprayed over equal-cost paths, as the RCC paper says its
//!   Homa baseline does (`path_per_packet`).
//! * **Receiver** (per host). Each data arrival reschedules: messages still to be granted,
//!   one per sender (its fewest bytes left to grant), ranked by bytes left to grant; the top
//!   `overcommit` (the simulator's numSendersToKeepGranted: 7 for most workloads, 6 for Web
//!   Server; ccsim cannot see the workload, so the default is 7 for all) are granted up to
//!   `rtt_bytes` beyond what has arrived. With n ranked messages and S scheduled levels, rank
//!   r gets the r-th of the n lowest levels when n ≤ S, else the top S − 1 ranks their own
//!   level and the rest the lowest. A message's last `rtt_bytes` are granted at the
//!   unscheduled level their size maps to (the simulator's boost).
//! * **Loss recovery** (the Linux module's RESEND; the simulator has none, and AMRT's paper
//!   adds a timeout without saying which): a message whose packets bring no new data for
//!   `resend_after` (default 5 ms: the module's 5 ticks of 1 ms; much shorter timeouts resend
//!   packets that only wait behind higher priorities; 0: one base RTT, the AMRT paper's
//!   reading) is sent a RESEND naming each missing packet below what it was granted (at most
//!   64 a time: more than the module, whose RESEND names only the first missing range, one
//!   RESEND per peer every `resend_interval` ticks, `homa_timer.c`; with drop-tail queues that
//!   drop a first RTT's packets here and there, the module would need a round per gap); a
//!   sender asked for a packet it has not sent takes it as a lost grant. Only new data resets
//!   the wait: a duplicate (a backstop's resend of a packet that had arrived) is no progress.
//!   A sender that hears nothing for four base RTTs resends its first unacknowledged packet
//!   (`cc/backstop.rs`).

use super::backstop::Backstop;
use super::{
    AckInfo, BaseRtt, CtrlInfo, DataInfo, DataOut, FabricMode, Params, ReceiverPart, Rx, Scheme,
    SchemeInfo, SenderPart, Tx,
};
use crate::net::{Mark, SchemeHdr};
use crate::sim::input::ScenarioError;
use crate::sim::quantity::{Size, Time};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The scheme type of `homa`.
pub struct Homa;

/// Control codes: a grant (`hdr.a` = packets granted from the message's start, `hdr.b` = the
/// priority to send them at) and a RESEND (`hdr.a` = 1 + the index of a missing packet).
pub const GRANT: u8 = 1;
pub const RESEND: u8 = 2;
/// Bytes on the wire of a grant or RESEND: a minimum Ethernet frame (the simulator's 84 B
/// counts the preamble and gap, which ccsim's sizes leave out).
const CTRL_BYTES: u32 = 64;
/// Data priorities ccsim has (1..=7; 0 is control).
const DATA_LEVELS: u8 = 7;
/// The Linux module's unscheduled cutoffs (bytes), highest level first.
const MODULE_CUTOFFS: [u64; 3] = [200, 2800, 15000];
/// Most packets one RESEND timeout asks for.
const MAX_RESENDS: u64 = 64;
const RESEND_TIMER: u8 = 0;
const BACKSTOP_TIMER: u8 = 0;

impl Scheme for Homa {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "homa",
        description: "Homa: RTTbytes unscheduled at size-based priorities, the rest on grants; receivers grant the shortest messages first, one per sender, overcommitted to 7 by default (the simulator's 6 for Web Server is a setting), each at its own scheduled priority; senders shortest-first; RESEND after a timeout. Needs fabric.scheduler = \"strict\".",
        paper: "Montazeri et al., Homa: A Receiver-Driven Low-Latency Transport Protocol Using Network Priorities, SIGCOMM 2018; PlatformLab HomaSimulation and HomaModule",
        base_rtt: BaseRtt::Fabric,
        prio_per_packet: true,
        path_per_packet: true,
        strict_priority: true,
        sender_srpt: true,
        own_recovery: true,
        ctrl_bytes: &[(GRANT, CTRL_BYTES), (RESEND, CTRL_BYTES)],
        fabric: FabricMode::Any,
        ..SchemeInfo::BASE
    }];
    type Params = HomaParams;
    type Sender = HomaSender;
    type Receiver = HomaReceiver;
    type Switch = ();
    fn default_params(_: &str) -> HomaParams {
        HomaParams::default()
    }
}

/// Homa parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HomaParams {
    /// Unscheduled bytes of a message, and what a grant keeps outstanding; 0 = one BDP of the
    /// fabric's longest base RTT.
    pub rtt_bytes: Size,
    /// Messages a receiver keeps granted (the degree of overcommitment).
    pub overcommit: u32,
    /// Data levels for scheduled packets; 0 = the overcommitment, at most 6.
    pub sched_levels: u32,
    /// Message sizes (bytes) that separate the unscheduled levels, ascending; empty = the
    /// Linux module's (200, 2800, 15000 B), as many as the levels need.
    pub unsched_cutoffs: Vec<Size>,
    /// A message whose packets bring no new data for this long gets a RESEND; 0 = one base
    /// RTT of the fabric (the AMRT paper's Homa: "timeout-based loss recovery", its own
    /// timeout "similar to Homa ... 1 x RTT").
    pub resend_after: Time,
    /// The sender's backstop; 0 = four base RTTs.
    pub sender_timeout: Time,
}

impl Default for HomaParams {
    fn default() -> Self {
        HomaParams {
            rtt_bytes: Size(0),
            overcommit: 7,
            sched_levels: 0,
            unsched_cutoffs: Vec::new(),
            resend_after: Time(5_000_000_000),
            sender_timeout: Time(0),
        }
    }
}

impl Params for HomaParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        if self.overcommit == 0 {
            return Err(ScenarioError::new(
                "cc.params.overcommit",
                "must be at least 1 (the simulator's: 7, 6 for Web Server)",
            ));
        }
        if self.sched_levels > DATA_LEVELS as u32 - 1 {
            return Err(ScenarioError::new(
                "cc.params.sched_levels",
                "must be 0 (as many as the overcommitment) to 6: ccsim has 7 data priorities and unscheduled packets need one",
            ));
        }
        let unsched = self.unsched_levels() as usize;
        let cuts = &self.unsched_cutoffs;
        if !cuts.is_empty() && (cuts.len() != unsched - 1 || cuts.windows(2).any(|w| w[0].0 >= w[1].0))
        {
            return Err(ScenarioError::new(
                "cc.params.unsched_cutoffs",
                format!(
                    "give {} ascending sizes, one between each two of the {unsched} unscheduled levels (7 data levels less sched_levels)",
                    unsched - 1
                ),
            ));
        }
        Ok(())
    }
}

impl HomaParams {
    /// Data levels for scheduled packets.
    fn sched_levels(&self) -> u8 {
        let s = if self.sched_levels > 0 {
            self.sched_levels
        } else {
            self.overcommit
        };
        s.min(DATA_LEVELS as u32 - 1) as u8
    }
    /// Data levels for unscheduled packets (at least one).
    fn unsched_levels(&self) -> u8 {
        DATA_LEVELS - self.sched_levels()
    }
    /// The unscheduled priority of a message with `remaining` bytes: 1 for the smallest.
    fn unsched_prio(&self, remaining: u64) -> u8 {
        let levels = self.unsched_levels() as usize;
        let above = if self.unsched_cutoffs.is_empty() {
            MODULE_CUTOFFS[..(levels - 1).min(3)]
                .iter()
                .filter(|&&c| remaining > c)
                .count()
        } else {
            self.unsched_cutoffs.iter().filter(|c| remaining > c.0).count()
        };
        1 + above.min(levels - 1) as u8
    }
    /// The scheduled priority of rank `r` (0: the shortest) among `n` granted messages.
    fn sched_prio(&self, r: usize, n: usize) -> u8 {
        let (u, s) = (self.unsched_levels() as usize, self.sched_levels() as usize);
        let level = if n <= s { s - n + r } else { r.min(s - 1) };
        (u + level + 1) as u8
    }
}

/// Per-message sender state.
#[derive(Clone, Debug, Default)]
pub struct HomaSender {
    unsched_bytes: u64,
    /// Bytes granted from the message's start (unscheduled ones included).
    granted_bytes: u64,
    /// The priority the latest grant names.
    sched_prio: u8,
    /// Packets sent (each its own path key).
    sent: u32,
    pub backstop: Backstop,
    /// Grants and RESENDs received.
    pub grants: u64,
    pub resends: u64,
}

impl HomaSender {
    /// The priority of the message's next new packet.
    fn next_prio(&self, p: &HomaParams, tx: &Tx) -> u8 {
        if tx.snd_nxt() < self.unsched_bytes {
            p.unsched_prio(tx.size_bytes() - tx.snd_nxt())
        } else {
            self.sched_prio
        }
    }
}

/// The unscheduled bytes of a message of `size` bytes.
fn unsched_bytes(p: &HomaParams, bdp_bytes: u64, mtu: u64, size: u64) -> u64 {
    let rtt = if p.rtt_bytes.0 > 0 {
        p.rtt_bytes.0
    } else {
        bdp_bytes.max(mtu)
    };
    rtt.min(size)
}

impl SenderPart<HomaParams> for HomaSender {
    fn new(_: &HomaParams) -> Self {
        HomaSender::default()
    }
    fn on_start(&mut self, p: &HomaParams, tx: &mut Tx) {
        let mtu = tx.mtu_payload_bytes();
        self.unsched_bytes = unsched_bytes(p, tx.bdp_bytes(), mtu, tx.size_bytes());
        self.granted_bytes = self.unsched_bytes;
        self.sched_prio = DATA_LEVELS;
        let prio = self.next_prio(p, tx);
        let ctl = tx.ctl();
        ctl.credit_bytes = self.unsched_bytes;
        ctl.data_prio = prio;
        self.backstop.start(tx, p.sender_timeout.0, BACKSTOP_TIMER);
    }
    fn on_send(&mut self, p: &HomaParams, tx: &mut Tx, d: &mut DataOut) {
        // Sprayed: a new path for every packet (key 0 is the flow's own path).
        self.sent = self.sent.wrapping_add(1);
        d.path_key = self.sent;
        // The receiver learns the message's unscheduled bytes from any of its packets.
        d.hdr = SchemeHdr {
            a: self.unsched_bytes.min(u32::MAX as u64) as u32,
            b: 0,
        };
        tx.ctl().data_prio = self.next_prio(p, tx);
    }
    fn on_ctrl(&mut self, p: &HomaParams, tx: &mut Tx, c: &CtrlInfo) {
        let mtu = tx.mtu_payload_bytes();
        self.backstop.heard(tx.now_ps);
        match c.code {
            GRANT => {
                self.grants += 1;
                let offset = (c.hdr.a as u64 * mtu).min(tx.size_bytes());
                self.sched_prio = c.hdr.b.clamp(1, DATA_LEVELS as u32) as u8;
                if offset > self.granted_bytes {
                    let more = offset - self.granted_bytes;
                    self.granted_bytes = offset;
                    let ctl = tx.ctl();
                    ctl.credit_bytes = ctl.credit_bytes.saturating_add(more);
                }
            }
            RESEND if c.hdr.a > 0 => {
                self.resends += 1;
                let seq = (c.hdr.a as u64 - 1) * mtu;
                if seq < tx.snd_nxt() {
                    tx.resend(seq);
                }
                // A packet not sent yet: its grant was lost (as the Linux module reads it).
                let ctl = tx.ctl();
                ctl.credit_bytes = ctl.credit_bytes.saturating_add(mtu);
            }
            _ => return,
        }
        tx.ctl().data_prio = self.next_prio(p, tx);
    }
    fn on_ack(&mut self, _: &HomaParams, tx: &mut Tx, _: &AckInfo) {
        self.backstop.heard(tx.now_ps);
    }
    fn on_timer(&mut self, _: &HomaParams, tx: &mut Tx, kind: u8) {
        self.backstop.on_timer(tx, kind);
    }
}

/// Per-message receiver state: its RESEND timer.
#[derive(Clone, Debug, Default)]
pub struct HomaReceiver {
    /// When a packet of the message last arrived, and the pending timer's time (0: none).
    arrived_ps: u64,
    timer_ps: u64,
    /// RESENDs sent.
    pub resends: u64,
}

/// A receiving host's view of one inbound message.
#[derive(Clone, Debug)]
struct InMsg {
    src: u32,
    size: u64,
    /// Bytes that arrived (each packet once) and bytes granted from the start.
    received: u64,
    granted: u64,
}

/// A receiving host: its inbound messages still being received.
#[derive(Clone, Debug, Default)]
pub struct HomaHost {
    msgs: BTreeMap<u32, InMsg>,
    /// `schedule`'s ranking, kept to reuse its allocation: (sender, bytes left to grant, size,
    /// message).
    ranked: Vec<(u32, u64, u64, u32)>,
    /// Grants sent.
    pub grants: u64,
}

impl HomaHost {
    /// Grant the top `overcommit` messages (one per sender, fewest bytes left to grant first)
    /// up to `rtt_bytes` beyond what arrived, each at its rank's priority.
    fn schedule(&mut self, p: &HomaParams, rx: &mut Rx, rtt_bytes: u64) {
        let mtu = rx.mtu_payload_bytes();
        // Each sender's best message, then the senders by it.
        let ranked = &mut self.ranked;
        ranked.clear();
        ranked.extend(
            (self.msgs.iter())
                .filter(|(_, m)| m.granted < m.size)
                .map(|(&id, m)| (m.src, m.size - m.granted, m.size, id)),
        );
        ranked.sort_unstable();
        ranked.dedup_by_key(|r| r.0);
        ranked.sort_unstable_by_key(|&(_, left, size, id)| (left, size, id));
        ranked.truncate(p.overcommit as usize);
        let n = ranked.len();
        for (r, &(_, _, _, id)) in self.ranked.iter().enumerate() {
            let m = self.msgs.get_mut(&id).expect("ranked");
            let target = (m.received + rtt_bytes).min(m.size);
            if target <= m.granted {
                continue;
            }
            m.granted = target;
            let left = m.size - m.granted;
            let mut prio = p.sched_prio(r, n);
            if left < rtt_bytes {
                prio = prio.min(p.unsched_prio(left.max(1)));
            }
            let packets = m.granted.div_ceil(mtu).min(u32::MAX as u64) as u32;
            rx.send_ctrl_to(
                id,
                GRANT,
                SchemeHdr {
                    a: packets,
                    b: prio as u32,
                },
            );
            self.grants += 1;
        }
    }
}

impl HomaReceiver {
    /// The RESEND timeout: the parameter, or one base RTT of the fabric.
    fn timeout_ps(p: &HomaParams, rx: &Rx) -> u64 {
        match p.resend_after.0 {
            0 => rx.base_rtt_ps(),
            t => t,
        }
        .max(1)
    }
}

impl ReceiverPart<HomaParams> for HomaReceiver {
    type Host = HomaHost;
    fn new(_: &HomaParams) -> Self {
        HomaReceiver::default()
    }
    fn on_data(&mut self, host: &mut HomaHost, p: &HomaParams, rx: &mut Rx, d: &DataInfo) {
        let (id, now, size) = (rx.flow_id(), rx.now_ps, rx.size_bytes());
        let rtt_bytes = unsched_bytes(p, rx.bdp_bytes(), rx.mtu_payload_bytes(), u64::MAX);
        let done = rx.rcv_nxt() >= size;
        let duplicate = !d.in_order && d.seq < rx.rcv_nxt();
        if !done && !d.trimmed {
            let src = rx.src();
            let m = host.msgs.entry(id).or_insert(InMsg {
                src,
                size,
                received: 0,
                granted: 0,
            });
            m.granted = m.granted.max(d.hdr.a as u64);
            if !duplicate {
                m.received += d.payload_bytes as u64;
            }
        }
        if done {
            host.msgs.remove(&id);
        }
        host.schedule(p, rx, rtt_bytes);
        // Only new data is progress: a duplicate (a backstop's resend of a packet that had
        // arrived) must not hold the RESEND off, or a stalled message never asks again.
        if !duplicate && !d.trimmed {
            self.arrived_ps = now;
        }
        if !done && self.timer_ps == 0 {
            self.timer_ps = now + Self::timeout_ps(p, rx);
            rx.set_timer(RESEND_TIMER, self.timer_ps);
        }
    }
    fn counters(hosts: &[HomaHost], flows: &[HomaReceiver]) -> Vec<(&'static str, u64)> {
        vec![
            ("grants", hosts.iter().map(|h| h.grants).sum()),
            ("resends", flows.iter().map(|f| f.resends).sum()),
        ]
    }
    fn on_timer(&mut self, host: &mut HomaHost, p: &HomaParams, rx: &mut Rx, _: u8) {
        self.timer_ps = 0;
        let (now, t, rcv_nxt) = (rx.now_ps, Self::timeout_ps(p, rx), rx.rcv_nxt());
        let Some(granted) = host.msgs.get(&rx.flow_id()).map(|m| m.granted) else {
            return;
        };
        if now >= self.arrived_ps + t {
            let mtu = rx.mtu_payload_bytes();
            let (mut idx, mut asked) = (rcv_nxt / mtu, 0);
            while idx * mtu < granted && asked < MAX_RESENDS {
                if !rx.has_arrived(idx * mtu) {
                    let a = (idx + 1).min(u32::MAX as u64) as u32;
                    rx.send_ctrl(RESEND, SchemeHdr { a, b: 0 }, Mark::None);
                    self.resends += 1;
                    asked += 1;
                }
                idx += 1;
            }
            self.arrived_ps = now;
        }
        self.timer_ps = self.arrived_ps + t;
        rx.set_timer(RESEND_TIMER, self.timer_ps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_does_not_hold_off_the_resend() {
        // Packet 0 of a 10-packet message arrives at 0, a duplicate of it (a backstop's resend)
        // at T/2, nothing else: the RESEND timeout T counts from the last new data, so at T the
        // receiver asks for the packets it granted that are missing.
        const T: u64 = 10_000_000;
        let p = HomaParams {
            resend_after: Time(T),
            ..HomaParams::default()
        };
        let mut f = crate::cc::TestFlow::new(10_000_000_000);
        f.f.size_bytes = 10_000;
        f.f.base_rtt_ps = 800_000; // RTTbytes one packet: 1000 B at 10 Gb/s
        f.f.ooo = Some(Default::default());
        let (mut r, mut host) = (HomaReceiver::default(), HomaHost::default());
        let data = |in_order: bool| DataInfo {
            seq: 0,
            payload_bytes: 1000,
            size_bytes: 1048,
            mark: Mark::None,
            sent_ps: 0,
            hdr: SchemeHdr { a: 10_000, b: 0 },
            in_order,
            trimmed: false,
        };
        f.f.rcv_nxt = 1000;
        r.on_data(&mut host, &p, &mut f.rx(0), &data(true));
        r.on_data(&mut host, &p, &mut f.rx(T / 2), &data(false));
        r.on_timer(&mut host, &p, &mut f.rx(T), RESEND_TIMER);
        let resends: Vec<u32> = f.out.iter().filter(|c| c.code == RESEND).map(|c| c.hdr.a - 1).collect();
        assert_eq!(resends, (1..10).collect::<Vec<u32>>());
    }

    #[test]
    fn levels_split_between_unscheduled_and_scheduled_packets() {
        // Overcommitment 7: 6 scheduled levels (2..7), 1 unscheduled (1), as the simulator's
        // 7 of 8 with grants beside its top level.
        let p = HomaParams::default();
        assert_eq!((p.unsched_levels(), p.sched_levels()), (1, 6));
        assert_eq!(p.unsched_prio(100), 1);
        assert_eq!(p.unsched_prio(10_000_000), 1);
        // Overcommitment 4: 3 unscheduled levels split by the module's 200 and 2800 B.
        let p4 = HomaParams {
            overcommit: 4,
            ..HomaParams::default()
        };
        assert_eq!((p4.unsched_levels(), p4.sched_levels()), (3, 4));
        assert_eq!(
            [100, 200, 201, 2800, 2801, 1_000_000].map(|r| p4.unsched_prio(r)),
            [1, 1, 2, 2, 3, 3]
        );
    }

    #[test]
    fn grant_priorities_fill_the_lowest_levels_and_share_the_last() {
        let p = HomaParams::default(); // scheduled levels 2..=7
        // Two messages: the lowest two levels, the shorter one higher.
        assert_eq!([p.sched_prio(0, 2), p.sched_prio(1, 2)], [6, 7]);
        // Six: one level each, 2 (the shortest) to 7.
        assert_eq!((0..6).map(|r| p.sched_prio(r, 6)).collect::<Vec<_>>(), [2, 3, 4, 5, 6, 7]);
        // Seven granted, six levels: the top five their own, the rest share the lowest.
        assert_eq!(
            (0..7).map(|r| p.sched_prio(r, 7)).collect::<Vec<_>>(),
            [2, 3, 4, 5, 6, 7, 7]
        );
    }
}
