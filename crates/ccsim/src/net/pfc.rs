//! Priority flow control frames: a switch ingress queue past its threshold sends PAUSE for its
//! priority to the upstream port (`net::mmu` decides when), RESUME once it drained; a port that
//! receives PAUSE stops sending that priority until RESUME. PFC frames go ahead of everything
//! and are never paused. The scheme's switch part hears every PAUSE and RESUME a switch port
//! receives (TCD's ON/OFF history, PCN's count of packets waiting at RESUME).
//!
//! Deadlock detection: when a switch port is newly paused, the detector looks for a cycle of
//! paused switch ports through it, each waiting on the next: port A -> B is followed by port
//! B -> C if B holds bytes that came in from A (its ingress counter from A is non-zero) and
//! B -> C is itself paused with bytes queued for that priority. (Which egress queue those
//! bytes sit in is not tracked: the edge is an over-approximation, the persistence check
//! below removes transient cycles.) A cycle whose ports all stay paused for
//! `fabric.pfc.deadlock_after` is a deadlock: reported with its ports and the time it formed.

use crate::net::{Packet, PktKind, NUM_PRIO};
use crate::sim::Event;
use crate::world::Simulation;

/// A cycle of paused switch ports that stayed paused for the detection time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// The cycle's egress ports, each waiting on the next (the last on the first).
    pub ports: Vec<u32>,
    pub prio: u8,
    pub formed_ps: u64,
    pub confirmed_ps: u64,
}

/// The deadlock detector's state.
#[derive(Clone, Debug, Default)]
pub struct DeadlockDetector {
    /// How long a cycle must stay paused (0: detection off).
    pub after_ps: u64,
    /// Egress ports of each switch, by switch index.
    pub switch_ports: Vec<Vec<u32>>,
    /// Cycles found and waiting for their persistence check (indexed by the check event).
    pub(crate) pending: Vec<Deadlock>,
    pub found: Vec<Deadlock>,
}

impl Simulation {
    /// Queue a PAUSE or RESUME for `prio` out of `port_id` (ahead of all data).
    pub(crate) fn send_pfc(&mut self, port_id: u32, prio: u8, pause: bool) {
        let kind = if pause {
            PktKind::Pause
        } else {
            PktKind::Resume
        };
        let mut frame = Packet::new(kind, u32::MAX, u32::MAX, self.s.pfc_frame_bytes, 0);
        frame.sub = prio;
        let pkt = self.pkts.alloc(frame);
        let port = &mut self.ports[port_id as usize];
        if pause {
            port.pause_sent += 1;
        } else {
            port.resume_sent += 1;
        }
        port.pfc_out.push_back(pkt);
        if self.s.record_pfc_events {
            self.metrics.pfc_events.push(crate::metrics::PfcEvent {
                time_ps: self.now_ps,
                port: port_id,
                prio,
                pause,
            });
        }
        self.port_kick(port_id);
    }

    /// A PFC frame arrived at `pid`: pause or resume that port's priority.
    pub(crate) fn pfc_receive(&mut self, pid: u32, pkt: u32) {
        let p = self.pkts[pkt];
        self.pkts.free(pkt);
        let now = self.now_ps;
        let prio = p.sub;
        let port = &mut self.ports[pid as usize];
        let bit = 1u8 << prio;
        let pause = p.kind == PktKind::Pause;
        let is_host = port.is_host;
        if pause {
            port.pause_rx += 1;
            if port.paused_mask & bit == 0 {
                port.paused_mask |= bit;
                port.paused_since_ps[prio as usize] = now;
                if !is_host && self.deadlock.after_ps > 0 {
                    self.look_for_deadlock(pid, prio);
                }
            }
        } else {
            port.resume_rx += 1;
        }
        if !self.sw_parts.is_empty() && !is_host {
            self.switch_pfc_hook(pid, prio, pause);
        }
        let port = &mut self.ports[pid as usize];
        if !pause && port.paused_mask & bit != 0 {
            port.paused_mask &= !bit;
            port.paused_time_ps += now - port.paused_since_ps[prio as usize];
            self.port_kick(pid);
        }
    }

    /// The paused switch ports `pid` waits on directly (see the module header).
    fn waits_on(&self, pid: u32, prio: u8) -> impl Iterator<Item = u32> + '_ {
        let ingress = &self.ports[self.ports[pid as usize].peer as usize];
        let p = prio as usize;
        let holds = ingress.ing_shared_bytes[p] + ingress.ing_hdrm_bytes[p] > 0;
        let si = self.switch_index[ingress.node as usize];
        let next: &[u32] = if holds && si != u32::MAX {
            &self.deadlock.switch_ports[si as usize]
        } else {
            &[]
        };
        next.iter().copied().filter(move |&q| {
            let port = &self.ports[q as usize];
            port.paused_mask & (1 << prio) != 0 && port.queue_bytes[p] > 0
        })
    }

    /// Switch port `start` was just paused for `prio`: look for a cycle of waiting ports
    /// through it, and if there is a new one, check at `after_ps` whether it persisted.
    fn look_for_deadlock(&mut self, start: u32, prio: u8) {
        // Depth-first search over paused ports, keeping the current path.
        let mut path = vec![start];
        let mut stack: Vec<Vec<u32>> = vec![self.waits_on(start, prio).collect()];
        let mut seen = vec![start];
        let cycle = loop {
            let Some(next) = stack.last_mut().and_then(|c| c.pop()) else {
                stack.pop();
                path.pop();
                if stack.is_empty() {
                    return;
                }
                continue;
            };
            if next == start {
                break path;
            }
            if !seen.contains(&next) {
                seen.push(next);
                path.push(next);
                stack.push(self.waits_on(next, prio).collect());
            }
        };
        let same = |d: &Deadlock| {
            d.prio == prio
                && d.ports.len() == cycle.len()
                && cycle.iter().all(|p| d.ports.contains(p))
        };
        let d = &self.deadlock;
        if d.pending.iter().any(same) || d.found.iter().any(same) {
            return;
        }
        let id = self.deadlock.pending.len() as u32;
        self.deadlock.pending.push(Deadlock {
            ports: cycle,
            prio,
            formed_ps: self.now_ps,
            confirmed_ps: 0,
        });
        self.q.push(
            self.now_ps + self.deadlock.after_ps,
            Event::DeadlockCheck { id },
        );
    }

    /// The persistence check of pending cycle `id`: a deadlock if every port has stayed paused
    /// since the cycle formed.
    pub(crate) fn check_deadlock(&mut self, id: u32) {
        let c = &self.deadlock.pending[id as usize];
        let p = c.prio as usize;
        let held = c.ports.iter().all(|&q| {
            let port = &self.ports[q as usize];
            port.paused_mask & (1 << p) != 0 && port.paused_since_ps[p] <= c.formed_ps
        });
        let mut c = std::mem::replace(
            &mut self.deadlock.pending[id as usize],
            Deadlock {
                ports: Vec::new(),
                prio: u8::MAX,
                formed_ps: 0,
                confirmed_ps: 0,
            },
        );
        if held {
            c.confirmed_ps = self.now_ps;
            self.deadlock.found.push(c);
        }
    }

    /// Close pause intervals still open at the end so pause time is complete.
    pub(crate) fn close_pause_intervals(&mut self) {
        let now = self.now_ps;
        for port in &mut self.ports {
            for p in 0..NUM_PRIO {
                if port.paused_mask & (1 << p) != 0 {
                    port.paused_time_ps += now - port.paused_since_ps[p];
                    port.paused_since_ps[p] = now;
                }
            }
        }
    }
}
