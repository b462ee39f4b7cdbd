//! What hooks see: narrow contexts over the engine's state. `Tx` and `Rx` (a flow from its
//! sender's or receiver's side), `HostCtx` (a receiving host), `Sw` (a switch egress port).

use super::scheme::CtrlMsg;
use crate::net::{IntHop, IntStack, Mark, Packet, Port, SchemeHdr};
use crate::sim::{Event, EventQueue, Stream, TimerEpochs, TimerOwner};
use crate::transport::{Flow, SendCtl};

/// Set timer `kind` of an owner at `at_ps`, replacing any pending one of that kind.
fn set_timer(
    q: &mut EventQueue,
    epochs: &mut TimerEpochs,
    owner: TimerOwner,
    id: u32,
    kind: u8,
    at_ps: u64,
) {
    let e = &mut epochs[kind as usize];
    *e = e.wrapping_add(1);
    q.push(
        at_ps,
        Event::Timer {
            owner,
            kind,
            id,
            epoch: *e,
        },
    );
}

/// A flow into a receiving host, as the host's scheduler sees it (`SchemeInfo::inbound_flows`):
/// listed from its first data or control packet at the receiver until every byte arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InboundFlow {
    pub flow: u32,
    /// Sending host.
    pub src: u32,
    /// `transport::UNBOUNDED` for a long-lived flow.
    pub size_bytes: u64,
    /// Bytes received in order (every byte below it has arrived).
    pub received_bytes: u64,
}

impl InboundFlow {
    /// Bytes still to arrive.
    pub fn remaining_bytes(&self) -> u64 {
        self.size_bytes.saturating_sub(self.received_bytes)
    }
}

/// The receiving host's part of a receiver hook's view: its timers and inbound flows.
pub(crate) struct RxHost<'a> {
    pub timers: &'a mut TimerEpochs,
    pub inbound: &'a [InboundFlow],
}

/// A hook's view of one flow from one side (`SENDER`): the clock, its timers, the schemes'
/// random stream, and control packets to the other side. `Tx` adds the send control, `Rx` the
/// receive state and the receiving host.
pub struct FlowCtx<'a, const SENDER: bool> {
    pub now_ps: u64,
    pub(super) flow_id: u32,
    /// The flow's place in the simulation's per-flow arrays (`transport::Flows::slot`).
    pub(super) slot: u32,
    pub(super) f: &'a mut Flow,
    q: &'a mut EventQueue,
    out: &'a mut Vec<CtrlMsg>,
    rng: &'a mut Stream,
    /// The receiving host (receiver hooks only).
    host: Option<RxHost<'a>>,
}

/// What a sender hook may see and touch: the clock, the flow's sequence state (read only), its
/// send control (rate, window, halt, credit, priority), its timers, and control packets to send.
pub type Tx<'a> = FlowCtx<'a, true>;
/// What a receiver hook may see and touch: the clock, the flow's receive state (read only),
/// its timers, and control packets to send.
pub type Rx<'a> = FlowCtx<'a, false>;

