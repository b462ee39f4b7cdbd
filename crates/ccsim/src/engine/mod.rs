//! The engine: the simulation's state in dense vectors, the run loop and event dispatch, and
//! the handlers that act on the whole simulation: `switch` (forwarding), `mmu` (buffer
//! admission), `pfc`, `sched` (the rate-limited control queue), `marking` (RED/ECN and the
//! scheme's switch hooks), `nic` (host NIC), `flow` (send/receive), `loss` (recovery),
//! `probes` (samples and results). Data types live in the layers below (`net`, `transport`,
//! `cc`, `metrics`); scheme hooks are called through `cc::CcParams`.

pub mod deps;
mod flow;
mod loss;
mod marking;
mod mmu;
mod nic;
pub mod parallel;
mod pfc;
mod probes;
mod sched;
mod switch;

use crate::cc::{
    CcParams, CtrlMsg, HostRxStates, InboundFlow, ReceiverStates, RxHost, SenderStates,
    SwitchStates, TimerEpochs,
};
use crate::metrics::Metrics;
use crate::net::config::{DropMode, PfcMode, Scheduler};
use crate::net::mmu::BufferState;
use crate::net::{Arena, IntStack, PktKind, Port};
use crate::sim::{Event, EventQueue, RawEvent, Stream, TimerOwner, TAG_ARRIVE, TAG_TX_DONE};
use crate::topo::{Routes, Topology};
use crate::transport::loss::Recovery;
use crate::transport::{Flow, Flows};

/// How many events ahead the run loop prefetches a coming event's packet and port
/// (`Simulation::prefetch`); then, on a fabric too large to stay cached, what they point to
/// (`prefetch_route`, `prefetch_queue`); then at half the first distance what its handler
/// touches next (`prefetch_egress`, `prefetch_departure`): each stage reads what the one before
/// loaded.
const PREFETCH_AHEAD: usize = 8;
const SCALE_AHEAD: usize = 6;

/// Resolved numeric settings the handlers use on the hot path.
#[derive(Clone, Debug)]
pub struct Settings {
    pub mtu_payload_bytes: u32,
    pub header_bytes: u32,
    pub ack_bytes: u32,
    /// The packet size a base RTT serializes once per hop (`host.base_rtt_bytes`).
    pub base_rtt_bytes: u32,
    pub ack_every_packets: u32,
    pub nack_interval_ps: u64,
    pub ack_timer_ps: u64,
    /// The NIC's class for ACKs, NACKs and control packets.
    pub ack_priority: u8,
    /// The class switches queue ACKs and NACKs in (an ACK's `Packet::prio`).
    pub switch_ack_priority: u8,
    /// Serialization and pacing times are cut to whole ns (`fabric.tx_time`).
    pub tx_floor_ns: bool,
    pub data_priority: u8,
    pub scheduler: Scheduler,
    /// A trimming scheme's header turns per data turn at a switch port (0: control strictly
    /// first; see `net::sched`).
    pub hdr_ratio: u32,
    pub pfc_enabled: bool,
    pub pfc_mode: PfcMode,
    pub pfc_xoff_bytes: u64,
    /// Bytes of each ingress queue outside the shared pool (`fabric.pfc.reserve`).
    pub pfc_reserve_bytes: u64,
    pub pfc_resume_offset_bytes: u64,
    pub pfc_frame_bytes: u32,
    pub ecn_pmax: f64,
    pub ecmp_seed: u64,
    /// ECMP hashes the unordered host pair, so a flow's ACKs retrace its data path.
    pub ecmp_symmetric: bool,
    pub record_pfc_events: bool,
    /// Packets carry INT records (the scheme's `int`).
    pub int_enabled: bool,
    /// The scheme has a receiver part (else data arrivals skip its hook).
    pub has_receiver: bool,
    /// Senders set each packet's priority (the scheme's `prio_per_packet`, or
    /// `fabric.priority_by_size`).
    pub prio_per_packet: bool,
    /// NICs send the flow with the fewest bytes left first (`SchemeInfo::sender_srpt`).
    pub sender_srpt: bool,
    /// The scheme's rate-limited control queue, if it has one.
    pub ctrl_queue: Option<crate::cc::CtrlQueue>,
    /// Lossy fabric: what a full queue does (None: lossless).
    pub drop: Option<DropPolicy>,
    /// Lossy switches trim data packets to a header instead of dropping them.
    pub trim: bool,
    /// Host loss recovery on a lossy fabric.
    pub recovery: Recovery,
    /// The scheme recovers lost data itself (`SchemeInfo::own_recovery`).
    pub own_recovery: bool,
    /// ECMP hashes each data packet's path key (`SchemeInfo::path_per_packet`).
    pub path_per_packet: bool,
    /// ... and each control packet's (`SchemeInfo::spray_ctrl`).
    pub spray_ctrl: bool,
    /// Hosts keep their inbound flows (`SchemeInfo::inbound_flows`).
    pub inbound_flows: bool,
    /// Switch hooks see priority-0 packets too (`SchemeInfo::switch_sees_ctrl`).
    pub switch_sees_ctrl: bool,
    /// Bytes on the wire per control code (`SchemeInfo::ctrl_bytes`; others `ack_bytes`).
    pub ctrl_bytes: &'static [(u8, u32)],
}

