//! The scheme interface: what a scheme registers (`SchemeInfo`), its parameters and three
//! parts (`SenderPart`, `ReceiverPart`, `SwitchPart`), and what its hooks are told (ACKs,
//! control and data packets) and may ask for (a switch verdict, control packets).

use super::ctx::{HostCtx, Rx, Sw, Tx};
use crate::net::{IntHop, Mark, Packet, Port, SchemeHdr};
use crate::sim::input::ScenarioError;
use serde::{de::DeserializeOwned, Serialize};
use std::fmt::Debug;

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
    /// The scheme ranks packets by priority: switches must serve priorities strictly
    /// (`fabric.scheduler = "strict"`, else the scenario is refused).
    pub strict_priority: bool,
    /// A host's NIC sends from the flow with the fewest bytes left to send first (Homa's
    /// SRBF), instead of round-robin.
    pub sender_srpt: bool,
    /// ECMP hashes the host pair, whatever `fabric.ecmp_symmetric` says, so a flow's data
    /// retraces the path its control packets came by (ExpressPass's credits).
    pub symmetric_paths: bool,
    /// Control packets of one code get their own rate-limited, drop-tail queue at every port.
    pub ctrl_queue: Option<CtrlQueue>,
    /// Bytes on the wire of a control packet, per code (others: `host.ack_bytes`).
    pub ctrl_bytes: &'static [(u8, u32)],
    /// Switches hash each data packet's path key (`DataOut::path_key`) with its flow, so a
    /// sender may spray packets over equal-cost paths (NDP, Homa); else one path per flow.
    pub path_per_packet: bool,
    /// With `path_per_packet`, control packets (ACKs, NACKs, the scheme's own) are sprayed
    /// too, each on a path hashed from its send time and sequence (htsim sprays NDP's ACKs,
    /// NACKs and pulls); else they keep the flow's path.
    pub spray_ctrl: bool,
    /// The scheme recovers lost data itself (`Tx::resend`): the engine's go-back-N, IRN and
    /// timeouts are off, and receivers keep packets beyond a gap (ACKs name them, `AckInfo`).
    pub own_recovery: bool,
    /// The engine keeps each receiving host's inbound flows (`Rx::inbound`, `HostCtx::inbound`).
    pub inbound_flows: bool,
    /// The scheme sends a first window before its receiver answers, through
    /// `first_window_bytes`, so a flow may set its own (`[[flows]] first_window`).
    pub first_window: bool,
    /// Switch hooks also see packets of priority 0 (ACKs at priority 0, control packets, trimmed
    /// headers); without it they see data and ACK packets of the other classes only.
    pub switch_sees_ctrl: bool,
    pub fabric: FabricMode,
}

/// A rate-limited, drop-tail egress queue, at every port, for the control packets of one code
/// (ExpressPass credits: 84/(84+1538) of the link, a few credits deep). It is served after
/// PFC frames and ahead of everything else, but never faster than `share_num / share_den` of
/// the link (`share_den = 0`: the control packet's size over itself plus a full data packet's,
/// so that the data the credits release fills the rest of the link); a packet finding
/// `limit_packets` queued is dropped (counted as `ctrl_drops`). Such a scheme sends its
/// control packets at priority 0 (`ack_priority: Some(0)`).
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
        strict_priority: false,
        sender_srpt: false,
        symmetric_paths: false,
        ctrl_queue: None,
        ctrl_bytes: &[],
        path_per_packet: false,
        spray_ctrl: false,
        own_recovery: false,
        inbound_flows: false,
        first_window: false,
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
    /// The flow starts; the engine has set its rate to line rate (or the flow's `start_rate`)
    /// and opened its window.
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
    /// The engine's retransmission timeout fired (a lossy fabric without `own_recovery`): what
    /// was unacknowledged will go again (go-back-N rewound `snd_nxt`; IRN queued its holes).
    /// A scheme that gates sending on credit gives the credit back here (and on a NACK, in
    /// `on_ack` with `AckInfo::nack`), or its flow stalls.
    fn on_timeout(&mut self, _p: &P, _tx: &mut Tx) {}
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
    /// The scheme's own event counts over the run, summed over every receiving host and flow
    /// (`summary.json`'s `scheme_counters`: downgrades, regrants, resends ...).
    fn counters(_hosts: &[Self::Host], _flows: &[Self]) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
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

impl CtrlMsg {
    /// A control packet to `flow`'s sender (a grant, a token, a pull), stamped at `now_ps`.
    pub fn to_sender(flow: u32, code: u8, hdr: SchemeHdr, now_ps: u64) -> CtrlMsg {
        CtrlMsg {
            flow,
            to_sender: true,
            code,
            hdr,
            mark: Mark::None,
            ts_ps: now_ps,
        }
    }
}

/// What a receiver-driven scheme sends before its receiver answers: the flow's own
/// (`[[flows]] first_window`), else the scheme's parameter, else (0) one BDP of the flow's path
/// and at least one packet; never more than the flow.
pub(crate) fn first_window_bytes(param: crate::sim::quantity::Size, tx: &Tx) -> u64 {
    let window = if let Some(own) = tx.first_window_bytes() {
        own
    } else if param.0 > 0 {
        param.0
    } else {
        tx.bdp_bytes().max(tx.mtu_payload_bytes())
    };
    window.min(tx.size_bytes())
}

/// Window at line rate of a BDP-window scheme: its `base_window` parameter, or (0) the fabric's
/// bandwidth-delay product at the flow's line rate.
pub(crate) fn base_window_bytes(base_window: crate::sim::quantity::Size, tx: &Tx) -> u64 {
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
