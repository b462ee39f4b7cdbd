//! RDMA-RC-like reliable flows: byte sequence space, per-packet (or coalesced) cumulative ACKs,
//! NACK on a gap with go-back-N at the sender. On a lossless fabric go-back-N is only a safety
//! net (a drop there fails the run); on a lossy one `loss.rs` adds retransmission timeouts and
//! IRN selective repeat. Send/receive handlers are in `flow.rs`.

pub mod loss;

use crate::net::Mark;
use crate::sim::{TimerEpochs, TIMER_KINDS};

/// Sentinel size of a long-lived flow that has not been stopped yet.
pub const UNBOUNDED: u64 = u64::MAX;

/// What a scheme's sender part controls (through `cc::Tx::ctl`): the NIC sends the flow's next
/// packet once every gate is open.
#[derive(Clone, Debug)]
pub struct SendCtl {
    /// Pacing rate: after a packet of B bytes the next may leave B x 8 / rate later.
    pub rate_bps: u64,
    /// Maximum bytes in flight (u64::MAX = no window).
    pub window_bytes: u64,
    /// Pacing clock: the next packet may leave at this time.
    pub next_avail_ps: u64,
    /// Source halt: nothing leaves before this time (ACC).
    pub hold_until_ps: u64,
    /// Credit gating: a packet may leave while this is > 0 and uses up its payload
    /// (u64::MAX = not gated; grants, credits and pulls add to it).
    pub credit_bytes: u64,
    /// Priority of the flow's next data packet (schemes with `prio_per_packet`).
    pub data_prio: u8,
}

/// A flow's idle path beyond its base RTT, for schemes that measure one-way delay.
#[derive(Clone, Copy, Debug, Default)]
pub struct PathBase {
    /// A full data packet's one-way delay: propagation plus serialization at every hop.
    pub base_owd_ps: u64,
    /// Rate of the last link, into the receiver.
    pub last_hop_bps: u64,
}

/// A flow's sender and receiver state (one struct: the simulator sees both ends). Scheme
/// hooks see it only through `cc::Tx` and `cc::Rx`.
///
/// Laid out in order (`repr(C)`) and aligned to a cache line, so that a packet touches few
/// lines of it: the sender's gates and sequence numbers in the first line (read by the NIC and
/// every ACK); what both ends read in the second; the receiver's state in the third; the
/// sender's timers and loss recovery, setup and results last.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Flow {
    // Line 0: the sender's gates.
    pub ctl: SendCtl,
    pub snd_nxt: u64,
    pub snd_una: u64,
    // Line 1: both ends.
    /// Bytes to deliver; `UNBOUNDED` for a long-lived flow until it is stopped.
    pub size_bytes: u64,
    /// Next byte to retransmit (u64::MAX: nothing queued for retransmission; lossy fabric).
    pub rtx_seq: u64,
    pub tx_bytes: u64,
    pub line_rate_bps: u64,
    pub mtu_payload_bytes: u64,
    /// The base RTT the scheme asked for (`cc::BaseRtt`): the fabric's longest (the HPCC
    /// simulator's `GLOBAL_T 1`) or the flow's own path's; 0 for none.
    pub base_rtt_ps: u64,
    pub src: u32,
    pub dst: u32,
    /// Bytes a data packet carries on the wire beyond its payload (host and scheme headers).
    pub header_bytes: u32,
    pub long_lived: bool,
    pub started: bool,
    pub in_active: bool,
    pub finished: bool,
    // Line 2: the receiver.
    pub rcv_nxt: u64,
    /// When the coalesced ACK of the packets since the last ACK is due (u64::MAX: none).
    pub ack_due_ps: u64,
    /// Send time of the last in-order data packet, which a timer's ACK echoes.
    pub last_data_ts_ps: u64,
    /// Packets held beyond a gap (selective repeat only).
    pub ooo: Option<Box<loss::OooRx>>,
    pub rx_since_ack: u32,
    /// Strongest mark on the data packets since the last ACK.
    pub mark_since_ack: Mark,
    /// The receiver has heard that the long-lived flow stopped (`rx_size_bytes`).
    pub stop_heard: bool,
    /// Setup, in this line's padding: the packets its receiver-driven scheme sends before the
    /// receiver answers, in place of the scheme's parameter (`[[flows]] first_window`); 0: the
    /// scheme's.
    pub first_window_packets: u16,
    pub rx_timers: TimerEpochs,
    pub last_nack_seq: u64,
    // Lines 3 and 4: the sender's timers and loss recovery, then setup and results.
    pub tx_timers: TimerEpochs,
    /// Retransmission timer and IRN state (lossy fabric only).
    pub loss: loss::TxLoss,
    pub nack_ok_ps: u64,
    pub start_ps: u64,
    /// More of the flow's idle path (`cc::BaseRtt::Path` only).
    pub path: PathBase,
    /// Long-lived flows stop offering data at this time (u64::MAX = never).
    pub stop_ps: u64,
    pub finish_ps: u64,
    pub ideal_fct_ps: u64,
    pub sampled_acked: u64,
    /// Index in the receiving host's inbound list (u32::MAX: not listed).
    pub rx_slot: u32,
    /// Flows to the same receiver that start at the same instant, this one included: a batch
    /// a receiver asks for at once (e.g. an incast's requests).
    pub cohort: u32,
}

