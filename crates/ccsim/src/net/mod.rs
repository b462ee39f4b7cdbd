//! Network elements: packets in an arena (moved by index, never allocated per packet in steady
//! state), full-duplex ports with 8 priority queues and PFC pause state, and the switch buffer
//! (MMU) state. Forwarding, admission and the NIC act on the whole simulation and live in
//! `engine`.

pub mod config;
mod fifo;
pub mod mmu;
pub mod pfc;
pub mod sched;

pub use fifo::Fifo;

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PktKind {
    Data,
    Ack,
    Nack,
    /// A scheme's control packet (CNP, QCN feedback, grant, credit, pull ...); `sub` is the
    /// scheme's code for it and `hdr` its fields.
    Ctrl,
    /// PFC PAUSE for class `sub`.
    Pause,
    /// PFC RESUME (XON) for class `sub`.
    Resume,
}

/// Congestion mark a packet carries (ECN CE, TCD's undetermined UE). On an ACK: the echo.
/// Marks only strengthen along a path: `None < Ue < Ce` (UE never overrides CE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Mark {
    #[default]
    None = 0,
    /// Undetermined: passed a port whose congestion state is not known (TCD).
    Ue = 1,
    /// Congestion experienced.
    Ce = 2,
}

impl Mark {
    /// The stronger of two marks.
    #[inline]
    pub fn merge(self, other: Mark) -> Mark {
        self.max(other)
    }
}

/// The scheme's own per-packet header fields (a rate, a window, a credit ...); their meaning is
/// the scheme's, their bytes on the wire are `SchemeInfo::header_bytes`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchemeHdr {
    pub a: u32,
    pub b: u32,
}

/// A packet: 48 bytes, copied by value. `seq` is the first payload byte for data and the
/// cumulative ACK for ACK/NACK.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub seq: u64,
    /// Data: time the sender transmitted it. ACK/NACK: echo of the acknowledged packet's.
    pub ts_ps: u64,
    pub flow: u32,
    /// Destination host id (routing key).
    pub dst_host: u32,
    /// Ingress port at the current switch (buffer accounting).
    pub in_port: u32,
    /// ACK/NACK of a selective-repeat receiver: index (seq / MTU payload) of the packet that
    /// arrived out of order, or with `SACK_TRIMMED` set, that a switch trimmed; `NO_SACK`: none.
    /// Data: the sender's path key (`PATH_KEY_MASK` bits, hashed by ECMP for schemes with
    /// `path_per_packet`) and the `ACK_REQ` flag.
    pub aux: u32,
    pub size_bytes: u16,
    /// 0 on a data packet means it was trimmed to its header by a switch.
    pub payload_bytes: u16,
    pub hdr: SchemeHdr,
    pub kind: PktKind,
    pub prio: u8,
    pub mark: Mark,
    /// Data/ACK/NACK: INT records carried (side table `Simulation::ints`). Ctrl: the scheme's
    /// code. PAUSE/RESUME: the class.
    pub sub: u8,
}

/// `Packet::aux` of an ACK/NACK that selects no packet (a go-back-N NACK, or not a NACK).
pub const NO_SACK: u32 = u32::MAX;
/// Flag in an ACK/NACK's `Packet::aux`: the packet was trimmed (lost), not received out of
/// order.
pub const SACK_TRIMMED: u32 = 1 << 31;
/// Flag in a data packet's `Packet::aux`: acknowledge it at once, whatever the receiver's ACK
/// coalescing (RoCE's AckReq bit): the sender's window closed behind it, or it is a
/// retransmission. Without it, coalescing could hold back the ACK the window waits for.
pub const ACK_REQ: u32 = 1 << 31;
/// The bits of a data packet's `Packet::aux` that hold its path key.
pub const PATH_KEY_MASK: u32 = ACK_REQ - 1;

impl Packet {
    /// A packet of `kind` for `flow` toward host `dst_host`; every other field zero.
    #[inline]
    pub fn new(kind: PktKind, flow: u32, dst_host: u32, size_bytes: u32, prio: u8) -> Packet {
        Packet {
            seq: 0,
            ts_ps: 0,
            flow,
            dst_host,
            in_port: u32::MAX,
            aux: if matches!(kind, PktKind::Data) {
                0
            } else {
                NO_SACK
            },
            size_bytes: size_bytes as u16,
            payload_bytes: 0,
            hdr: SchemeHdr::default(),
            kind,
            prio,
            mark: Mark::None,
            sub: 0,
        }
    }
}