impl Settings {
    /// The engine's go-back-N or IRN recovers losses (a lossy fabric, a scheme without its own).
    #[inline]
    pub fn engine_recovery(&self) -> bool {
        self.drop.is_some() && !self.own_recovery
    }
    /// Bytes on the wire of a control packet of `code`.
    #[inline]
    pub fn ctrl_size(&self, code: u8) -> u32 {
        match self.ctrl_bytes.iter().find(|(c, _)| *c == code) {
            Some(&(_, b)) => b,
            None => self.ack_bytes,
        }
    }
}

/// What a lossy switch does when a queue is full.
#[derive(Clone, Copy, Debug)]
pub struct DropPolicy {
    pub mode: DropMode,
    /// Drop-tail: limit per egress queue (0 = none).
    pub queue_packets: u32,
    pub queue_bytes: u64,
    /// Dynamic threshold: a queue may hold alpha x the free shared buffer.
    pub alpha: f64,
    /// Drop-tail: limit per egress port, all priorities together (0 = none).
    pub port_packets: u32,
    pub port_bytes: u64,
    /// Limit of a port's priority-0 queue (trimmed headers, control packets) in packets; a
    /// packet beyond it is dropped (0 = none).
    pub ctrl_packets: u32,
}

/// Per-host NIC state.
#[derive(Clone, Debug, Default)]
pub struct HostState {
    pub port: u32,
    /// Flows with data left to send, in round-robin order.
    pub active: Vec<u32>,
    pub rr: usize,
    /// Time of the pending NicWake event (u64::MAX: none).
    pub wake_at_ps: u64,
    /// Epochs of the receiver part's host timers.
    pub timers: TimerEpochs,
    /// Flows into this host still receiving (`Settings::inbound_flows` only).
    pub inbound: Vec<InboundFlow>,
}

/// A run failure that is a bug or an impossible configuration, never silently ignored.
#[derive(Clone, Debug)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the progress watchdog judges at a check (`Watchdog::check`).
pub(crate) struct Progress {
    pub now_ps: u64,
    pub delivered_bytes: u64,
    pub drops: u64,
    /// Some started flow is unfinished.
    pub started_open: bool,
    /// A PFC deadlock was found (it explains the stall).
    pub deadlocked: bool,
    pub flows_open: usize,
}

impl Watchdog {
    /// A stall (no byte delivered since the last check, started flows open, no deadlock to
    /// explain it), or None and the check's counts kept for the next. If switches kept dropping
    /// meanwhile, the senders were sending: a congestion collapse (the go-back-N resends crowd
    /// out the packets the receivers wait for), not a transport bug.
    pub(crate) fn check(
        &mut self,
        p: &Progress,
        open_flows: impl FnOnce() -> String,
    ) -> Option<SimError> {
        if p.delivered_bytes == self.delivered_at_check && p.started_open && !p.deadlocked {
            let dropped = p.drops - self.drops_at_check;
            let open = open_flows();
            let why = if dropped > 0 {
                format!("congestion collapse: switches dropped {dropped} packets meanwhile, and go-back-N resends crowd out the packets each receiver waits for; give the scheme a queue it can act in (fabric.loss deeper than the ECN threshold fabric.ecn.kmin) or use host.recovery = {{ mode = \"irn\" }}")
            } else if self.after_ps < Self::DEFAULT_AFTER_PS {
                format!("host.stall_after is {:.3} us, shorter than its default of 100 ms: a scheme or a paused fabric may wait that long without a bug; raise host.stall_after (0 turns the check off), and if the run still stalls, it is a transport bug: please report it with this scenario", self.after_ps as f64 / 1e6)
            } else if open.contains(NO_CREDIT) {
                "a flow waits for credit its scheme never gives: on a lossy fabric whose losses the engine recovers, a credit-gated scheme must give credit back when the engine goes back to resend (a NACK: on_ack with AckInfo::nack; a timeout: SenderPart::on_timeout), or take over recovery with SchemeInfo::own_recovery".to_string()
            } else {
                "a transport bug: please report it with this scenario".to_string()
            };
            return Some(SimError(format!(
                "stall at {:.3} us: no byte delivered for {:.3} us with {} flow(s) unfinished; {} ({why})",
                p.now_ps as f64 / 1e6,
                self.after_ps as f64 / 1e6,
                p.flows_open,
                open
            )));
        }
        self.delivered_at_check = p.delivered_bytes;
        self.drops_at_check = p.drops;
        None
    }
}