impl Flow {
    /// A flow that starts at `start_ps`; `size_bytes` None = long-lived.
    pub fn new(
        src: u32,
        dst: u32,
        size_bytes: Option<u64>,
        start_ps: u64,
        stop_ps: Option<u64>,
    ) -> Flow {
        Flow {
            src,
            dst,
            size_bytes: size_bytes.unwrap_or(UNBOUNDED),
            long_lived: size_bytes.is_none(),
            start_ps,
            stop_ps: stop_ps.unwrap_or(u64::MAX),
            started: false,
            snd_nxt: 0,
            snd_una: 0,
            ctl: SendCtl {
                rate_bps: 0,
                window_bytes: u64::MAX,
                next_avail_ps: 0,
                hold_until_ps: 0,
                credit_bytes: u64::MAX,
                data_prio: 0,
            },
            line_rate_bps: 0,
            mtu_payload_bytes: 0,
            header_bytes: 0,
            base_rtt_ps: 0,
            path: PathBase::default(),
            tx_timers: [0; TIMER_KINDS],
            in_active: false,
            finished: false,
            finish_ps: 0,
            tx_bytes: 0,
            rtx_seq: u64::MAX,
            loss: loss::TxLoss::default(),
            rcv_nxt: 0,
            rx_since_ack: 0,
            ack_due_ps: u64::MAX,
            last_data_ts_ps: 0,
            mark_since_ack: Mark::None,
            stop_heard: false,
            first_window_packets: 0,
            last_nack_seq: u64::MAX,
            nack_ok_ps: 0,
            rx_timers: [0; TIMER_KINDS],
            ooo: None,
            ideal_fct_ps: 0,
            sampled_acked: 0,
            rx_slot: u32::MAX,
            cohort: 1,
        }
    }

    /// Take the receiver's half of the flow from `other` (merging a parallel run, where the
    /// receiver's partition kept it): the fields of line 2 and the NACK pacing.
    pub fn take_receiver_half(&mut self, other: &mut Flow) {
        std::mem::swap(&mut self.ooo, &mut other.ooo);
        self.rcv_nxt = other.rcv_nxt;
        self.ack_due_ps = other.ack_due_ps;
        self.last_data_ts_ps = other.last_data_ts_ps;
        self.rx_since_ack = other.rx_since_ack;
        self.mark_since_ack = other.mark_since_ack;
        self.rx_timers = other.rx_timers;
        self.last_nack_seq = other.last_nack_seq;
        self.nack_ok_ps = other.nack_ok_ps;
        self.rx_slot = other.rx_slot;
    }

    /// The size as the receiver knows it: a long-lived flow's final size once the receiver
    /// has heard of the stop (`Event::StopHeard`), `UNBOUNDED` before.
    #[inline]
    pub fn rx_size_bytes(&self) -> u64 {
        if self.long_lived && !self.stop_heard {
            UNBOUNDED
        } else {
            self.size_bytes
        }
    }

    /// True when the sender has data to offer: new bytes, or a retransmission queued.
    #[inline]
    pub fn has_data(&self) -> bool {
        self.snd_nxt < self.size_bytes || self.rtx_seq != u64::MAX
    }

