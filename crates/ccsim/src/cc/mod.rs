//! Congestion-control schemes. A scheme is one file `cc/<name>.rs` holding up to three parts
//! and its typed parameters, plus one line in `registry!` below; nothing outside `cc/` names a
//! concrete scheme. The parts (each a trait with no-op defaults; `()` is the empty part):
//!
//! * **Sender** (`SenderPart`, per flow): start, ACK/NACK, control packets addressed to the
//!   flow, each data packet sent, its timers, finish. It sets the flow's rate, window, halt
//!   ("send nothing before") and credit through `Tx`, and may send control packets.
//! * **Receiver** (`ReceiverPart`, per flow, with per-host state `Host`): each data arrival,
//!   what each ACK carries (`ack_hdr`), its timers and the host's timers; it may originate
//!   control packets (a CNP with a rate, a grant, a credit, a pull).
//! * **Switch** (`SwitchPart`, per egress port; hooks get the priority): enqueue (drop, trim,
//!   mark, sample, feedback to the source), dequeue (mark, stamp INT or a rate), PFC PAUSE and
//!   RESUME received by the port, its timers (a periodic tick re-arms itself).
//!
//! Dispatch is static: the registry macro generates one state store per part, an enum whose
//! variant per scheme type holds every flow's (host's, port's) state in an array of that
//! type, and each hook is a `match` on (parameters, store). No trait objects, no hashing.
//! Hooks run at the engine's call sites listed in `docs/design.md`; after every sender hook the
//! engine restarts the host's NIC, and control packets a hook asks for are sent right after it.

/// TCD (congestion state per port), shared by the `*_tcd` schemes and ACC.
pub mod tcd;

use crate::net::{IntHop, IntStack, Mark, Packet, Port, SchemeHdr};
use crate::scenario::ScenarioError;
use crate::sim::{Event, EventQueue, Rng, TimerOwner};
use crate::transport::{Flow, SendCtl};
use serde::{de::DeserializeOwned, Serialize};
use std::fmt::Debug;

/// Timer kinds each owner (a flow's sender or receiver, a host, a port) may use: 0..TIMER_KINDS.
pub const TIMER_KINDS: usize = 4;
/// Current epoch per timer kind of one owner; an `Event::Timer` with an older epoch is stale.
pub type TimerEpochs = [u32; TIMER_KINDS];

/// ECN (RED) thresholds a scheme wants by default, given at `ref_rate_bps` and scaled by each
/// port's rate.
#[derive(Clone, Copy, Debug)]
pub struct EcnDefaults {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
    pub ref_rate_bps: u64,
}

/// ECN thresholds for a scheme without its own that a scenario turns marking on for: the HPCC
/// simulator's DCQCN maps (400 KB / 1600 KB / 0.2 at 100 Gb/s).
pub const DEFAULT_ECN: EcnDefaults = EcnDefaults {
    kmin_bytes: 400_000,
    kmax_bytes: 1_600_000,
    pmax: 0.2,
    ref_rate_bps: 100_000_000_000,
};

/// The fabric a scheme runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FabricMode {
    /// Lossless (PFC) or lossy.
    Any,
    /// Needs PFC.
    Lossless,
    /// Needs a lossy fabric (PFC off).
    Lossy,
}

/// The base RTT a scheme's flows learn at build time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseRtt {
    None,
    /// The fabric's longest base RTT, for a BDP window (the HPCC simulator's `GLOBAL_T 1`).
    Fabric,
    /// The flow's own path: its base RTT, its data packets' base one-way delay and the rate of
    /// its last hop (`Rx::base_owd_ps`, `last_hop_bps`).
    Path,
}