/// How `open_flows` marks a flow that has data to send and no credit.
const NO_CREDIT: &str = ", no credit left";

/// The first few unfinished flows of `flows` and their transport state.
fn open_flows<'a>(flows: impl Iterator<Item = &'a Flow>) -> String {
    let open: Vec<String> = flows
        .enumerate()
        .filter(|(_, f)| !f.finished)
        .take(5)
        .map(|(i, f)| {
            format!(
                "flow {i} ({} -> {}): {} of {} bytes acked, {} sent, window {} B{}",
                f.src,
                f.dst,
                f.snd_una,
                f.size_bytes,
                f.snd_nxt,
                f.ctl.window_bytes,
                if f.ctl.credit_bytes == 0 && f.snd_nxt < f.size_bytes {
                    NO_CREDIT
                } else {
                    ""
                }
            )
        })
        .collect();
    open.join("; ")
}

/// The run's random streams, one per entity that draws, so that a draw depends only on its
/// entity's own earlier draws: the same in one simulation and in any partitioning of it.
#[derive(Clone, Debug, Default)]
pub struct Streams {
    /// Per port: RED, the trimming coin and the scheme's switch part.
    pub ports: Vec<Stream>,
    /// Per flow (by its place, `transport::Flows::slot`): its sender's hooks, and its
    /// receiver's.
    pub senders: Vec<Stream>,
    pub receivers: Vec<Stream>,
    /// Per host: its host timer hooks.
    pub hosts: Vec<Stream>,
}

/// A built, runnable simulation.
#[derive(Clone)]
pub struct Simulation {
    pub now_ps: u64,
    pub q: EventQueue,
    pub pkts: Arena,
    pub ports: Vec<Port>,
    /// Read only once built: the partitions of a parallel run share it.
    pub topo: std::sync::Arc<Topology>,
    /// node id -> switch index (u32::MAX for hosts).
    pub switch_index: Vec<u32>,
    /// node id -> host id (u32::MAX for switches).
    pub host_index: Vec<u32>,
    pub switches: Vec<BufferState>,
    pub hosts: Vec<HostState>,
    /// Read only once built: the partitions of a parallel run share one table.
    pub routes: std::sync::Arc<Routes>,
    pub flows: Flows,
    /// Every flow's (source, destination) host by id, all that a switch reads of a flow: a
    /// partition's switches forward flows it does not hold. Read only once built.
    pub flow_ends: std::sync::Arc<[(u32, u32)]>,
    /// The run's scheme and its parameters; every hook is called through it.
    pub cc: CcParams,
    /// Scheme state: per flow (sender, receiver), per host, per port (empty without a switch
    /// part).
    pub senders: SenderStates,
    pub receivers: ReceiverStates,
    pub host_rx: HostRxStates,
    pub sw_parts: SwitchStates,
    pub port_timers: Vec<TimerEpochs>,
    /// Control packets hooks asked for, sent when the hook returns.
    pub ctrl_out: Vec<CtrlMsg>,
    pub s: Settings,
    /// Random streams, one per entity (`sim::rng`).
    pub streams: Streams,
    /// INT records per packet id (empty unless `s.int_enabled`).
    pub ints: Vec<IntStack>,
    /// Bit p set: port p is cut (`Port::cut`), in a parallel run (empty in a single one). Kept
    /// apart from the ports, so that a prefetch stage can test it without waiting for the
    /// port's own line.
    pub cut_ports: Vec<u64>,
    pub metrics: Metrics,
    /// End of the run (u64::MAX: when all flows are done).
    pub stop_ps: u64,
    /// Flows not yet finished (long-lived flows count until stopped and drained).
    pub flows_open: usize,
    pub events: u64,
    pub link_traversals: u64,
    pub fatal: Option<SimError>,
    /// What building noticed that the user may not expect (shown with the scenario's own).
    pub warnings: Vec<String>,
    /// The events building estimates the run needs where that is extreme (a timer under a
    /// packet time, a huge transfer without a duration), with the warning that says why.
    pub estimated_events: Option<(f64, String)>,
    pub deadlock: crate::net::pfc::DeadlockDetector,
    pub watchdog: Watchdog,
    /// Where the run may end (one simulation's copy of a parallel run's windows).
    pub windows: Windows,
    /// Per flow: its sender ignores the receiver's control packets (AMRT's unresponsive
    /// senders; `workload.responsive`). Empty when every sender responds.
    pub unresponsive: Vec<bool>,
    /// Flows that wait for others to arrive before they start (empty: none).
    pub deps: deps::Deps,
    /// The iterations of collective workloads, reported in the `collectives` table.
    pub collectives: Vec<crate::workload::Collective>,
    /// This simulation is one partition of a parallel run (None: it is the whole run).
    pub part: Option<Box<parallel::Part>>,
}