    /// True when the window has room for another packet.
    #[inline]
    pub fn window_open(&self) -> bool {
        self.snd_nxt - self.snd_una < self.ctl.window_bytes
    }

    /// True when a packet is ready apart from timing and credit: a retransmission (within
    /// what is already in flight), or new data with the window open.
    #[inline]
    pub fn has_ready_packet(&self) -> bool {
        (self.snd_nxt < self.size_bytes && self.window_open()) || self.rtx_seq != u64::MAX
    }

    /// True when the sender may put a packet on the wire now.
    #[inline]
    pub fn can_send(&self, now_ps: u64) -> bool {
        self.ctl.next_avail_ps <= now_ps
            && self.has_ready_packet()
            && self.ctl.hold_until_ps <= now_ps
            && self.ctl.credit_bytes > 0
    }

    /// Bandwidth-delay product of the flow's base RTT at its line rate. A scheme reads it only
    /// if it asked for a base RTT (`cc::SchemeInfo::base_rtt`): without one it would be 0.
    pub fn bdp_bytes(&self) -> u64 {
        assert!(
            self.base_rtt_ps > 0,
            "a BDP needs a base RTT: give the scheme's SchemeInfo base_rtt = BaseRtt::Path or BaseRtt::Fabric"
        );
        (self.base_rtt_ps as u128 * self.line_rate_bps as u128 / 8 / crate::sim::PS_PER_S as u128)
            as u64
    }

    /// True when all data has been sent at least once and nothing waits for retransmission.
    #[inline]
    pub fn all_sent(&self) -> bool {
        !self.has_data()
    }
}

/// The flows of a simulation by id. One simulation holds every flow; a partition of a parallel
/// run holds only those it sends or receives (`engine::parallel`), in id order. `slot` maps a
/// flow id to its place among the held flows, and the other per-flow arrays (scheme state,
/// random streams) are indexed by the same place. Indexing a flow that is not held panics.
#[derive(Clone, Debug, Default)]
pub struct Flows {
    slot: Vec<u32>,
    held: Vec<Flow>,
}

/// `Flows::slot` of a flow that is not held.
const NOT_HELD: u32 = u32::MAX;

impl Flows {
    pub fn with_capacity(flows: usize) -> Flows {
        Flows {
            slot: Vec::with_capacity(flows),
            held: Vec::with_capacity(flows),
        }
    }

    /// Add the next flow (id `len()`), held.
    pub fn push(&mut self, f: Flow) {
        self.slot.push(self.held.len() as u32);
        self.held.push(f);
    }

    /// The number of flows of the run, held or not: ids are `0..len()`.
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// Flow `fid`'s place among the held flows (and in every per-flow array).
    #[inline(always)]
    pub fn slot(&self, fid: u32) -> usize {
        self.slot[fid as usize] as usize
    }

    /// Flow `fid`, if it is held.
    #[inline]
    pub fn get(&self, fid: usize) -> Option<&Flow> {
        self.held.get(*self.slot.get(fid)? as usize)
    }

    /// The held flow at place `i` (`slot`).
    #[inline(always)]
    pub fn at(&self, i: usize) -> &Flow {
        &self.held[i]
    }

    #[inline(always)]
    pub fn at_mut(&mut self, i: usize) -> &mut Flow {
        &mut self.held[i]
    }

    /// Every flow of the run in id order, when all are held (one simulation).
    pub fn all(&self) -> &[Flow] {
        assert_eq!(self.held.len(), self.slot.len(), "a partition's flows");
        &self.held
    }

    /// The held flows, in id order.
    pub fn iter(&self) -> std::slice::Iter<'_, Flow> {
        self.held.iter()
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Flow> {
        self.held.iter_mut()
    }

    /// Every flow of the run, held, in id order.
    pub fn from_all(all: impl Iterator<Item = Flow>) -> Flows {
        let held: Vec<Flow> = all.collect();
        Flows {
            slot: (0..held.len() as u32).collect(),
            held,
        }
    }

    /// The held flows with their ids, in id order.
    pub fn into_held(self) -> impl Iterator<Item = (usize, Flow)> {
        let ids = (self.slot.into_iter().enumerate()).filter(|&(_, i)| i != NOT_HELD);
        ids.map(|(fid, _)| fid).zip(self.held)
    }