/// Largest packet on the wire (`Packet::size_bytes` is 16 bits).
pub const MAX_PACKET_BYTES: u32 = u16::MAX as u32;

/// Packet storage with a free list; ids are stable while a packet lives.
#[derive(Clone, Default)]
pub struct Arena {
    pkts: Vec<Packet>,
    free: Vec<u32>,
}

impl Arena {
    /// Store a packet, reusing a freed slot when there is one.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        if let Some(i) = self.free.pop() {
            self.pkts[i as usize] = p;
            i
        } else {
            self.pkts.push(p);
            (self.pkts.len() - 1) as u32
        }
    }
    /// The slot `alloc` fills after `k` more allocations and no `free` (None: a new one).
    #[inline]
    pub fn upcoming(&self, k: usize) -> Option<u32> {
        let j = self.free.len().checked_sub(k + 1)?;
        Some(self.free[j])
    }
    /// Release a packet's slot.
    #[inline]
    pub fn free(&mut self, i: u32) {
        self.free.push(i);
    }
    /// Prefetch packet `i`: both its lines, as half of the 48-byte packets straddle two.
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        crate::sim::prefetch_value(self.pkts.as_ptr().wrapping_add(i as usize));
    }
    /// High-water mark of simultaneously live packets.
    pub fn capacity_used(&self) -> usize {
        self.pkts.len()
    }
}

impl std::ops::Index<u32> for Arena {
    type Output = Packet;
    #[inline]
    fn index(&self, i: u32) -> &Packet {
        &self.pkts[i as usize]
    }
}
impl std::ops::IndexMut<u32> for Arena {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.pkts[i as usize]
    }
}

/// Number of priority classes per port.
pub const NUM_PRIO: usize = 8;
/// `Port::side_mask` bits: PFC frames queued, rate-limited control packets queued.
const SIDE_PFC: u8 = 1;
const SIDE_LIMITED: u8 = 2;

/// Most switch hops an INT header records (the HPCC simulator's `IntHeader::maxHop`).
pub const MAX_INT_HOPS: usize = 5;

/// One hop's in-band telemetry, written by a switch egress port as a data packet leaves it.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntHop {
    /// Dequeue time.
    pub ts_ps: u64,
    /// Bytes the port had transmitted before this packet.
    pub tx_bytes: u64,
    pub rate_bps: u64,
    /// Bytes queued at the port (all priorities) after this packet left the queue.
    pub qlen_bytes: u32,
}

/// The INT records of one packet (HPCC); `Packet::sub` says how many are valid. Kept
/// beside the arena, indexed by packet id, and only touched when the scheme enables INT; an ACK
/// carries its data packet's records. Hop records are 32-byte aligned: one cache line each.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
pub struct IntStack {
    pub hops: [IntHop; MAX_INT_HOPS],
}

/// Buffer bytes charged to one (ingress port, priority) queue: outside headroom and in it.
#[derive(Clone, Copy, Debug, Default, bytemuck::Zeroable)]
pub struct IngressBytes {
    pub shared_bytes: u64,
    pub hdrm_bytes: u64,
}

/// What a port keeps for one priority, in one cache line: the egress queue and its bytes, and
/// the buffer charged to packets that entered through the port in this class. A packet's hop
/// touches one of these per port, not one line per array.
#[derive(Clone, Debug, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub struct PrioState {
    /// The queue's head packet (`NO_PACKET`: the queue is empty). The others wait in `rest`,
    /// whose buffer is a line of its own: a packet that finds the queue empty and the port idle
    /// (most hops, below full load) leaves without touching it.
    head: u32,
    rest: Fifo,
    pub queue_bytes: u64,
    /// Switch ports: bytes of packets that entered through this port, outside headroom (the
    /// first `pfc_reserve_bytes` of a queue are its own, the rest shared) and in it.
    pub ing: IngressBytes,
}

/// `PrioState::head` of an empty queue.
const NO_PACKET: u32 = u32::MAX;

impl Default for PrioState {
    fn default() -> Self {
        PrioState {
            head: NO_PACKET,
            rest: Fifo::default(),
            queue_bytes: 0,
            ing: IngressBytes::default(),
        }
    }
}