impl<'a, const SENDER: bool> FlowCtx<'a, SENDER> {
    #[inline(always)]
    pub(crate) fn new(
        now_ps: u64,
        (flow_id, slot): (u32, u32),
        f: &'a mut Flow,
        q: &'a mut EventQueue,
        out: &'a mut Vec<CtrlMsg>,
        rng: &'a mut Stream,
    ) -> Self {
        FlowCtx {
            now_ps,
            flow_id,
            slot,
            f,
            q,
            out,
            rng,
            host: None,
        }
    }
    pub fn flow_id(&self) -> u32 {
        self.flow_id
    }
    /// When the flow starts (the workload's time).
    pub fn start_ps(&self) -> u64 {
        self.f.start_ps
    }
    /// Flows to this flow's receiver that start at the same instant, itself included: what a
    /// receiver that asks for them at once knows when it asks.
    pub fn cohort_flows(&self) -> u32 {
        self.f.cohort
    }
    /// The schemes' random stream (seeded by the scenario, apart from the fabric's), for
    /// jitter and tie-breaks.
    pub fn rng(&mut self) -> &mut Stream {
        self.rng
    }
    fn epochs(&mut self) -> &mut TimerEpochs {
        if SENDER {
            &mut self.f.tx_timers
        } else {
            &mut self.f.rx_timers
        }
    }
    /// Fire `on_timer(kind)` at `at_ps`, replacing a pending timer of that kind.
    pub fn set_timer(&mut self, kind: u8, at_ps: u64) {
        let owner = if SENDER {
            TimerOwner::Sender
        } else {
            TimerOwner::Receiver
        };
        let epochs = if SENDER {
            &mut self.f.tx_timers
        } else {
            &mut self.f.rx_timers
        };
        set_timer(self.q, epochs, owner, self.flow_id, kind, at_ps);
    }
    /// Cancel the pending timer of `kind`, if any.
    pub fn cancel_timer(&mut self, kind: u8) {
        let e = &mut self.epochs()[kind as usize];
        *e = e.wrapping_add(1);
    }
    /// Send a control packet to the flow's other end (the receiver from a sender hook, the
    /// sender from a receiver hook), stamped with the current time.
    pub fn send_ctrl(&mut self, code: u8, hdr: SchemeHdr, mark: Mark) {
        self.out.push(CtrlMsg {
            flow: self.flow_id,
            to_sender: !SENDER,
            code,
            hdr,
            mark,
            ts_ps: self.now_ps,
        });
    }
}

impl<'a> Rx<'a> {
    pub(crate) fn with_host(mut self, host: RxHost<'a>) -> Self {
        self.host = Some(host);
        self
    }
    fn rx_host(&self) -> &RxHost<'a> {
        self.host.as_ref().expect("a receiver hook has its host")
    }
    /// Fire the receiving host's `on_host_timer(kind)` at `at_ps`, replacing a pending timer
    /// of that kind (a per-host pacer, e.g. NDP's pulls, started by a flow's data).
    pub fn set_host_timer(&mut self, kind: u8, at_ps: u64) {
        let host = self.f.dst;
        let h = self.host.as_mut().expect("a receiver hook has its host");
        set_timer(self.q, h.timers, TimerOwner::Host, host, kind, at_ps);
    }
    /// The receiving host's inbound flows, this one included until its last byte arrived
    /// (empty unless the scheme has `inbound_flows`). Order: first arrival, with a finished
    /// flow's place taken by the last one.
    pub fn inbound(&self) -> &[InboundFlow] {
        self.rx_host().inbound
    }
    /// Send a control packet from this host to the sender of any flow (a grant, a pull, a
    /// token to the flow a host-wide schedule picked), stamped with the current time.
    pub fn send_ctrl_to(&mut self, flow: u32, code: u8, hdr: SchemeHdr) {
        self.out
            .push(CtrlMsg::to_sender(flow, code, hdr, self.now_ps));
    }
}

