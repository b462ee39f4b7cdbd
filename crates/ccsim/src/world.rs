//! The simulation: all state in dense vectors, the run loop, and event dispatch. Handlers live
//! with their layer: `net::switch` (forwarding, buffer, PFC, ECN), `net::nic` (host NIC
//! scheduling), `transport::flow` (send/receive), `metrics` (probes).

use crate::cc::qcn::QcnCp;
use crate::cc::{CcParams, CcState};
use crate::metrics::Metrics;
use crate::net::{Arena, IntStack, PktKind, Port};
use crate::scenario::config::{PfcMode, Scheduler};
use crate::sim::{Event, EventQueue, Rng};
use crate::topo::{Routes, Topology};
use crate::transport::Flow;

/// Resolved numeric settings the handlers use on the hot path.
#[derive(Clone, Debug)]
pub struct Settings {
    pub mtu_payload_bytes: u32,
    pub header_bytes: u32,
    pub ack_bytes: u32,
    pub ack_every_packets: u32,
    pub nack_interval_ps: u64,
    pub ack_priority: u8,
    pub data_priority: u8,
    pub scheduler: Scheduler,
    pub pfc_enabled: bool,
    pub pfc_mode: PfcMode,
    pub pfc_xoff_bytes: u64,
    pub pfc_alpha: f64,
    pub pfc_resume_offset_bytes: u64,
    pub pfc_frame_bytes: u32,
    pub ecn_pmax: f64,
    pub ecmp_seed: u64,
    pub record_pfc_events: bool,
    /// Switches append INT records to data packets (HPCC).
    pub int_enabled: bool,
}

/// Shared-buffer state of one switch.
#[derive(Clone, Debug)]
pub struct SwitchState {
    pub node: u32,
    /// Buffer minus all headroom reservations: what ingress queues share.
    pub shared_pool_bytes: u64,
    pub shared_used_bytes: u64,
    /// Bytes of control packets (priority 0), outside PFC accounting.
    pub ctrl_bytes: u64,
    /// Bytes currently held in PFC headroom (all ports).
    pub hdrm_used_bytes: u64,
    pub max_used_bytes: u64,
}

/// Per-host NIC state.
#[derive(Clone, Debug, Default)]
pub struct HostState {
    pub node: u32,
    pub port: u32,
    /// Flows with data left to send, in round-robin order.
    pub active: Vec<u32>,
    pub rr: usize,
    /// Time of the pending NicWake event (u64::MAX: none).
    pub wake_at_ps: u64,
}

/// A run failure that is a bug or an impossible configuration, never silently ignored.
#[derive(Clone, Debug)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A built, runnable simulation.
pub struct Simulation {
    pub now_ps: u64,
    pub q: EventQueue,
    pub pkts: Arena,
    pub ports: Vec<Port>,
    pub topo: Topology,
    /// node id -> switch index (u32::MAX for hosts).
    pub switch_index: Vec<u32>,
    /// node id -> host id (u32::MAX for switches).
    pub host_index: Vec<u32>,
    pub switches: Vec<SwitchState>,
    pub hosts: Vec<HostState>,
    pub routes: Routes,
    pub flows: Vec<Flow>,
    pub cc: Vec<CcState>,
    pub cc_params: CcParams,
    pub s: Settings,
    pub marking_rng: Rng,
    /// INT records per packet id (empty unless `s.int_enabled`).
    pub ints: Vec<IntStack>,
    /// QCN congestion point per port (empty unless the scheme is QCN).
    pub qcn_cp: Vec<QcnCp>,
    pub metrics: Metrics,
    /// End of the run (u64::MAX: when all flows are done).
    pub stop_ps: u64,
    /// Flows not yet finished (long-lived flows count until stopped and drained).
    pub flows_open: usize,
    pub events: u64,
    pub link_traversals: u64,
    pub fatal: Option<SimError>,
}

impl Simulation {
    /// Process up to `max_events` events. Returns Ok(true) when the run is over.
    pub fn run_events(&mut self, max_events: u64) -> Result<bool, SimError> {
        for _ in 0..max_events {
            // Ends at the stop time, or earlier once every flow has finished.
            if self.flows_open == 0 && !self.flows.is_empty() {
                return Ok(true);
            }
            let Some((t, ev)) = self.q.pop() else {
                return Ok(true);
            };
            if t > self.stop_ps {
                // The run is over; the popped event lies beyond it and is dropped.
                self.now_ps = self.stop_ps;
                return Ok(true);
            }
            self.now_ps = t;
            self.events += 1;
            self.dispatch(ev);
            if let Some(e) = self.fatal.take() {
                return Err(e);
            }
        }
        Ok(false)
    }