/// A registered scheme name: how scenarios name it and what the engine must do for it.
#[derive(Clone, Copy, Debug)]
pub struct SchemeInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub paper: &'static str,
    /// Switches mark ECN (RED) with these thresholds unless the scenario says otherwise.
    pub ecn: Option<EcnDefaults>,
    /// Default priority of ACK/NACK/control packets; None = the data priority (ACKs share the
    /// data queue).
    pub ack_priority: Option<u8>,
    /// Switches queue ACKs and NACKs with data, whatever the NIC's class for them: the HPCC
    /// ns-3 simulator's switches do (its `ACK_HIGH_PRIO` acts in the NIC only), and the
    /// papers ran their DCQCN and TIMELY baselines on it. False: the NIC's class end to end.
    pub switch_acks_in_data_queue: bool,
    /// Header bytes the scheme adds to every data packet and ACK (INT, timestamps).
    pub header_bytes: u32,
    /// Which base RTT the scheme's flows learn (`Tx::base_rtt_ps`, `Rx::base_rtt_ps`).
    pub base_rtt: BaseRtt,
    /// Data packets collect INT records (the engine keeps them beside the packet and hands the
    /// data packet's records to the sender with its ACK).
    pub int: bool,
    /// A lossy switch trims a data packet it would drop to its header (NDP).
    pub trim: bool,
    /// Senders may give each packet its own priority (`SendCtl::data_prio`).
    pub prio_per_packet: bool,
    /// Control packets of one code get their own rate-limited, drop-tail queue at every port.
    pub ctrl_queue: Option<CtrlQueue>,
    /// Bytes on the wire of a control packet, per code (others: `host.ack_bytes`).
    pub ctrl_bytes: &'static [(u8, u32)],
    /// Switches hash each data packet's path key (`DataOut::path_key`) with its flow, so a
    /// sender may spray packets over equal-cost paths (NDP, Homa); else one path per flow.
    pub path_per_packet: bool,
    /// The scheme recovers lost data itself (`Tx::resend`): the engine's go-back-N, IRN and
    /// timeouts are off, and receivers keep packets beyond a gap (ACKs name them, `AckInfo`).
    pub own_recovery: bool,
    /// The engine keeps each receiving host's inbound flows (`Rx::inbound`, `HostCtx::inbound`).
    pub inbound_flows: bool,
    /// Switch hooks also see packets of priority 0 (ACKs at priority 0, control packets, trimmed
    /// headers); without it they see data and ACK packets of the other classes only.
    pub switch_sees_ctrl: bool,
    pub fabric: FabricMode,
}

/// A rate-limited, drop-tail egress queue, at every port, for the control packets of one code
/// (ExpressPass credits: 84/(84+1538) of the link, a few credits deep). It is served after
/// PFC frames and ahead of everything else, but never faster than `share_num / share_den` of
/// the link; a packet finding `limit_packets` queued is dropped (counted as `ctrl_drops`).
/// Such a scheme sends its control packets at priority 0 (`ack_priority: Some(0)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtrlQueue {
    pub code: u8,
    pub share_num: u32,
    pub share_den: u32,
    pub limit_packets: u32,
}

impl SchemeInfo {
    /// A scheme with nothing but a name: no ECN, ACKs at priority 0, no header, no BDP window,
    /// no INT, no trimming, any fabric. Registry entries override what they need.
    pub const BASE: SchemeInfo = SchemeInfo {
        name: "",
        description: "",
        paper: "-",
        ecn: None,
        ack_priority: Some(0),
        switch_acks_in_data_queue: false,
        header_bytes: 0,
        base_rtt: BaseRtt::None,
        int: false,
        trim: false,
        prio_per_packet: false,
        ctrl_queue: None,
        ctrl_bytes: &[],
        path_per_packet: false,
        own_recovery: false,
        inbound_flows: false,
        switch_sees_ctrl: false,
        fabric: FabricMode::Any,
    };
}

/// A scheme's typed parameters (`[cc.params]`, serde with documented defaults).
pub trait Params: Clone + Debug + Serialize + DeserializeOwned {
    /// Check ranges; errors name `cc.params.<field>`.
    fn validate(&self) -> Result<(), ScenarioError> {
        Ok(())
    }
}

/// One scheme type: its registered names and its parts.
pub trait Scheme {
    /// The names this type serves (one per set of default parameters).
    const SCHEMES: &'static [SchemeInfo];
    type Params: Params;
    type Sender: SenderPart<Self::Params>;
    type Receiver: ReceiverPart<Self::Params>;
    type Switch: SwitchPart<Self::Params>;
    /// Default parameters of the registered name `name` (one of `SCHEMES`).
    fn default_params(name: &str) -> Self::Params;
    /// Checks of `[cc.params]` that depend on the name (beyond `Params::validate`).
    fn check(_name: &str, _p: &Self::Params) -> Result<(), ScenarioError> {
        Ok(())
    }
}