impl PrioState {
    /// Packets queued in this class.
    pub fn len(&self) -> usize {
        if self.head == NO_PACKET {
            0
        } else {
            1 + self.rest.len()
        }
    }
    /// The packet at the head of the queue.
    #[inline]
    pub fn head(&self) -> Option<u32> {
        (self.head != NO_PACKET).then_some(self.head)
    }
    /// Start loading the backlog's first entry, which becomes the head when the head leaves
    /// (the backlog is a block of its own, apart from the port).
    #[inline(always)]
    pub fn prefetch_next(&self) {
        if let Some(next) = self.rest.front() {
            crate::sim::prefetch(next);
        }
    }
    /// True when no packet is queued in this class.
    pub fn is_empty(&self) -> bool {
        self.head == NO_PACKET
    }
    /// Packets queued in this class, head first.
    pub fn packets(&self) -> impl Iterator<Item = u32> + '_ {
        self.head().into_iter().chain(self.rest.iter().copied())
    }
    #[inline]
    fn push(&mut self, pkt: u32) {
        if self.head == NO_PACKET {
            self.head = pkt;
        } else {
            self.rest.push_back(pkt);
        }
    }
    #[inline]
    fn pop(&mut self) -> Option<u32> {
        let pkt = self.head()?;
        self.head = self.rest.pop_front().unwrap_or(NO_PACKET);
        Some(pkt)
    }
}

/// One end of a full-duplex link: egress queues and transmitter, plus (on switches) the
/// ingress accounting of the shared buffer for packets that arrived through it.
///
/// Laid out in order (`repr(C)`) and aligned to a cache line so that a packet's hop touches
/// few lines: the transmitter, the backlog and the queue bitmaps in the first; the queue
/// maximum, RED thresholds and PFC settings in the second; then one line per priority
/// (`PrioState`); counters and rarely used state come last.
///
/// All-zero bytes are a valid port (`bytemuck::Zeroable`, which checks every field's type):
/// a partition of a parallel run keeps the ports it does not own zeroed and untouched.
#[repr(C, align(64))]
#[derive(Clone, bytemuck::Zeroable)]
pub struct Port {
    /// The transmitter is busy until this time.
    pub busy_until_ps: u64,
    /// Time of the one TxDone event that is live for this port (u64::MAX: none); any other
    /// TxDone for the port is stale and ignored.
    pub txdone_at_ps: u64,
    /// Serialization time per byte when it is a whole number of ps (0: use exact division).
    pub ps_per_byte: u64,
    pub delay_ps: u64,
    pub tx_bytes: u64,
    pub node: u32,
    /// The port at the other end of the link.
    pub peer: u32,
    pub is_host: bool,
    /// Bit p set: the peer paused our priority p.
    pub paused_mask: u8,
    pub rr_last: u8,
    /// Bit p set: the queue of priority p holds packets.
    nonempty_mask: u8,
    /// Bit p set: we have sent PAUSE for priority p to the peer.
    pub pfc_sent_mask: u8,
    /// `pfc_out` / `limited` hold packets (`SIDE_PFC`, `SIDE_LIMITED`): every departure asks,
    /// and the answer sits here rather than in their own cache line.
    side_mask: u8,
    /// The peer is in partition `cut - 1` of a parallel run, not this one (0: the same): what
    /// this port sends goes to that partition (`engine::parallel`), not to this event queue.
    pub cut: u8,
    /// The sum of the priorities' `queue_bytes`, kept as it changes (read on every enqueue).
    queued_bytes: u64,
    pub max_queue_bytes: u64,
    /// RED thresholds for this port (scaled by rate); kmax == 0 means marking off.
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub hdrm_reserve_bytes: u64,
    /// Dynamic PFC threshold factor of this ingress port (`fabric.pfc.alpha[_per_rate]`).
    pub pfc_alpha: f64,
    /// Data packets this (switch egress) port marked CE: RED or the scheme's switch part.
    pub ecn_marked: u64,
    pub rate_bps: u64,
    /// Per priority: egress queue (switch ports; host ports queue only control packets here)
    /// and ingress accounting.
    pub prios: [PrioState; NUM_PRIO],
    /// PFC frames to send: ahead of everything, never paused.
    pfc_out: Fifo,
    /// The scheme's rate-limited control queue (`Settings::ctrl_queue`), and the earliest time
    /// it may send next.
    limited: Fifo,
    pub limited_next_ps: u64,
    /// Where the port is in its header/data turns (`pick_priority`'s `hdr_ratio`).
    pub hdr_turn: u32,
    /// Per priority: since when the peer has paused it (valid while its `paused_mask` bit is
    /// set).
    pub paused_since_ps: [u64; NUM_PRIO],
    /// The longest ON period of this port in PFC's ON/OFF pattern (TCD's max(T_on)):
    /// `fabric.pfc.max_t_on`, or derived by the builder (`scenario::build::max_t_on_ps`).
    pub max_t_on_ps: u64,
    // Counters.
    pub pause_sent: u64,
    pub resume_sent: u64,
    pub pause_rx: u64,
    pub resume_rx: u64,
    pub paused_time_ps: u64,
    /// Lossy fabric: packets dropped at this egress port (and their bytes), and data packets
    /// trimmed to a header here.
    pub drops: u64,
    pub drop_bytes: u64,
    pub trims: u64,
    /// Control packets dropped at a full rate-limited control queue.
    pub ctrl_drops: u64,
    /// Control packets (CNPs, QCN feedback, grants ...) this port's node generated to send out
    /// of it (those a full rate-limited control queue then dropped are also in `ctrl_drops`).
    pub ctrl_sent: u64,
    /// Utilization probe: bits serialized by the previous sample (`tx_bytes` less the part of
    /// a packet still in service).
    pub sampled_wire_bits: f64,
}