impl Tx<'_> {
    /// The flow's rate, window, halt time, credit and data priority.
    #[inline]
    pub fn ctl(&mut self) -> &mut SendCtl {
        &mut self.f.ctl
    }
    #[inline]
    pub fn rate_bps(&self) -> u64 {
        self.f.ctl.rate_bps
    }
    #[inline]
    pub fn line_rate_bps(&self) -> u64 {
        self.f.line_rate_bps
    }
    #[inline]
    pub fn mtu_payload_bytes(&self) -> u64 {
        self.f.mtu_payload_bytes
    }
    /// A full data packet's bytes on the wire (payload and headers), which the pacer charges.
    #[inline]
    pub fn mtu_wire_bytes(&self) -> u64 {
        self.f.mtu_payload_bytes + self.f.header_bytes as u64
    }
    /// Next new byte to send.
    #[inline]
    pub fn snd_nxt(&self) -> u64 {
        self.f.snd_nxt
    }
    /// Every byte below it is acknowledged.
    #[inline]
    pub fn snd_una(&self) -> u64 {
        self.f.snd_una
    }
    /// The base RTT the scheme asked for (`SchemeInfo::base_rtt`; 0 for none).
    #[inline]
    pub fn base_rtt_ps(&self) -> u64 {
        self.f.base_rtt_ps
    }
    /// Rate of the last link to the receiver (`BaseRtt::Path` only).
    pub fn last_hop_bps(&self) -> u64 {
        self.f.path.last_hop_bps
    }
    /// Bandwidth-delay product of `base_rtt_ps` at the line rate.
    pub fn bdp_bytes(&self) -> u64 {
        self.f.bdp_bytes()
    }
    /// The flow's size (`transport::UNBOUNDED` while a long-lived flow runs).
    #[inline]
    pub fn size_bytes(&self) -> u64 {
        self.f.size_bytes
    }
    /// The flow's own first window (`[[flows]] first_window`), if it has one: use it through
    /// `first_window_bytes` (`SchemeInfo::first_window`).
    pub fn first_window_bytes(&self) -> Option<u64> {
        let packets = u64::from(self.f.first_window_packets);
        (packets > 0).then_some(packets * self.f.mtu_payload_bytes)
    }
    /// Bytes not yet sent once.
    #[inline]
    pub fn unsent_bytes(&self) -> u64 {
        self.f.size_bytes.saturating_sub(self.f.snd_nxt)
    }
    /// Whether a packet asked for with `resend` still waits to go again.
    pub fn resend_pending(&self) -> bool {
        self.resends_waiting() > 0
    }
    /// How many packets asked for with `resend` still wait to go again.
    pub fn resends_waiting(&self) -> u64 {
        u64::from(self.f.rtx_seq != u64::MAX)
            + self.f.loss.resend.as_ref().map_or(0, |q| q.len() as u64)
    }
    /// Send the packet starting at byte `seq` again (`SchemeInfo::own_recovery` only): after
    /// earlier requests, ahead of new data. Ignored below `snd_una` or at or past `snd_nxt`.
    pub fn resend(&mut self, seq: u64) {
        assert!(
            self.f.loss.resend.is_some(),
            "Tx::resend needs SchemeInfo::own_recovery"
        );
        if seq < self.f.snd_una || seq >= self.f.snd_nxt {
            return;
        }
        if self.f.rtx_seq == u64::MAX {
            self.f.rtx_seq = seq;
        } else if let Some(q) = &mut self.f.loss.resend {
            q.push_back(seq);
        }
    }
}

impl Rx<'_> {
    /// Sending host id.
    pub fn src(&self) -> u32 {
        self.f.src
    }
    /// Receiving host id.
    pub fn dst(&self) -> u32 {
        self.f.dst
    }
    /// Every byte below it has arrived.
    pub fn rcv_nxt(&self) -> u64 {
        self.f.rcv_nxt
    }
    /// A full data packet's bytes on the wire (payload and headers).
    pub fn mtu_wire_bytes(&self) -> u64 {
        self.f.mtu_payload_bytes + self.f.header_bytes as u64
    }
    /// The packet starting at byte `seq` has arrived: below `rcv_nxt`, or held beyond a gap
    /// (receivers that keep such packets: `SchemeInfo::own_recovery`, IRN).
    pub fn has_arrived(&self, seq: u64) -> bool {
        seq < self.f.rcv_nxt
            || self
                .f
                .ooo
                .as_ref()
                .is_some_and(|o| o.held.contains(seq / self.f.mtu_payload_bytes))
    }
    /// The flow's size as the receiver knows it (`transport::UNBOUNDED` for a long-lived
    /// flow until it hears of the stop, `Flow::rx_size_bytes`).
    pub fn size_bytes(&self) -> u64 {
        self.f.rx_size_bytes()
    }
    pub fn mtu_payload_bytes(&self) -> u64 {
        self.f.mtu_payload_bytes
    }
    /// The flow's path base RTT (`BaseRtt::Path` only).
    pub fn base_rtt_ps(&self) -> u64 {
        self.f.base_rtt_ps
    }
    /// Bandwidth-delay product of `base_rtt_ps` at the line rate.
    pub fn bdp_bytes(&self) -> u64 {
        self.f.bdp_bytes()
    }
    /// A full data packet's one-way delay on the flow's idle path: propagation plus
    /// store-and-forward serialization per hop (`BaseRtt::Path` only).
    pub fn base_owd_ps(&self) -> u64 {
        self.f.path.base_owd_ps
    }
    /// Rate of the last link into the receiver (`BaseRtt::Path` only).
    pub fn last_hop_bps(&self) -> u64 {
        self.f.path.last_hop_bps
    }
}