    /// A partition's flows: those of `all` (every flow of the run) that `keep` picks, by id,
    /// and the ids of the held ones in order.
    pub fn picked(all: &[Flow], keep: impl Fn(usize) -> bool) -> (Flows, Vec<u32>) {
        let mut flows = Flows {
            slot: vec![NOT_HELD; all.len()],
            held: Vec::new(),
        };
        let mut ids = Vec::new();
        for (fid, f) in all.iter().enumerate().filter(|&(fid, _)| keep(fid)) {
            flows.slot[fid] = flows.held.len() as u32;
            flows.held.push(f.clone());
            ids.push(fid as u32);
        }
        (flows, ids)
    }
}

impl std::ops::Index<usize> for Flows {
    type Output = Flow;
    #[inline(always)]
    fn index(&self, fid: usize) -> &Flow {
        &self.held[self.slot[fid] as usize]
    }
}

impl std::ops::IndexMut<usize> for Flows {
    #[inline(always)]
    fn index_mut(&mut self, fid: usize) -> &mut Flow {
        &mut self.held[self.slot[fid] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn a_packet_touches_one_or_two_lines_of_its_flow() {
        // The NIC and an ACK read lines 0 and 1, a data packet at the receiver lines 1 and 2.
        crate::sim::assert_in_lines::<Flow>(&[
            (offset_of!(Flow, ctl), 0),
            (offset_of!(Flow, snd_una), 0),
            (offset_of!(Flow, size_bytes), 1),
            (offset_of!(Flow, rtx_seq), 1),
            (offset_of!(Flow, tx_bytes), 1),
            (offset_of!(Flow, line_rate_bps), 1),
            (offset_of!(Flow, base_rtt_ps), 1),
            (offset_of!(Flow, header_bytes), 1),
            (offset_of!(Flow, finished), 1),
            (offset_of!(Flow, rcv_nxt), 2),
            (offset_of!(Flow, ooo), 2),
            (offset_of!(Flow, mark_since_ack), 2),
            (offset_of!(Flow, last_nack_seq), 2),
        ]);
    }

    #[test]
    #[should_panic(expected = "a BDP needs a base RTT: give the scheme's SchemeInfo base_rtt")]
    fn a_bdp_without_a_base_rtt_names_the_fix() {
        // A scheme that left SchemeInfo::base_rtt at BaseRtt::None has no base RTT: its BDP
        // would silently be 0 bytes.
        let mut f = Flow::new(0, 1, Some(1000), 0, None);
        f.line_rate_bps = 10_000_000_000;
        f.bdp_bytes();
    }

    #[test]
    fn the_flows_size_stays_five_lines() {
        // first_window_packets sits in line 2's padding.
        assert_eq!(std::mem::size_of::<Flow>(), 5 * 64);
    }

    /// A partition's flows: found by id, in id order, with their places; the others not held.
    #[test]
    fn a_partition_finds_its_flows_by_id() {
        let all: Vec<Flow> = (0..5)
            .map(|i| Flow::new(i, 10 + i, Some(1000), 0, None))
            .collect();
        let (flows, ids) = Flows::picked(&all, |f| f % 2 == 1 || f == 4);
        assert_eq!(ids, vec![1, 3, 4]);
        assert_eq!(flows.len(), 5);
        assert_eq!((flows[3].src, flows.slot(3), flows.slot(4)), (3, 1, 2));
        assert_eq!(
            flows.iter().map(|f| f.dst).collect::<Vec<_>>(),
            vec![11, 13, 14]
        );
        assert!(flows.get(0).is_none() && flows.get(2).is_none() && flows.get(7).is_none());
        let back: Vec<(usize, u32)> = flows.into_held().map(|(id, f)| (id, f.src)).collect();
        assert_eq!(back, vec![(1, 1), (3, 3), (4, 4)]);
        let whole = Flows::from_all(all.into_iter());
        assert_eq!((whole.len(), whole.slot(4), whole.all()[2].src), (5, 4, 2));
    }

    /// The table's entry for a flow not held points past the held flows.
    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn a_flow_not_held_is_not_read() {
        let all: Vec<Flow> = (0..3)
            .map(|i| Flow::new(i, 9, Some(1000), 0, None))
            .collect();
        let (flows, _) = Flows::picked(&all, |f| f != 1);
        let _ = flows[1].src;
    }
}