impl Port {
    /// A port of `node` whose link goes to `peer`.
    pub fn new(node: u32, peer: u32, rate_bps: u64, delay_ps: u64, is_host: bool) -> Port {
        Port {
            node,
            peer,
            rate_bps,
            ps_per_byte: if (8 * crate::sim::PS_PER_S).is_multiple_of(rate_bps) {
                8 * crate::sim::PS_PER_S / rate_bps
            } else {
                0
            },
            delay_ps,
            is_host,
            prios: Default::default(),
            queued_bytes: 0,
            pfc_out: Fifo::default(),
            limited: Fifo::default(),
            limited_next_ps: 0,
            paused_mask: 0,
            busy_until_ps: 0,
            txdone_at_ps: u64::MAX,
            rr_last: 0,
            hdr_turn: 0,
            nonempty_mask: 0,
            side_mask: 0,
            cut: 0,
            kmin_bytes: 0,
            kmax_bytes: 0,
            hdrm_reserve_bytes: 0,
            pfc_alpha: 0.0,
            pfc_sent_mask: 0,
            tx_bytes: 0,
            pause_sent: 0,
            resume_sent: 0,
            pause_rx: 0,
            resume_rx: 0,
            paused_time_ps: 0,
            paused_since_ps: [0; NUM_PRIO],
            max_t_on_ps: 0,
            max_queue_bytes: 0,
            drops: 0,
            drop_bytes: 0,
            trims: 0,
            ctrl_drops: 0,
            ecn_marked: 0,
            ctrl_sent: 0,
            sampled_wire_bits: 0.0,
        }
    }

    /// Time to serialize `bytes` on this port's link (cut to whole ns when `floor_ns`).
    #[inline]
    pub fn tx_time_ps(&self, bytes: u64, floor_ns: bool) -> u64 {
        let t = if self.ps_per_byte > 0 {
            bytes * self.ps_per_byte
        } else {
            crate::sim::tx_time_ps(bytes, self.rate_bps)
        };
        crate::sim::cut_to_ns(t, floor_ns)
    }

    /// Append packet `pkt` of `size_bytes` to the queue of priority `prio`.
    #[inline]
    pub fn enqueue(&mut self, prio: usize, pkt: u32, size_bytes: u64) {
        let class = &mut self.prios[prio];
        class.push(pkt);
        class.queue_bytes += size_bytes;
        self.nonempty_mask |= 1 << prio;
        self.queued_bytes += size_bytes;
    }

    /// Take the newest packet of priority `prio`, unless it is the head (the next to leave):
    /// its id and size in bytes.
    pub fn pop_newest(&mut self, prio: usize, pkts: &Arena) -> Option<(u32, u64)> {
        let class = &mut self.prios[prio];
        let pkt = class.rest.pop_back()?;
        let size = pkts[pkt].size_bytes as u64;
        class.queue_bytes -= size;
        self.queued_bytes -= size;
        Some((pkt, size))
    }

    /// Take the head packet of priority `prio`: its id and size in bytes.
    #[inline]
    pub fn dequeue(&mut self, prio: usize, pkts: &Arena) -> Option<(u32, u64)> {
        let class = &mut self.prios[prio];
        let pkt = class.pop()?;
        match class.head {
            NO_PACKET => self.nonempty_mask &= !(1 << prio),
            // It leaves next, one serialization time from now.
            next => pkts.prefetch(next),
        }
        let size = pkts[pkt].size_bytes as u64;
        class.queue_bytes -= size;
        self.queued_bytes -= size;
        Some((pkt, size))
    }

    /// The most urgent priority whose queue holds packets (the one a departure will most
    /// likely take from).
    #[inline]
    pub fn first_queued(&self) -> Option<usize> {
        (self.nonempty_mask != 0).then(|| self.nonempty_mask.trailing_zeros() as usize)
    }