/// What a host timer hook may touch: the clock, the host's timers and inbound flows, the
/// schemes' random stream, and control packets to any flow's sender.
pub struct HostCtx<'a> {
    pub now_ps: u64,
    pub host: u32,
    q: &'a mut EventQueue,
    epochs: &'a mut TimerEpochs,
    inbound: &'a [InboundFlow],
    rng: &'a mut Stream,
    out: &'a mut Vec<CtrlMsg>,
}

impl<'a> HostCtx<'a> {
    pub(crate) fn new(
        now_ps: u64,
        host: u32,
        q: &'a mut EventQueue,
        h: RxHost<'a>,
        rng: &'a mut Stream,
        out: &'a mut Vec<CtrlMsg>,
    ) -> HostCtx<'a> {
        HostCtx {
            now_ps,
            host,
            q,
            epochs: h.timers,
            inbound: h.inbound,
            rng,
            out,
        }
    }
    /// The host's inbound flows (`Rx::inbound`).
    pub fn inbound(&self) -> &[InboundFlow] {
        self.inbound
    }
    /// The schemes' random stream.
    pub fn rng(&mut self) -> &mut Stream {
        self.rng
    }
    /// Fire `on_host_timer(kind)` at `at_ps`, replacing a pending timer of that kind.
    pub fn set_timer(&mut self, kind: u8, at_ps: u64) {
        set_timer(
            self.q,
            self.epochs,
            TimerOwner::Host,
            self.host,
            kind,
            at_ps,
        );
    }
    /// Send a control packet from this host to the sender of any flow (`Rx::send_ctrl_to`).
    pub fn send_ctrl_to(&mut self, flow: u32, code: u8, hdr: SchemeHdr) {
        self.out
            .push(CtrlMsg::to_sender(flow, code, hdr, self.now_ps));
    }
}

/// What a switch hook may see and touch: the clock, the egress port (read only) and the
/// packet's priority, the marking RNG, INT records, the port's timers, and feedback packets to
/// a flow's source (routed back from this switch).
pub struct Sw<'a> {
    pub now_ps: u64,
    pub port_id: u32,
    pub prio: u8,
    port: &'a Port,
    /// Queue bytes of `prio` including the packet at hand (enqueue) or after it left (dequeue).
    queue_bytes: u64,
    pkt_id: u32,
    ints: &'a mut Vec<IntStack>,
    arena_len: usize,
    rng: &'a mut Stream,
    q: &'a mut EventQueue,
    epochs: &'a mut TimerEpochs,
    out: &'a mut Vec<CtrlMsg>,
    /// Dequeue hook: this port's RED (the fabric's ECN) has just marked the packet CE.
    pub(crate) red_ce: bool,
}