/// The sender part, per flow.
pub trait SenderPart<P>: Clone + Debug {
    fn new(p: &P) -> Self;
    /// The flow starts; the engine has set its rate to line rate and opened its window.
    fn on_start(&mut self, _p: &P, _tx: &mut Tx) {}
    /// An ACK or NACK arrived (the transport has already advanced `snd_una`).
    fn on_ack(&mut self, _p: &P, _tx: &mut Tx, _ack: &AckInfo) {}
    /// A control packet for this flow arrived (CNP, feedback, grant, credit, pull, ...).
    fn on_ctrl(&mut self, _p: &P, _tx: &mut Tx, _c: &CtrlInfo) {}
    /// A data packet is leaving the NIC (pre-transmit: the flow's sequence, pacing and credit
    /// already count it); the hook may write its scheme header and path key.
    fn on_send(&mut self, _p: &P, _tx: &mut Tx, _d: &mut DataOut) {}
    /// Timer `kind` set through `Tx::set_timer` fired (stale timers never reach the hook).
    fn on_timer(&mut self, _p: &P, _tx: &mut Tx, _kind: u8) {}
    /// The flow finished; its timers are already cancelled.
    fn on_finish(&mut self, _p: &P, _tx: &mut Tx) {}
}

/// The receiver part, per flow, with state per receiving host.
pub trait ReceiverPart<P>: Clone + Debug {
    /// Whether the part acts with parameters `p`; if not (always, for the empty part) the engine
    /// skips its data-arrival and ACK-header hooks.
    fn active(_p: &P) -> bool {
        true
    }
    /// State per receiving host (a host's active flows, a grant or pull schedule).
    type Host: Clone + Debug + Default;
    fn new(p: &P) -> Self;
    /// A data packet of this flow arrived (in order, out of order, duplicate or trimmed).
    /// Runs before the transport's ACK or NACK for it is built.
    fn on_data(&mut self, _host: &mut Self::Host, _p: &P, _rx: &mut Rx, _d: &DataInfo) {}
    /// A control packet for this flow's receiver arrived (a request to send, ...).
    fn on_ctrl(&mut self, _host: &mut Self::Host, _p: &P, _rx: &mut Rx, _c: &CtrlInfo) {}
    /// The scheme fields of the next ACK/NACK (a window, a rate ...).
    fn ack_hdr(&self, _p: &P) -> SchemeHdr {
        SchemeHdr::default()
    }
    /// Timer `kind` set through `Rx::set_timer` fired.
    fn on_timer(&mut self, _host: &mut Self::Host, _p: &P, _rx: &mut Rx, _kind: u8) {}
    /// Timer `kind` set through `HostCtx::set_timer` fired.
    fn on_host_timer(_host: &mut Self::Host, _p: &P, _hx: &mut HostCtx, _kind: u8) {}
}

/// What a switch does with a packet it is about to queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    Drop,
    /// Cut a data packet to its header and queue it at control priority (NDP).
    Trim,
}

/// The switch part, per egress port (hooks get the packet's priority in `Sw::prio`).
pub trait SwitchPart<P>: Clone + Debug {
    /// False for the empty part: the engine then keeps no per-port state and calls no hook.
    const ENABLED: bool = true;
    fn new(p: &P, port: &Port) -> Self;
    /// A packet passed admission and is about to join the queue; `sw.queue_bytes()` counts it.
    /// Sees the packets `on_dequeue` sees. A switch part may rewrite `pkt.hdr` as its scheme
    /// defines (raise a field, AND one across hops as AMRT's mark, stamp a rate); `pkt.mark`
    /// only strengthens.
    fn on_enqueue(&mut self, _p: &P, _sw: &mut Sw, _pkt: &mut Packet) -> Verdict {
        Verdict::Enqueue
    }
    /// A packet leaves the queue (after RED marking): data and ACK packets of priority > 0,
    /// and with `SchemeInfo::switch_sees_ctrl` every packet (PFC frames excepted).
    fn on_dequeue(&mut self, _p: &P, _sw: &mut Sw, _pkt: &mut Packet) {}
    /// The port received a PFC PAUSE for class `sw.prio`.
    fn on_pause(&mut self, _p: &P, _sw: &mut Sw) {}
    /// The port received a PFC RESUME for class `sw.prio`.
    fn on_resume(&mut self, _p: &P, _sw: &mut Sw) {}
    /// Timer `kind` set through `Sw::set_timer` fired.
    fn on_timer(&mut self, _p: &P, _sw: &mut Sw, _kind: u8) {}
}

