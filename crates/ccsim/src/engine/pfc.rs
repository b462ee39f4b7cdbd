//! PFC at run time: PAUSE and RESUME frames sent and received, and the deadlock detector's
//! checks.

use crate::engine::Simulation;
use crate::net::pfc::{Deadlock, DeadlockDetector};
use crate::net::{Packet, PktKind, Port, NUM_PRIO};
use crate::sim::Event;

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
        port.push_pfc(pkt);
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
                if !is_host && self.deadlock.after_ps > 0 && !self.deadlock.scan_pending {
                    self.deadlock.scan_pending = true;
                    self.schedule_deadlock_scan(now + self.deadlock.after_ps);
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

    /// The periodic scan (see `scan_deadlocks`); then scan again while any switch port is
    /// paused and other events remain.
    pub(crate) fn check_deadlock(&mut self) {
        let view: Vec<&Port> = self.ports.iter().collect();
        let next_ps = scan_deadlocks(&view, &self.switch_index, &mut self.deadlock, self.now_ps);
        // With no other event left, nothing can change: no more scans (the run ends, and a
        // deadlock found is in the stall report).
        self.deadlock.scan_pending = next_ps != u64::MAX && !self.q.is_empty();
        self.windows.next_deadlock_ps = u64::MAX;
        if self.deadlock.scan_pending {
            self.schedule_deadlock_scan(next_ps);
        }
    }

    /// A deadlock scan at `at_ps`: an event of one simulation; in a partition, a time the
    /// coordinator takes in after the window (a scan sees the whole fabric).
    fn schedule_deadlock_scan(&mut self, at_ps: u64) {
        match &mut self.part {
            Some(part) => part.deadlock_at_ps = part.deadlock_at_ps.min(at_ps),
            None => {
                self.q.push(at_ps, Event::DeadlockCheck);
                self.windows.next_deadlock_ps = at_ps;
            }
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

/// Report in `det` each new cycle of switch ports paused for at least the detection time, at
/// `now`; `ports` is every port of the fabric by id, wherever it is kept (one simulation, or
/// the partitions of a parallel run). Returns when to scan next (u64::MAX: no port paused).
pub(crate) fn scan_deadlocks(
    ports: &[&Port],
    switch_index: &[u32],
    det: &mut DeadlockDetector,
    now: u64,
) -> u64 {
    let after = det.after_ps;
    let mut next_ps = u64::MAX;
    for prio in 0..NUM_PRIO as u8 {
        let p = prio as usize;
        // Paused switch ports, and those paused for at least `after` (the candidates).
        let mut candidate = vec![false; ports.len()];
        for (q, port) in ports.iter().enumerate() {
            if port.is_host || port.paused_mask & (1 << prio) == 0 {
                continue;
            }
            let since = port.paused_since_ps[p];
            if now - since >= after {
                candidate[q] = true;
            } else {
                next_ps = next_ps.min(since + after);
            }
            next_ps = next_ps.min(now + after);
        }
        let waits = WaitsOn {
            ports,
            switch_index,
            switch_ports: &det.switch_ports,
        };
        for cycle in waits.cycles(&candidate, prio) {
            let same = |d: &Deadlock| {
                d.prio == prio
                    && d.ports.len() == cycle.len()
                    && cycle.iter().all(|q| d.ports.contains(q))
            };
            if !det.found.iter().any(same) {
                let formed_ps = cycle
                    .iter()
                    .map(|&q| ports[q as usize].paused_since_ps[p])
                    .max()
                    .unwrap_or(now);
                det.found.push(Deadlock {
                    ports: cycle,
                    prio,
                    formed_ps,
                    confirmed_ps: now,
                });
            }
        }
    }
    next_ps
}

/// The "waits on" relation between paused switch ports (see the module header of `net::pfc`).
struct WaitsOn<'a> {
    ports: &'a [&'a Port],
    switch_index: &'a [u32],
    switch_ports: &'a [Vec<u32>],
}

impl WaitsOn<'_> {
    /// The paused switch ports `pid` waits on directly (see the module header).
    fn waits_on(&self, pid: u32, prio: u8) -> impl Iterator<Item = u32> + '_ {
        let ingress = self.ports[self.ports[pid as usize].peer as usize];
        let p = prio as usize;
        let ing = &ingress.prios[p].ing;
        let holds = ing.shared_bytes + ing.hdrm_bytes > 0;
        let si = self.switch_index[ingress.node as usize];
        let next: &[u32] = if holds && si != u32::MAX {
            &self.switch_ports[si as usize]
        } else {
            &[]
        };
        next.iter().copied().filter(move |&q| {
            let port = self.ports[q as usize];
            port.paused_mask & (1 << prio) != 0 && port.prios[p].queue_bytes > 0
        })
    }

    /// Cycles of `candidate` ports under "waits on" for `prio`: one per back edge of a
    /// depth-first search (every strongly connected set of waiting ports yields at least one).
    fn cycles(&self, candidate: &[bool], prio: u8) -> Vec<Vec<u32>> {
        const NEW: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let mut color = vec![NEW; candidate.len()];
        let mut out = Vec::new();
        for root in (0..candidate.len() as u32).filter(|&q| candidate[q as usize]) {
            if color[root as usize] != NEW {
                continue;
            }
            let mut path = vec![root];
            let mut stack: Vec<Vec<u32>> = vec![self.waits_on(root, prio).collect()];
            color[root as usize] = ON_PATH;
            while let Some(next) = stack.last_mut().map(|c| c.pop()) {
                let Some(next) = next else {
                    stack.pop();
                    color[path.pop().unwrap() as usize] = DONE;
                    continue;
                };
                if !candidate[next as usize] {
                    continue;
                }
                match color[next as usize] {
                    ON_PATH => {
                        let at = path.iter().position(|&q| q == next).unwrap();
                        out.push(path[at..].to_vec());
                    }
                    NEW => {
                        color[next as usize] = ON_PATH;
                        path.push(next);
                        stack.push(self.waits_on(next, prio).collect());
                    }
                    _ => {}
                }
            }
        }
        out
    }
}