impl<'a> Sw<'a> {
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn new(
        now_ps: u64,
        port_id: u32,
        prio: u8,
        port: &'a Port,
        queue_bytes: u64,
        pkt: (u32, usize),
        ints: &'a mut Vec<IntStack>,
        rng: &'a mut Stream,
        q: &'a mut EventQueue,
        epochs: &'a mut TimerEpochs,
        out: &'a mut Vec<CtrlMsg>,
    ) -> Sw<'a> {
        Sw {
            now_ps,
            port_id,
            prio,
            port,
            queue_bytes,
            pkt_id: pkt.0,
            arena_len: pkt.1,
            ints,
            rng,
            q,
            epochs,
            out,
            red_ce: false,
        }
    }
    /// In `on_dequeue`: the fabric's RED at this port has just marked the packet at hand CE
    /// (it runs first; a scheme may reinterpret the mark, as TCD on ECN does).
    pub fn red_marked(&self) -> bool {
        self.red_ce
    }
    /// The egress port: rate, bytes sent, backlog of every priority.
    pub fn port(&self) -> &Port {
        self.port
    }
    /// Bytes queued at this priority (see the hook for whether the packet at hand counts).
    pub fn queue_bytes(&self) -> u64 {
        self.queue_bytes
    }
    /// The fabric's marking random stream (shared with RED, so runs stay deterministic).
    pub fn rng(&mut self) -> &mut Stream {
        self.rng
    }
    /// Append an INT record to the packet at hand (`pkt.sub` counts them), if it has room.
    #[inline]
    pub fn push_int(&mut self, pkt: &mut Packet, hop: IntHop) {
        let n = pkt.sub as usize;
        if n >= crate::net::MAX_INT_HOPS {
            return;
        }
        let i = self.pkt_id as usize;
        if i >= self.ints.len() {
            self.ints
                .resize(self.arena_len.max(i + 1), IntStack::default());
        }
        self.ints[i].hops[n] = hop;
        pkt.sub += 1;
    }
    /// Send feedback to the source of `flow`, from this switch, at control priority.
    pub fn send_to_source(&mut self, flow: u32, code: u8, hdr: SchemeHdr, mark: Mark) {
        self.out.push(CtrlMsg {
            flow,
            to_sender: true,
            code,
            hdr,
            mark,
            ts_ps: self.now_ps,
        });
    }
    /// Fire `on_timer(kind)` at `at_ps`, replacing a pending timer of that kind.
    pub fn set_timer(&mut self, kind: u8, at_ps: u64) {
        set_timer(
            self.q,
            self.epochs,
            TimerOwner::Port,
            self.port_id,
            kind,
            at_ps,
        );
    }
}

/// A lone flow and an event queue, for calling a scheme's hooks directly in unit tests.
#[cfg(test)]
pub(crate) struct TestFlow {
    pub f: Flow,
    pub q: EventQueue,
    pub out: Vec<CtrlMsg>,
    pub rng: Stream,
}

#[cfg(test)]
impl TestFlow {
    /// A long-lived flow at `line_rate_bps`, currently sending at line rate, MTU payload 1000 B.
    pub fn new(line_rate_bps: u64) -> TestFlow {
        let mut f = Flow::new(0, 1, None, 0, None);
        f.line_rate_bps = line_rate_bps;
        f.ctl.rate_bps = line_rate_bps;
        f.mtu_payload_bytes = 1000;
        f.header_bytes = 48;
        TestFlow {
            f,
            q: EventQueue::default(),
            out: Vec::new(),
            rng: Stream::new(1, 1, 0),
        }
    }
    /// The sender context at `now_ps`.
    pub fn tx(&mut self, now_ps: u64) -> Tx<'_> {
        Tx::new(
            now_ps,
            (0, 0),
            &mut self.f,
            &mut self.q,
            &mut self.out,
            &mut self.rng,
        )
    }
    /// The receiver context at `now_ps` (no receiving host: per-flow hooks only).
    pub fn rx(&mut self, now_ps: u64) -> Rx<'_> {
        Rx::new(
            now_ps,
            (0, 0),
            &mut self.f,
            &mut self.q,
            &mut self.out,
            &mut self.rng,
        )
    }
}

/// Run `f` with a switch context for priority 3 of `port` at `now_ps`, `queue_bytes` queued;
/// `red_ce`: the fabric's RED has just marked the packet at hand.
#[cfg(test)]
pub(crate) fn with_sw(
    port: &Port,
    queue_bytes: u64,
    now_ps: u64,
    red_ce: bool,
    f: impl FnOnce(&mut Sw),
) {
    let (mut ints, mut rng, mut q) = (Vec::new(), Stream::new(1, 1, 0), EventQueue::default());
    let (mut epochs, mut out) = ([0; crate::sim::TIMER_KINDS], Vec::new());
    let mut sw = Sw::new(
        now_ps,
        0,
        3,
        port,
        queue_bytes,
        (0, 0),
        &mut ints,
        &mut rng,
        &mut q,
        &mut epochs,
        &mut out,
    );
    sw.red_ce = red_ce;
    f(&mut sw);
}