/// The windows time runs in, the same in one simulation and in a parallel run
/// (`engine::parallel`), so that both end a run at the same event. A window starts at the
/// earliest pending event and lasts `len_ps` (the shortest delay of a link any partitioning
/// may cut, at most the PFC deadlock detection time), cut short at the next whole-fabric check
/// and the stop time. A run whose flows have all finished ends at the end of the window in
/// which the last one did, at the last finish time.
#[derive(Clone, Debug)]
pub struct Windows {
    pub len_ps: u64,
    /// The end of the current window (one simulation's; a partition's is u64::MAX, as the
    /// coordinator keeps the windows).
    pub(crate) end_ps: u64,
    /// The times of the next progress check and deadlock scan (u64::MAX: none).
    pub(crate) next_progress_ps: u64,
    pub(crate) next_deadlock_ps: u64,
}

impl Windows {
    pub(crate) fn new(len_ps: u64) -> Windows {
        Windows {
            len_ps,
            end_ps: 0,
            next_progress_ps: u64::MAX,
            next_deadlock_ps: u64::MAX,
        }
    }

    /// The end of a window that starts at `next_ps`, the earliest pending event, after the
    /// one that ended at `now_ps`.
    pub(crate) fn end_from(&self, next_ps: u64, now_ps: u64, stop_ps: u64) -> u64 {
        next_ps
            .saturating_add(self.len_ps)
            .min(self.next_progress_ps.max(now_ps + 1))
            .min(self.next_deadlock_ps.max(now_ps + 1))
            .min(stop_ps.saturating_add(1))
    }
}

/// The progress watchdog (`host.stall_after`): bytes delivered, and packets switches dropped,
/// at the last check.
#[derive(Clone, Debug, Default)]
pub struct Watchdog {
    pub after_ps: u64,
    delivered_at_check: u64,
    drops_at_check: u64,
}

impl Watchdog {
    /// `host.stall_after`'s default: 100 ms.
    pub const DEFAULT_AFTER_PS: u64 = 100 * crate::sim::PS_PER_MS;
}

impl Simulation {
    /// Process up to `max_events` events. Returns Ok(true) when the run is over.
    pub fn run_events(&mut self, max_events: u64) -> Result<bool, SimError> {
        self.run_loop(max_events, u64::MAX)
    }

    /// Process the events before `end_ps` (a partition's window of a parallel run, which
    /// never reaches beyond the stop time; the run's end is the coordinator's to decide).
    pub(crate) fn run_until(&mut self, end_ps: u64) -> Result<(), SimError> {
        self.run_loop(u64::MAX, end_ps).map(|_| ())
    }

    /// The run loop: up to `max_events` events, and none at or after `end_ps` (u64::MAX: no
    /// bound). One loop for both, so the handlers are inlined into one copy of it.
    fn run_loop(&mut self, max_events: u64, end_ps: u64) -> Result<bool, SimError> {
        // The fabric's state no longer stays cached between hops, measured by its route table:
        // the middle prefetch stage runs (on a small fabric it only adds instructions).
        let at_scale = self.routes.worth_prefetching();
        for _ in 0..max_events {
            let Some((t, ev)) = self.q.pop_raw() else {
                if end_ps != u64::MAX {
                    return Ok(false);
                }
                if self.flows_open == 0 && !self.flows.is_empty() {
                    self.now_ps = self.last_finish_ps();
                }
                return match self.stalled() {
                    Some(e) => Err(e),
                    None => Ok(true),
                };
            };
            if t >= end_ps {
                // The window is over: the event goes back, where the next window finds it
                // (events are ordered by what they are, so it is again the first).
                self.q.push_raw(t, ev);
                return Ok(false);
            }
            // Ends at the stop time, or at the end of the window in which the last flow
            // finished (a partition's end is the coordinator's).
            if t >= self.windows.end_ps && self.window_ends(t, ev) {
                return Ok(true);
            }
            if t > self.stop_ps {
                // The run is over; the popped event lies beyond it and is dropped.
                self.now_ps = self.stop_ps;
                return Ok(true);
            }
            self.now_ps = t;
            self.events += 1;
            if let Some(next) = self.q.ahead(PREFETCH_AHEAD) {
                self.prefetch(next);
            }
            if at_scale {
                match self.q.ahead(SCALE_AHEAD) {
                    Some(e) if e.tag() == TAG_ARRIVE => self.prefetch_route(e.a(), e.b()),
                    Some(e) if e.tag() == TAG_TX_DONE => self.prefetch_queue(e.a()),
                    _ => {}
                }
            }
            match self.q.ahead(PREFETCH_AHEAD / 2) {
                Some(e) if e.tag() == TAG_ARRIVE => self.prefetch_egress(e.a(), e.b()),
                Some(e) if e.tag() == TAG_TX_DONE => self.prefetch_departure(e.a(), at_scale),
                _ => {}
            }
            self.dispatch(ev);
            if self.fatal.is_some() {
                return Err(self.fatal.take().expect("checked"));
            }
        }
        Ok(false)
    }