    /// Run to completion.
    pub fn run(&mut self) -> Result<(), SimError> {
        while !self.run_events(1 << 20)? {}
        Ok(())
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone { port } => {
                let p = &mut self.ports[port as usize];
                if p.txdone_at_ps == self.now_ps {
                    p.txdone_at_ps = u64::MAX;
                    self.port_kick(port);
                }
            }
            Event::Arrive { port, pkt } => {
                let node = self.ports[port as usize].node;
                match self.pkts[pkt].kind {
                    PktKind::Pause | PktKind::Resume => self.pfc_receive(port, pkt),
                    _ if self.switch_index[node as usize] != u32::MAX => {
                        self.switch_receive(port, pkt)
                    }
                    _ => self.host_receive(pkt),
                }
            }
            Event::FlowStart { flow } => self.flow_start(flow),
            Event::FlowStop { flow } => self.flow_stop(flow),
            Event::NicWake { host } => {
                let h = &mut self.hosts[host as usize];
                if h.wake_at_ps == self.now_ps {
                    h.wake_at_ps = u64::MAX;
                }
                let port = h.port;
                self.port_kick(port);
            }
            Event::CcTimer { flow, kind, epoch } => self.cc_timer(flow, kind, epoch),
            Event::SampleQueues => self.sample_queues(),
            Event::SampleRates => self.sample_rates(),
        }
    }

    /// Start transmitting on `pid` if it is idle and has something to send.
    pub(crate) fn port_kick(&mut self, pid: u32) {
        let now = self.now_ps;
        let port = &mut self.ports[pid as usize];
        if port.busy_until_ps > now {
            if port.txdone_at_ps != port.busy_until_ps {
                port.txdone_at_ps = port.busy_until_ps;
                self.q.push(port.busy_until_ps, Event::TxDone { port: pid });
            }
            return;
        }
        let pkt = match port.pfc_out.pop_front() {
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
        let ser = port.tx_time_ps(size);
        port.busy_until_ps = now + ser;
        port.tx_bytes += size;
        port.tx_pkts += 1;
        self.link_traversals += 1;
        self.q.push(
            now + ser + port.delay_ps,
            Event::Arrive {
                port: port.peer,
                pkt,
            },
        );
        let more = !port.pfc_out.is_empty()
            || port.queued_pkts > 0
            || (port.is_host
                && !self.hosts[self.host_index[port.node as usize] as usize]
                    .active
                    .is_empty());
        if more && port.txdone_at_ps != port.busy_until_ps {
            port.txdone_at_ps = port.busy_until_ps;
            self.q.push(port.busy_until_ps, Event::TxDone { port: pid });
        }
    }

    /// A PFC frame arrived at `pid`: pause or resume that port's priority.
    fn pfc_receive(&mut self, pid: u32, pkt: u32) {
        let p = self.pkts[pkt];
        self.pkts.free(pkt);
        let now = self.now_ps;
        let port = &mut self.ports[pid as usize];
        let bit = 1u8 << p.pfc_prio;
        if p.kind == PktKind::Pause {
            port.pause_rx += 1;
            if port.paused_mask & bit == 0 {
                port.paused_mask |= bit;
                port.paused_since_ps[p.pfc_prio as usize] = now;
            }
        } else {
            port.resume_rx += 1;
            if port.paused_mask & bit != 0 {
                port.paused_mask &= !bit;
                port.paused_time_ps += now - port.paused_since_ps[p.pfc_prio as usize];
                self.port_kick(pid);
            }
        }
    }

    fn cc_timer(&mut self, flow: u32, kind: u8, epoch: u32) {
        let f = &mut self.flows[flow as usize];
        if f.finished {
            return;
        }
        let mut ctx = crate::cc::CcCtx {
            now_ps: self.now_ps,
            flow_id: flow,
            q: &mut self.q,
        };
        self.cc[flow as usize].on_timer(&self.cc_params, f, &mut ctx, kind, epoch);
    }

    /// The INT records of packet `pkt`, growing the side table to the arena's size.
    #[inline]
    pub(crate) fn int_slot(&mut self, pkt: u32) -> &mut IntStack {
        let i = pkt as usize;
        if i >= self.ints.len() {
            self.ints
                .resize(self.pkts.capacity_used().max(i + 1), IntStack::default());
        }
        &mut self.ints[i]
    }

    /// Close pause intervals still open at the end so pause time is complete.
    pub(crate) fn close_pause_intervals(&mut self) {
        let now = self.now_ps;
        for port in &mut self.ports {
            for p in 0..crate::net::NUM_PRIO {
                if port.paused_mask & (1 << p) != 0 {
                    port.paused_time_ps += now - port.paused_since_ps[p];
                    port.paused_since_ps[p] = now;
                }
            }
        }
    }
}