    /// True when any priority's queue holds packets.
    #[inline]
    pub fn has_queued(&self) -> bool {
        self.nonempty_mask != 0
    }

    /// True when the PFC or the rate-limited control queue holds packets.
    #[inline]
    pub fn has_side_queued(&self) -> bool {
        self.side_mask != 0
    }

    /// Queue a PFC frame: it leaves before anything else.
    pub fn push_pfc(&mut self, pkt: u32) {
        self.pfc_out.push_back(pkt);
        self.side_mask |= SIDE_PFC;
    }

    /// Take the next PFC frame to send.
    #[inline]
    pub fn pop_pfc(&mut self) -> Option<u32> {
        if self.side_mask & SIDE_PFC == 0 {
            return None;
        }
        let pkt = self.pfc_out.pop_front();
        if self.pfc_out.is_empty() {
            self.side_mask &= !SIDE_PFC;
        }
        pkt
    }

    /// The rate-limited control queue (`Settings::ctrl_queue`).
    pub fn limited(&self) -> &Fifo {
        &self.limited
    }

    /// True when the rate-limited control queue holds packets.
    #[inline]
    pub fn has_limited(&self) -> bool {
        self.side_mask & SIDE_LIMITED != 0
    }

    /// Append `pkt` to the rate-limited control queue.
    pub fn push_limited(&mut self, pkt: u32) {
        self.limited.push_back(pkt);
        self.side_mask |= SIDE_LIMITED;
    }

    /// Take the head of the rate-limited control queue.
    pub fn pop_limited(&mut self) -> Option<u32> {
        let pkt = self.limited.pop_front();
        if self.limited.is_empty() {
            self.side_mask &= !SIDE_LIMITED;
        }
        pkt
    }

    /// Packets queued for transmission on this port, every priority.
    pub fn queued_pkts(&self) -> usize {
        self.prios.iter().map(PrioState::len).sum()
    }

    /// Total bytes queued for transmission on this port.
    #[inline]
    pub fn backlog_bytes(&self) -> u64 {
        self.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn upcoming_names_the_slots_alloc_fills_next() {
        let mut a = Arena::default();
        let p = Packet::new(PktKind::Data, 0, 0, 1000, 0);
        let ids: Vec<u32> = (0..6).map(|_| a.alloc(p)).collect();
        for &i in &[4, 1, 3] {
            a.free(ids[i]);
        }
        let told: Vec<Option<u32>> = (0..4).map(|k| a.upcoming(k)).collect();
        let got: Vec<u32> = (0..4).map(|_| a.alloc(p)).collect();
        assert_eq!(told, vec![Some(3), Some(1), Some(4), None]);
        assert_eq!(got, vec![3, 1, 4, 6]);
    }

    #[test]
    fn a_port_keeps_what_every_packet_touches_in_few_cache_lines() {
        crate::sim::assert_in_lines::<Port>(&[
            (offset_of!(Port, busy_until_ps), 0),
            (offset_of!(Port, tx_bytes), 0),
            (offset_of!(Port, peer), 0),
            (offset_of!(Port, pfc_sent_mask), 0),
            (offset_of!(Port, side_mask), 0),
            (offset_of!(Port, queued_bytes), 0),
            (offset_of!(Port, max_queue_bytes), 1),
            (offset_of!(Port, kmin_bytes), 1),
            (offset_of!(Port, kmax_bytes), 1),
            (offset_of!(Port, hdrm_reserve_bytes), 1),
            (offset_of!(Port, pfc_alpha), 1),
            (offset_of!(Port, rate_bps), 1),
        ]);
        assert_eq!(offset_of!(Port, prios), 128);
        assert_eq!(std::mem::size_of::<PrioState>(), 64);
    }

    #[test]
    fn a_class_queue_is_first_in_first_out_across_its_head_slot() {
        let mut c = PrioState::default();
        assert!(c.is_empty() && c.pop().is_none());
        for pkt in [7, 0, 9] {
            c.push(pkt);
        }
        assert_eq!(
            (c.len(), c.packets().collect::<Vec<_>>()),
            (3, vec![7, 0, 9])
        );
        assert_eq!(c.pop(), Some(7));
        c.push(4);
        let order: Vec<u32> = std::iter::from_fn(|| c.pop()).collect();
        assert_eq!(order, vec![0, 9, 4]);
        assert_eq!((c.len(), c.packets().next()), (0, None));
        assert!(c.is_empty());
    }
}