    /// One simulation's window ends before event `ev` at `t`: the run is over if every flow
    /// has finished (`ev` stays pending), else the next window starts at `t` (a whole-fabric
    /// check is made between windows, as a parallel run's coordinator makes it).
    #[cold]
    #[inline(never)]
    fn window_ends(&mut self, t: u64, ev: RawEvent) -> bool {
        if self.flows_open == 0 && !self.flows.is_empty() {
            self.q.push_raw(t, ev);
            self.now_ps = self.last_finish_ps();
            return true;
        }
        if !matches!(ev.event(), Event::DeadlockCheck | Event::ProgressCheck) {
            self.windows.end_ps = self.windows.end_from(t, t, self.stop_ps);
        }
        false
    }

    /// When the last flow finished.
    pub(crate) fn last_finish_ps(&self) -> u64 {
        self.flows
            .iter()
            .map(|f| f.finish_ps)
            .max()
            .unwrap_or(self.now_ps)
    }

    /// Run to completion.
    pub fn run(&mut self) -> Result<(), SimError> {
        while !self.run_events(1 << 20)? {}
        Ok(())
    }

    /// Start loading what a coming event touches first: at 1000+ hosts the ports and packets
    /// no longer fit in cache, and each miss would otherwise stall the loop in turn.
    #[inline(always)]
    fn prefetch(&self, ev: RawEvent) {
        let port = match ev.tag() {
            TAG_ARRIVE => {
                self.pkts.prefetch(ev.b());
                ev.a()
            }
            TAG_TX_DONE => ev.a(),
            _ => return,
        };
        let p = &self.ports[port as usize];
        crate::sim::prefetch(p);
        // The second line: queue maximum, RED thresholds, PFC settings.
        crate::sim::prefetch(&p.max_queue_bytes);
    }

    /// For a packet coming to a switch (the packet and the port prefetched by now): start
    /// loading the route table entry `prefetch_egress` will read.
    #[inline(always)]
    fn prefetch_route(&self, port: u32, pkt: u32) {
        let si = self.switch_index[self.ports[port as usize].node as usize];
        if si != u32::MAX {
            self.routes.prefetch(si, self.pkts[pkt].dst_host);
        }
    }

    /// The host whose NIC is port `p`, if it is a host's.
    #[inline(always)]
    fn nic_host(&self, p: &Port) -> Option<&HostState> {
        self.hosts.get(self.host_index[p.node as usize] as usize)
    }

    /// For a transmitter about to fall free (its port prefetched by now): start loading the
    /// queue it will send from, or if it is a host's NIC, the host's scan state.
    #[inline(always)]
    fn prefetch_queue(&self, port: u32) {
        let p = &self.ports[port as usize];
        if let Some(prio) = p.first_queued() {
            crate::sim::prefetch(&p.prios[prio]);
        }
        if let Some(h) = self.nic_host(p) {
            crate::sim::prefetch_value(h);
        }
    }

    /// For a packet about to reach a switch (its state prefetched by now): start loading its
    /// ingress accounting and the egress port it will be queued at.
    #[inline(always)]
    fn prefetch_egress(&self, port: u32, pkt: u32) {
        let in_port = &self.ports[port as usize];
        let si = self.switch_index[in_port.node as usize];
        let p = &self.pkts[pkt];
        if si == u32::MAX {
            self.prefetch_host_arrival(in_port, pkt);
            return;
        }
        if matches!(p.kind, PktKind::Pause | PktKind::Resume) {
            return;
        }
        let prio = p.prio as usize % crate::net::NUM_PRIO;
        crate::sim::prefetch(&in_port.prios[prio].ing);
        let out_id = self.ecmp_next_hop(si, p) as usize;
        let out = &self.ports[out_id];
        crate::sim::prefetch(out);
        crate::sim::prefetch(&out.max_queue_bytes);
        // The line of the packet's class: its queue and queued bytes.
        crate::sim::prefetch(&out.prios[prio]);
        // The scheme's state at that port, which its enqueue and dequeue hooks read.
        self.sw_parts.prefetch(out_id);
        // The INT record the egress will append (HPCC), when the packet leaves at once.
        if let Some(int) = self.ints.get(pkt as usize) {
            crate::sim::prefetch(&int.hops[p.sub as usize % crate::net::MAX_INT_HOPS]);
        }
        self.prefetch_crossing_int(out_id, pkt);
    }