impl<P> SenderPart<P> for () {
    fn new(_: &P) -> Self {}
}
impl<P> ReceiverPart<P> for () {
    type Host = ();
    fn active(_: &P) -> bool {
        false
    }
    fn new(_: &P) -> Self {}
}
impl<P> SwitchPart<P> for () {
    const ENABLED: bool = false;
    fn new(_: &P, _: &Port) -> Self {}
}

/// An ACK or NACK as the sender sees it.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo<'a> {
    pub nack: bool,
    /// Cumulative ACK: every byte below it has arrived.
    pub ack_seq: u64,
    pub newly_acked_bytes: u64,
    /// Echo of the strongest mark on the data packets this ACK covers (a NACK: on the packet
    /// that triggered it).
    pub mark: Mark,
    /// Now minus the send time of the data packet this ACK answers.
    pub rtt_ps: u64,
    /// The receiver part's fields (`ReceiverPart::ack_hdr`).
    pub hdr: SchemeHdr,
    /// INT records of that data packet's path, one per switch (empty unless the scheme
    /// enables INT).
    pub int: &'a [IntHop],
    /// Selective repeat (`own_recovery`, IRN): first byte of the packet this ACK/NACK names
    /// (arrived beyond a gap, or trimmed), or None.
    pub sack_seq: Option<u64>,
    /// The named packet was trimmed: its payload is lost.
    pub trimmed: bool,
}

/// A data packet about to leave the NIC, as the sender's `on_send` sees it.
#[derive(Clone, Copy, Debug)]
pub struct DataOut {
    pub seq: u64,
    pub payload_bytes: u32,
    /// Bytes on the wire.
    pub size_bytes: u32,
    /// A retransmission (`Tx::resend`, IRN, go-back-N's repeat is new data again).
    pub retransmit: bool,
    /// The scheme's header fields (zero unless set here).
    pub hdr: SchemeHdr,
    /// Path key (31 bits) hashed by ECMP with the flow when the scheme has `path_per_packet`.
    pub path_key: u32,
}

/// A control packet as its destination sees it.
#[derive(Clone, Copy, Debug)]
pub struct CtrlInfo {
    pub code: u8,
    pub hdr: SchemeHdr,
    pub mark: Mark,
    /// When it was sent.
    pub sent_ps: u64,
}

/// A data packet as the receiver part sees it.
#[derive(Clone, Copy, Debug)]
pub struct DataInfo {
    pub seq: u64,
    pub payload_bytes: u32,
    pub size_bytes: u32,
    pub mark: Mark,
    /// When the sender transmitted it.
    pub sent_ps: u64,
    pub hdr: SchemeHdr,
    /// It was the next expected packet (the receiver's in-order point moved past it).
    pub in_order: bool,
    /// A switch trimmed it to its header; the payload is lost.
    pub trimmed: bool,
}

