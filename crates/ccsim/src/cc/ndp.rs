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
//! * **Sender:** the first window (`initial_window`, default one BDP of the flow's path) at
//!   line rate, then one packet per pull: a retransmission first, else new data; a pull that
//!   finds nothing waiting releases nothing.
//!   Each packet takes its own path (a path key per packet, hashed by ECMP), and so does each
//!   ACK, NACK and pull (`SchemeInfo::spray_ctrl`, as htsim sprays them). A NACK (a trimmed
//!   header reached the receiver) queues that packet for retransmission.
//! * **Receiver** (per host): every data packet or trimmed header that arrives earns its flow a
//!   pull; a pacer sends one pull per data-packet time at the receiver's link rate, round-robin
//!   over the flows with pulls due.
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
const BACKSTOP_TIMER: u8 = 0;
const PACER_TIMER: u8 = 0;

impl Scheme for Ndp {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "ndp",
        description: "NDP: first window of one BDP at line rate, sprayed per packet; full switch queues trim payloads and forward headers ahead of data (10 turns to 1); each header or data packet earns a pull, paced per receiver at one per packet time; one packet per pull, retransmissions first. Lossy fabric.",
        paper: "Handley et al., Re-architecting Datacenter Networks and Stacks for Low Latency and High Performance (NDP), SIGCOMM 2017; htsim ndp.cpp",
        base_rtt: BaseRtt::Path,
        trim: true,
        path_per_packet: true,
        spray_ctrl: true,
        own_recovery: true,
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
    /// Pulls received, and packets queued again after a NACK.
    pub pulls: u64,
    pub nacks: u64,
}

impl SenderPart<NdpParams> for NdpSender {
    fn new(_: &NdpParams) -> Self {
        NdpSender::default()
    }
    fn on_start(&mut self, p: &NdpParams, tx: &mut Tx) {
        let window = if p.initial_window.0 > 0 {
            p.initial_window.0
        } else {
            tx.bdp_bytes().max(tx.mtu_payload_bytes())
        };
        tx.ctl().credit_bytes = window.min(tx.size_bytes());
        self.backstop.start(tx, p.sender_timeout.0, BACKSTOP_TIMER);
    }
    fn on_send(&mut self, _: &NdpParams, _: &mut Tx, d: &mut DataOut) {
        // A new path for every packet (key 0 is the flow's own path).
        self.sent = self.sent.wrapping_add(1);
        d.path_key = self.sent;
    }
    fn on_ack(&mut self, _: &NdpParams, tx: &mut Tx, ack: &AckInfo) {
        self.backstop.heard(tx.now_ps);
        if let (true, Some(seq)) = (ack.trimmed, ack.sack_seq) {
            self.nacks += 1;
            tx.resend(seq);
        }
    }
    fn on_ctrl(&mut self, _: &NdpParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code == PULL {
            self.pulls += 1;
            self.backstop.heard(tx.now_ps);
            // A pull releases one packet that waits (a retransmission first, else new data);
            // with none waiting it releases nothing, as in htsim: kept as credit, it would let
            // later retransmissions go unpulled, at line rate into the queue that trimmed them.
            if tx.resend_pending() || tx.unsent_bytes() > 0 {
                let mtu = tx.mtu_payload_bytes();
                let ctl = tx.ctl();
                ctl.credit_bytes = ctl.credit_bytes.saturating_add(mtu);
            }
        }
    }
    fn on_timer(&mut self, _: &NdpParams, tx: &mut Tx, kind: u8) {
        self.backstop.on_timer(tx, kind);
    }
}

/// Per-flow receiver state: none beyond the host's.
#[derive(Clone, Debug, Default)]
pub struct NdpReceiver;

/// A receiving host: pulls due per flow and the pull pacer.
#[derive(Clone, Debug, Default)]
pub struct NdpHost {
    due: BTreeMap<u32, u64>,
    tick_ps: u64,
    running: bool,
    /// The last flow pulled (round-robin cursor).
    last: u32,
    /// Pulls sent.
    pub pulls: u64,
}

impl ReceiverPart<NdpParams> for NdpReceiver {
    type Host = NdpHost;
    fn new(_: &NdpParams) -> Self {
        NdpReceiver
    }
    fn on_data(&mut self, host: &mut NdpHost, _: &NdpParams, rx: &mut Rx, _: &DataInfo) {
        // Data and trimmed headers alike earn a pull, until the flow has everything.
        if rx.rcv_nxt() >= rx.size_bytes() {
            host.due.remove(&rx.flow_id());
            return;
        }
        *host.due.entry(rx.flow_id()).or_default() += 1;
        if host.tick_ps == 0 {
            host.tick_ps = crate::sim::tx_time_ps(rx.mtu_wire_bytes(), rx.last_hop_bps().max(1))
                .max(1);
        }
        if !host.running {
            host.running = true;
            rx.set_host_timer(PACER_TIMER, rx.now_ps);
        }
    }
    fn on_host_timer(host: &mut NdpHost, _: &NdpParams, hx: &mut HostCtx, _: u8) {
        // Round-robin: the first flow with a pull due after the last one pulled, wrapping.
        let last = host.last;
        let next = host
            .due
            .range(last + 1..)
            .chain(host.due.range(..=last))
            .find(|(_, &n)| n > 0)
            .map(|(&id, _)| id);
        let Some(id) = next else {
            host.running = false;
            return;
        };
        let n = host.due.get_mut(&id).expect("found");
        *n -= 1;
        if *n == 0 {
            host.due.remove(&id);
        }
        host.last = id;
        host.pulls += 1;
        hx.send_ctrl_to(id, PULL, SchemeHdr::default());
        hx.set_timer(PACER_TIMER, hx.now_ps + host.tick_ps);
    }
}