    /// For a packet about to leave on port `port` (the packet loaded by now): if the port is
    /// cut, start loading the INT records `parallel::cross` copies out, written hops ago.
    #[inline(always)]
    fn prefetch_crossing_int(&self, port: usize, pkt: u32) {
        let (Some(int), Some(&bits)) = (self.ints.get(pkt as usize), self.cut_ports.get(port / 64))
        else {
            return;
        };
        if bits >> (port % 64) & 1 != 0 {
            for h in int.hops.iter().take(self.pkts[pkt].sub as usize) {
                crate::sim::prefetch(h);
            }
        }
    }

    /// For a packet about to reach a host at its NIC `nic` (the packet loaded by now): start
    /// loading the host's state and the flow state its handler reads; for data, the NIC's
    /// queue its ACK joins; for an ACK, the sender's scheme state and the INT records.
    #[inline(always)]
    fn prefetch_host_arrival(&self, nic: &Port, pkt: u32) {
        let p = &self.pkts[pkt];
        let Some(f) = self.flows.get(p.flow as usize) else {
            return; // a PFC frame
        };
        if let Some(h) = self.hosts.get(p.dst_host as usize) {
            crate::sim::prefetch_value(h);
        }
        // The lines of `Flow` the handler reads: both ends' line, and the receiver's or the
        // sender's own.
        crate::sim::prefetch(&f.size_bytes);
        match p.kind {
            PktKind::Data => {
                crate::sim::prefetch(&f.rcv_nxt);
                let ack = self.s.ack_priority as usize % crate::net::NUM_PRIO;
                crate::sim::prefetch(&nic.prios[ack]);
                if self.s.has_receiver {
                    self.receivers.prefetch(self.flows.slot(p.flow));
                }
            }
            PktKind::Ack | PktKind::Nack => {
                crate::sim::prefetch(&f.ctl);
                self.senders.prefetch(self.flows.slot(p.flow));
                // The INT records the scheme reads (HPCC).
                if let Some(int) = self.ints.get(pkt as usize) {
                    for h in int.hops.iter().step_by(2) {
                        crate::sim::prefetch(h);
                    }
                }
            }
            _ => {}
        }
    }

    /// For a transmitter about to fall free (its port prefetched by now): start loading the
    /// queue it will send from, and if it is a host's NIC, the flow its round-robin scan looks
    /// at first.
    #[inline(always)]
    fn prefetch_departure(&self, port: u32, at_scale: bool) {
        let p = &self.ports[port as usize];
        if let Some(prio) = p.first_queued() {
            let class = &p.prios[prio];
            crate::sim::prefetch(class);
            // At scale (the queue prefetched by `prefetch_queue`): the ingress accounting its
            // head packet's departure releases, and the backlog entry that becomes the head.
            if at_scale {
                class.prefetch_next();
                if let Some(head) = class.head() {
                    if let Some(ing) = self.ports.get(self.pkts[head].in_port as usize) {
                        crate::sim::prefetch(&ing.prios[prio].ing);
                    }
                    self.prefetch_crossing_int(port as usize, head);
                }
            }
        }
        self.sw_parts.prefetch(port as usize);
        if let Some(h) = self.nic_host(p) {
            if let Some(&fid) = h.active.get(h.rr) {
                let f = &self.flows[fid as usize];
                crate::sim::prefetch(&f.ctl);
                crate::sim::prefetch(&f.size_bytes);
            }
        }
    }

    /// Run event `ev`: the two a run is made of straight from their stored form, the rest
    /// decoded.
    #[inline(always)]
    fn dispatch(&mut self, ev: RawEvent) {
        match ev.tag() {
            TAG_TX_DONE => {
                let port = ev.a();
                let p = &mut self.ports[port as usize];
                if p.txdone_at_ps == self.now_ps {
                    p.txdone_at_ps = u64::MAX;
                    self.port_kick(port);
                }
            }
            TAG_ARRIVE => {
                let (port, pkt) = (ev.a(), ev.b());
                let node = self.ports[port as usize].node;
                match self.pkts[pkt].kind {
                    PktKind::Pause | PktKind::Resume => self.pfc_receive(port, pkt),
                    _ if self.switch_index[node as usize] != u32::MAX => {
                        self.switch_receive(port, pkt)
                    }
                    _ => self.host_receive(pkt),
                }
            }
            _ => self.dispatch_other(ev.event()),
        }
    }

