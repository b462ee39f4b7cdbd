//! Priority flow control frames: a switch ingress queue past its threshold sends PAUSE for its
//! priority to the upstream port (`net::mmu` decides when), RESUME once it drained; a port that
//! receives PAUSE stops sending that priority until RESUME. PFC frames go ahead of everything
//! and are never paused. The scheme's switch part hears every PAUSE and RESUME a switch port
//! receives (TCD's ON/OFF history, PCN's count of packets waiting at RESUME).

use crate::net::{Packet, PktKind, NUM_PRIO};
use crate::world::Simulation;

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
        if pause {
            port.pause_rx += 1;
            if port.paused_mask & bit == 0 {
                port.paused_mask |= bit;
                port.paused_since_ps[prio as usize] = now;
            }
        } else {
            port.resume_rx += 1;
        }
        if !self.sw_parts.is_empty() && !port.is_host {
            self.switch_pfc_hook(pid, prio, pause);
        }
        let port = &mut self.ports[pid as usize];
        if !pause && port.paused_mask & bit != 0 {
            port.paused_mask &= !bit;
            port.paused_time_ps += now - port.paused_since_ps[prio as usize];
            self.port_kick(pid);
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