/// A control packet a hook asks the engine to send (after the hook returns, in order).
#[derive(Clone, Copy, Debug)]
pub struct CtrlMsg {
    pub flow: u32,
    /// Toward the flow's sender (true) or receiver (false).
    pub to_sender: bool,
    pub code: u8,
    pub hdr: SchemeHdr,
    pub mark: Mark,
    pub ts_ps: u64,
}

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
    flow_id: u32,
    f: &'a mut Flow,
    q: &'a mut EventQueue,
    out: &'a mut Vec<CtrlMsg>,
    rng: &'a mut Rng,
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
        flow_id: u32,
        f: &'a mut Flow,
        q: &'a mut EventQueue,
        out: &'a mut Vec<CtrlMsg>,
        rng: &'a mut Rng,
    ) -> Self {
        FlowCtx {
            now_ps,
            flow_id,
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
    /// The schemes' random stream (seeded by the scenario, apart from the fabric's), for
    /// jitter and tie-breaks.
    pub fn rng(&mut self) -> &mut Rng {
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
        self.out.push(CtrlMsg {
            flow,
            to_sender: true,
            code,
            hdr,
            mark: Mark::None,
            ts_ps: self.now_ps,
        });
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
    /// Bytes not yet sent once.
    #[inline]
    pub fn unsent_bytes(&self) -> u64 {
        self.f.size_bytes.saturating_sub(self.f.snd_nxt)
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
    /// The flow's size (`transport::UNBOUNDED` while a long-lived flow runs).
    pub fn size_bytes(&self) -> u64 {
        self.f.size_bytes
    }
    pub fn mtu_payload_bytes(&self) -> u64 {
        self.f.mtu_payload_bytes
    }
    /// The flow's path base RTT (`BaseRtt::Path` only).
    pub fn base_rtt_ps(&self) -> u64 {
        self.f.base_rtt_ps
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
/// schemes' random stream, and control packets to send (to any flow's sender or receiver).
pub struct HostCtx<'a> {
    pub now_ps: u64,
    pub host: u32,
    q: &'a mut EventQueue,
    epochs: &'a mut TimerEpochs,
    inbound: &'a [InboundFlow],
    rng: &'a mut Rng,
    out: &'a mut Vec<CtrlMsg>,
}

impl<'a> HostCtx<'a> {
    pub(crate) fn new(
        now_ps: u64,
        host: u32,
        q: &'a mut EventQueue,
        h: RxHost<'a>,
        rng: &'a mut Rng,
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
    pub fn rng(&mut self) -> &mut Rng {
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
    /// Send a control packet for `msg.flow`.
    pub fn send_ctrl(&mut self, msg: CtrlMsg) {
        self.out.push(msg);
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
    rng: &'a mut Rng,
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
        rng: &'a mut Rng,
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
    pub fn rng(&mut self) -> &mut Rng {
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

/// Every scheme ccsim knows, in `ccsim list` order.
pub fn schemes() -> impl Iterator<Item = &'static SchemeInfo> {
    SCHEME_TYPES.iter().flat_map(|t| t.iter())
}

/// Look a scheme up by name.
pub fn scheme(name: &str) -> Option<&'static SchemeInfo> {
    schemes().find(|s| s.name == name)
}

fn unknown_scheme(name: &str) -> ScenarioError {
    let names: Vec<&str> = schemes().map(|s| s.name).collect();
    ScenarioError::new(
        "cc.scheme",
        format!("unknown scheme `{name}`; use one of: {}", names.join(", ")),
    )
}

/// An array's start, length and element size in bytes.
#[inline(always)]
fn array_view<T>(s: &[T]) -> (*const u8, usize, usize) {
    (s.as_ptr().cast(), s.len(), std::mem::size_of::<T>())
}

/// `len`, `is_empty` and `prefetch` of one of the registry's per-part state arrays.
macro_rules! states_impl {
    ($name:ident, $($(#[$m:meta])* $v:ident),+) => {
        impl $name {
            #[inline(always)]
            pub fn len(&self) -> usize {
                self.view().1
            }
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            /// Start, length and element size (every variant is an array: they differ only in
            /// the element size).
            #[inline(always)]
            fn view(&self) -> (*const u8, usize, usize) {
                match self { $($(#[$m])* $name::$v(s) => array_view(s),)+ }
            }
            /// Start loading state `i`, if there is one: its first and last line.
            #[inline(always)]
            pub(crate) fn prefetch(&self, i: usize) {
                let (base, len, size) = self.view();
                if i < len {
                    crate::sim::prefetch_bytes(base.wrapping_add(i * size), size);
                }
            }
        }
    };
}

macro_rules! registry {
    ($($(#[$m:meta])* $v:ident => $module:ident :: $t:ident),+ $(,)?) => {
        $($(#[$m])* pub mod $module;)+
        /// The registered names of each scheme type, in `ccsim list` order.
        // Pushes, not vec![]: an entry may carry a #[cfg].
        #[allow(clippy::vec_init_then_push)]
        static SCHEME_TYPES: std::sync::LazyLock<Vec<&'static [SchemeInfo]>> =
            std::sync::LazyLock::new(|| {
                let mut v = Vec::new();
                $($(#[$m])* v.push(<$module::$t as Scheme>::SCHEMES);)+
                v
            });

        /// Typed parameters of the run's scheme.
        #[derive(Clone, Debug)]
        pub enum CcParams { $($(#[$m])* $v(<$module::$t as Scheme>::Params)),+ }
        /// Every flow's sender state, indexed by flow id: one array of the run's scheme's own
        /// type, so a state takes its own size, not the largest scheme's.
        #[derive(Clone, Debug)]
        pub enum SenderStates { $($(#[$m])* $v(Vec<<$module::$t as Scheme>::Sender>)),+ }
        /// Every flow's receiver state, indexed by flow id.
        #[derive(Clone, Debug)]
        pub enum ReceiverStates { $($(#[$m])* $v(Vec<<$module::$t as Scheme>::Receiver>)),+ }
        /// Every host's receiver state, indexed by host id.
        #[derive(Clone, Debug)]
        pub enum HostRxStates {
            $($(#[$m])* $v(Vec<
                <<$module::$t as Scheme>::Receiver as ReceiverPart<<$module::$t as Scheme>::Params>>::Host
            >)),+
        }
        /// Every port's switch state, indexed by port id (empty: the scheme has no switch part).
        #[derive(Clone, Debug)]
        pub enum SwitchStates { $($(#[$m])* $v(Vec<<$module::$t as Scheme>::Switch>)),+ }
        states_impl!(SenderStates, $($(#[$m])* $v),+);
        states_impl!(ReceiverStates, $($(#[$m])* $v),+);
        states_impl!(SwitchStates, $($(#[$m])* $v),+);

        impl CcParams {
            /// Parse and check `[cc.params]` for `name`; errors name `cc.params.<key>`.
            pub fn parse(name: &str, params: &toml::Table) -> Result<CcParams, ScenarioError> {
                let v = toml::Value::Table(params.clone());
                $($(#[$m])* if <$module::$t as Scheme>::SCHEMES.iter().any(|s| s.name == name) {
                    let p: <$module::$t as Scheme>::Params = crate::scenario::from_value_at(
                        v, "cc.params", <$module::$t as Scheme>::default_params(name))?;
                    p.validate()?;
                    <$module::$t as Scheme>::check(name, &p)?;
                    return Ok(CcParams::$v(p));
                })+
                Err(unknown_scheme(name))
            }
            /// The parameters with defaults filled in, for the resolved config and `ccsim list`.
            pub fn to_table(&self) -> toml::Table {
                match self {
                    $($(#[$m])* CcParams::$v(p) => toml::Table::try_from(p).expect("params serialize"),)+
                }
            }
            /// Fresh sender states of `flows` flows.
            pub fn new_senders(&self, flows: usize) -> SenderStates {
                match self { $($(#[$m])* CcParams::$v(p) =>
                    SenderStates::$v((0..flows).map(|_| SenderPart::new(p)).collect()),)+ }
            }
            /// Fresh receiver states of `flows` flows.
            pub fn new_receivers(&self, flows: usize) -> ReceiverStates {
                match self { $($(#[$m])* CcParams::$v(p) =>
                    ReceiverStates::$v((0..flows).map(|_| ReceiverPart::new(p)).collect()),)+ }
            }
            /// Fresh receiver states of `hosts` hosts.
            pub fn new_hosts(&self, hosts: usize) -> HostRxStates {
                match self { $($(#[$m])* CcParams::$v(_) =>
                    HostRxStates::$v((0..hosts).map(|_| Default::default()).collect()),)+ }
            }
            /// The scheme has a switch part.
            pub fn has_switch(&self) -> bool {
                match self {
                    $($(#[$m])* CcParams::$v(_) =>
                        <<$module::$t as Scheme>::Switch as SwitchPart<<$module::$t as Scheme>::Params>>::ENABLED,)+
                }
            }
            /// The scheme's receiver part acts with these parameters.
            pub fn has_receiver(&self) -> bool {
                match self {
                    $($(#[$m])* CcParams::$v(p) =>
                        <<$module::$t as Scheme>::Receiver as ReceiverPart<_>>::active(p),)+
                }
            }
            /// Fresh switch states of egress ports `ports` (none if the scheme has no switch
            /// part).
            pub fn new_switches(&self, ports: &[Port]) -> SwitchStates {
                let ports = if self.has_switch() { ports } else { &[] };
                match self { $($(#[$m])* CcParams::$v(p) =>
                    SwitchStates::$v(ports.iter().map(|port| SwitchPart::new(p, port)).collect()),)+ }
            }

            pub(crate) fn on_start(&self, s: &mut SenderStates, tx: &mut Tx) {
                let i = tx.flow_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_start(&mut s[i], p, tx),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            #[inline]
            pub(crate) fn on_ack(&self, s: &mut SenderStates, tx: &mut Tx, ack: &AckInfo) {
                let i = tx.flow_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_ack(&mut s[i], p, tx, ack),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_ctrl(&self, s: &mut SenderStates, tx: &mut Tx, c: &CtrlInfo) {
                let i = tx.flow_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_ctrl(&mut s[i], p, tx, c),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            #[inline]
            pub(crate) fn on_send(&self, s: &mut SenderStates, tx: &mut Tx, d: &mut DataOut) {
                let i = tx.flow_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_send(&mut s[i], p, tx, d),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_sender_timer(&self, s: &mut SenderStates, tx: &mut Tx, kind: u8) {
                let i = tx.flow_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_timer(&mut s[i], p, tx, kind),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_finish(&self, s: &mut SenderStates, tx: &mut Tx) {
                let i = tx.flow_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SenderStates::$v(s)) => SenderPart::on_finish(&mut s[i], p, tx),)+
                    _ => unreachable!("state of another scheme"),
                }
            }

            pub(crate) fn on_data(
                &self, s: &mut ReceiverStates, h: &mut HostRxStates, rx: &mut Rx, d: &DataInfo,
            ) {
                let (i, host) = (rx.flow_id as usize, rx.f.dst as usize);
                match (self, s, h) {
                    $($(#[$m])* (CcParams::$v(p), ReceiverStates::$v(s), HostRxStates::$v(h)) =>
                        ReceiverPart::on_data(&mut s[i], &mut h[host], p, rx, d),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_receiver_ctrl(
                &self, s: &mut ReceiverStates, h: &mut HostRxStates, rx: &mut Rx, c: &CtrlInfo,
            ) {
                let (i, host) = (rx.flow_id as usize, rx.f.dst as usize);
                match (self, s, h) {
                    $($(#[$m])* (CcParams::$v(p), ReceiverStates::$v(s), HostRxStates::$v(h)) =>
                        ReceiverPart::on_ctrl(&mut s[i], &mut h[host], p, rx, c),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn ack_hdr(&self, s: &ReceiverStates, i: usize) -> SchemeHdr {
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), ReceiverStates::$v(s)) => ReceiverPart::ack_hdr(&s[i], p),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_receiver_timer(
                &self, s: &mut ReceiverStates, h: &mut HostRxStates, rx: &mut Rx, kind: u8,
            ) {
                let (i, host) = (rx.flow_id as usize, rx.f.dst as usize);
                match (self, s, h) {
                    $($(#[$m])* (CcParams::$v(p), ReceiverStates::$v(s), HostRxStates::$v(h)) =>
                        ReceiverPart::on_timer(&mut s[i], &mut h[host], p, rx, kind),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_host_timer(&self, h: &mut HostRxStates, hx: &mut HostCtx, kind: u8) {
                match (self, h) {
                    $($(#[$m])* (CcParams::$v(p), HostRxStates::$v(h)) =>
                        <<$module::$t as Scheme>::Receiver as ReceiverPart<_>>::on_host_timer(
                            &mut h[hx.host as usize], p, hx, kind),)+
                    _ => unreachable!("state of another scheme"),
                }
            }

            #[inline]
            pub(crate) fn on_enqueue(
                &self, s: &mut SwitchStates, sw: &mut Sw, pkt: &mut Packet,
            ) -> Verdict {
                let i = sw.port_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SwitchStates::$v(s)) => SwitchPart::on_enqueue(&mut s[i], p, sw, pkt),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            #[inline]
            pub(crate) fn on_dequeue(&self, s: &mut SwitchStates, sw: &mut Sw, pkt: &mut Packet) {
                let i = sw.port_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SwitchStates::$v(s)) => SwitchPart::on_dequeue(&mut s[i], p, sw, pkt),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_pfc(&self, s: &mut SwitchStates, sw: &mut Sw, pause: bool) {
                let i = sw.port_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SwitchStates::$v(s)) =>
                        if pause { SwitchPart::on_pause(&mut s[i], p, sw) } else { SwitchPart::on_resume(&mut s[i], p, sw) },)+
                    _ => unreachable!("state of another scheme"),
                }
            }
            pub(crate) fn on_port_timer(&self, s: &mut SwitchStates, sw: &mut Sw, kind: u8) {
                let i = sw.port_id as usize;
                match (self, s) {
                    $($(#[$m])* (CcParams::$v(p), SwitchStates::$v(s)) => SwitchPart::on_timer(&mut s[i], p, sw, kind),)+
                    _ => unreachable!("state of another scheme"),
                }
            }
        }
    };
}

// The registry: one line per scheme type (a type may register several names); the line also
// declares the scheme's module `cc/<module>.rs`.
registry! {
    NoCc => none::NoCc,
    Dcqcn => dcqcn::Dcqcn,
    Timely => timely::Timely,
    Hpcc => hpcc::Hpcc,
    Dctcp => dctcp::Dctcp,
    Qcn => qcn::Qcn,
    Acc => acc::Acc,
    DcqcnTcd => dcqcn_tcd::DcqcnTcd,
    TimelyTcd => timely_tcd::TimelyTcd,
    Pcn => pcn::Pcn,
    Rcc => rcc::Rcc,
    #[cfg(test)]
    TestScheme => test_scheme::Probe,
    #[cfg(test)]
    TestSrpt => test_srpt::Srpt,
}

/// Window at line rate of a BDP-window scheme: its `base_window` parameter, or (0) the fabric's
/// bandwidth-delay product at the flow's line rate.
pub(crate) fn base_window_bytes(base_window: crate::scenario::units::Size, tx: &Tx) -> u64 {
    if base_window.0 > 0 {
        base_window.0
    } else {
        tx.bdp_bytes()
    }
}

/// Window of a rate-coupled window scheme (the HPCC simulator's variable window): the base
/// window scaled by rate / line rate, at least one byte.
#[inline]
pub(crate) fn scaled_window(base_window_bytes: u64, rate_bps: u64, line_bps: u64) -> u64 {
    let w = match base_window_bytes.checked_mul(rate_bps) {
        Some(p) => p / line_bps,
        None => (base_window_bytes as u128 * rate_bps as u128 / line_bps as u128) as u64,
    };
    w.max(1)
}

/// A lone flow and an event queue, for calling a scheme's hooks directly in unit tests.
#[cfg(test)]
pub(crate) struct TestFlow {
    pub f: Flow,
    pub q: EventQueue,
    pub out: Vec<CtrlMsg>,
    pub rng: Rng,
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
            rng: Rng::new(1, 1),
        }
    }
    /// The sender context at `now_ps`.
    pub fn tx(&mut self, now_ps: u64) -> Tx<'_> {
        Tx::new(
            now_ps,
            0,
            &mut self.f,
            &mut self.q,
            &mut self.out,
            &mut self.rng,
        )
    }
}

#[cfg(test)]
impl DataOut {
    /// A new data packet of `size_bytes` on the wire, for calling `on_send` in unit tests.
    pub fn test(size_bytes: u32) -> DataOut {
        DataOut {
            seq: 0,
            payload_bytes: size_bytes,
            size_bytes,
            retransmit: false,
            hdr: SchemeHdr::default(),
            path_key: 0,
        }
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
    let (mut ints, mut rng, mut q) = (Vec::new(), Rng::new(1, 1), EventQueue::default());
    let (mut epochs, mut out) = ([0; TIMER_KINDS], Vec::new());
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