    /// The events other than packet arrivals and transmit completions.
    #[inline(never)]
    fn dispatch_other(&mut self, ev: Event) {
        match ev {
            Event::TxDone { .. } | Event::Arrive { .. } => unreachable!("dispatched raw"),
            Event::FlowStart { flow } => self.flow_start(flow),
            Event::FlowStop { flow } => self.flow_stop(flow),
            Event::StopHeard { flow } => self.stop_heard(flow),
            Event::NicWake { host } => {
                let h = &mut self.hosts[host as usize];
                if h.wake_at_ps == self.now_ps {
                    h.wake_at_ps = u64::MAX;
                }
                let port = h.port;
                self.port_kick(port);
            }
            Event::Timer {
                owner,
                kind,
                id,
                epoch,
            } => self.timer(owner, kind, id, epoch),
            Event::Rto { flow, epoch } => self.rto_fired(flow, epoch),
            Event::AckTimer { flow } => self.ack_timer_fired(flow),
            Event::SampleQueues => {
                self.sample_queues();
                self.count_shared_once();
            }
            Event::SampleRates => {
                self.sample_rates();
                self.count_shared_once();
            }
            // Made between windows, by the coordinator in a parallel run, which counts no event.
            Event::DeadlockCheck => {
                self.events -= 1;
                self.check_deadlock();
            }
            Event::ProgressCheck => {
                self.events -= 1;
                self.check_progress();
            }
        }
    }

    /// Start transmitting on `pid` if it is idle and has something to send.
    #[inline(always)]
    pub(crate) fn port_kick(&mut self, pid: u32) {
        let port = &mut self.ports[pid as usize];
        if port.busy_until_ps > self.now_ps {
            if port.txdone_at_ps != port.busy_until_ps {
                port.txdone_at_ps = port.busy_until_ps;
                self.q.push(port.busy_until_ps, Event::TxDone { port: pid });
            }
            return;
        }
        self.port_start(pid);
    }

    /// The idle port `pid` sends its next packet, if it has one.
    #[inline(never)]
    fn port_start(&mut self, pid: u32) {
        let port = &mut self.ports[pid as usize];
        let pkt = match port.pop_pfc() {
            Some(p) => Some(p),
            None if port.is_host => self.nic_dequeue(pid),
            None => self.switch_dequeue(pid),
        };
        if let Some(pkt) = pkt {
            self.transmit(pid, pkt);
        }
    }

    #[inline]
    fn transmit(&mut self, pid: u32, pkt: u32) {
        let now = self.now_ps;
        let size = self.pkts[pkt].size_bytes as u64;
        let port = &mut self.ports[pid as usize];
        let ser = port.tx_time_ps(size, self.s.tx_floor_ns);
        port.busy_until_ps = now + ser;
        port.tx_bytes += size;
        self.link_traversals += 1;
        let (arrive_ps, peer) = (now + ser + port.delay_ps, port.peer);
        let link_seq = port.tx_bytes as u32;
        if port.cut != 0 {
            let to = port.cut as usize - 1;
            let int = self.s.int_enabled.then_some(&self.ints[..]);
            parallel::cross(
                &mut self.part,
                &mut self.pkts,
                int,
                (arrive_ps, peer, link_seq, to),
                pkt,
            );
        } else {
            let ev = Event::Arrive {
                port: peer,
                pkt,
                link_seq,
            };
            self.q.push(arrive_ps, ev);
        }
        let more = port.has_side_queued()
            || port.has_queued()
            || (port.is_host
                && !self.hosts[self.host_index[port.node as usize] as usize]
                    .active
                    .is_empty());
        if more && port.txdone_at_ps != port.busy_until_ps {
            port.txdone_at_ps = port.busy_until_ps;
            self.q.push(port.busy_until_ps, Event::TxDone { port: pid });
        }
        if self.metrics.trace.is_some() {
            self.trace_departure(pid, pkt);
        }
    }

    /// Record packet `pkt` leaving port `pid` in the trace, if it is traced now.
    #[cold]
    #[inline(never)]
    fn trace_departure(&mut self, pid: u32, pkt: u32) {
        let now = self.now_ps;
        let Some(t) = self.metrics.trace.as_deref_mut() else {
            return;
        };
        if !t.wants(pid, now) {
            return;
        }
        let p = &self.pkts[pkt];
        let port = &self.ports[pid as usize];
        let (mut src_host, mut dst_host) = (0, p.dst_host);
        if let Some(f) = self.flows.get(p.flow as usize) {
            src_host = if p.dst_host == f.src { f.dst } else { f.src };
            if p.kind == PktKind::Data {
                (src_host, dst_host) = (f.src, f.dst);
            }
        }
        let hop = crate::metrics::trace::Hop {
            node: port.node,
            peer: self.ports[port.peer as usize].node,
            src_host,
            dst_host,
            mtu_payload: self.s.mtu_payload_bytes,
        };
        t.record(pid, now, p, &hop);
    }

    /// A timer of a scheme part fired: drop it if stale, else run the owner's hook.
    fn timer(&mut self, owner: TimerOwner, kind: u8, id: u32, epoch: u32) {
        let k = kind as usize;
        match owner {
            TimerOwner::Sender => {
                let f = &self.flows[id as usize];
                if f.finished || f.tx_timers[k] != epoch {
                    return;
                }
                self.sender_timer(id, kind);
            }
            TimerOwner::Receiver => {
                let f = &self.flows[id as usize];
                if f.rx_timers[k] != epoch {
                    return;
                }
                self.receiver_hook(id, |cc, s, h, rx| cc.on_receiver_timer(s, h, rx, kind));
                self.flush_flow_ctrl(true);
            }
            TimerOwner::Host => {
                let h = &mut self.hosts[id as usize];
                if h.timers[k] != epoch {
                    return;
                }
                let host = RxHost {
                    timers: &mut h.timers,
                    inbound: &h.inbound,
                };
                let mut hx = crate::cc::HostCtx::new(
                    self.now_ps,
                    id,
                    &mut self.q,
                    host,
                    &mut self.streams.hosts[id as usize],
                    &mut self.ctrl_out,
                );
                self.cc.on_host_timer(&mut self.host_rx, &mut hx, kind);
                self.flush_flow_ctrl(true);
            }
            TimerOwner::Port => {
                if self.port_timers[id as usize][k] != epoch {
                    return;
                }
                self.port_timer(id, kind);
            }
        }
    }

    /// Every `host.stall_after`: if started flows are open but no byte was delivered since the
    /// last check, and no PFC deadlock explains it, end the run with a stall naming them.
    fn check_progress(&mut self) {
        if self.flows_open == 0 {
            return;
        }
        let delivered = self.metrics.delivered_bytes;
        let drops: u64 = self.ports.iter().map(|p| p.drops).sum();
        let started_open = self
            .flows
            .iter()
            .any(|f| !f.finished && f.start_ps < self.now_ps);
        let progress = Progress {
            now_ps: self.now_ps,
            delivered_bytes: delivered,
            drops,
            started_open,
            deadlocked: !self.deadlock.found.is_empty(),
            flows_open: self.flows_open,
        };
        if let Some(e) = self
            .watchdog
            .check(&progress, || open_flows(self.flows.iter()))
        {
            self.fatal = Some(e);
            return;
        }
        self.schedule_progress_check(self.now_ps + self.watchdog.after_ps);
    }

    /// The next progress check at `at_ps` (one simulation's; a parallel run's coordinator
    /// keeps its own).
    pub(crate) fn schedule_progress_check(&mut self, at_ps: u64) {
        self.q.push(at_ps, Event::ProgressCheck);
        self.windows.next_progress_ps = at_ps;
    }

    /// The first few unfinished flows and their transport state.
    fn open_flows(&self) -> String {
        open_flows(self.flows.iter())
    }

    /// Nothing is left to happen but flows are open: a stall, reported with the flows' state.
    fn stalled(&self) -> Option<SimError> {
        if self.flows_open == 0 || self.stop_ps != u64::MAX {
            return None;
        }
        Some(self.stall_error(
            self.now_ps,
            self.flows_open,
            &self.deadlock,
            self.open_flows(),
        ))
    }

    /// "Nothing left to happen" at `now_ps` with `flows_open` flows open (described in
    /// `open_flows`), and the deadlock that explains it, if `deadlock` found one.
    fn stall_error(
        &self,
        now_ps: u64,
        flows_open: usize,
        deadlock: &crate::net::pfc::DeadlockDetector,
        open_flows: String,
    ) -> SimError {
        let deadlock = match deadlock.found.first() {
            Some(d) => format!(
                "; PFC deadlock formed at {:.3} us: {}",
                d.formed_ps as f64 / 1e6,
                d.ports
                    .iter()
                    .map(|&p| self.link_name(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => String::new(),
        };
        SimError(format!(
            "stall at {:.3} us: nothing left to happen but {flows_open} flow(s) unfinished; {open_flows}{deadlock}",
            now_ps as f64 / 1e6,
        ))
    }
}
