//! The marking pipeline of a switch egress port: RED/ECN at dequeue on the queue the packet
//! leaves behind (the HPCC ns-3 simulator's order), then the scheme's switch part (INT, TCD,
//! NP-ECN, rate stamps ...) at enqueue, dequeue, PFC frames and its timers.

use crate::cc::Verdict;
use crate::engine::Simulation;
use crate::net::{Mark, PktKind};

/// The switch context of a hook on port `$pid`, priority `$prio`, packet `$pkt` (u32::MAX:
/// none), seeing `$q` bytes queued; borrows only the fields a hook may touch.
macro_rules! sw_ctx {
    ($sim:ident, $pid:expr, $prio:expr, $pkt:expr, $q:expr) => {
        crate::cc::Sw::new(
            $sim.now_ps,
            $pid,
            $prio as u8,
            &$sim.ports[$pid as usize],
            $q,
            ($pkt, $sim.pkts.capacity_used()),
            &mut $sim.ints,
            &mut $sim.streams.ports[$pid as usize],
            &mut $sim.q,
            &mut $sim.port_timers[$pid as usize],
            &mut $sim.ctrl_out,
        )
    };
}

impl Simulation {
    /// RED: mark CE with probability rising from 0 at Kmin to Pmax at Kmax, always above Kmax.
    /// True when this port marked the packet (it was not CE before).
    #[inline]
    pub(crate) fn red_mark(&mut self, pid: u32, prio: usize, pkt: u32) -> bool {
        let port = &self.ports[pid as usize];
        if port.kmax_bytes == 0 || self.pkts[pkt].kind != PktKind::Data {
            return false;
        }
        let q = port.prios[prio].queue_bytes;
        let mark = if q > port.kmax_bytes {
            true
        } else if q > port.kmin_bytes {
            let prob = self.s.ecn_pmax * (q - port.kmin_bytes) as f64
                / (port.kmax_bytes - port.kmin_bytes) as f64;
            self.streams.ports[pid as usize].uniform() < prob
        } else {
            false
        };
        if mark && self.pkts[pkt].mark != Mark::Ce {
            self.pkts[pkt].mark = Mark::Ce;
            self.ports[pid as usize].ecn_marked += 1;
            return true;
        }
        false
    }

    /// Count a CE mark port `pid` gave data packet `pkt`, which came with mark `before`.
    #[inline]
    pub(crate) fn count_ce(&mut self, pid: u32, before: Mark, pkt: u32) {
        let p = &self.pkts[pkt];
        if p.mark == Mark::Ce && before != Mark::Ce && p.kind == PktKind::Data {
            self.ports[pid as usize].ecn_marked += 1;
        }
    }

    /// The scheme's enqueue hook for packet `pkt` about to join `pid`'s queue `prio`.
    #[inline]
    pub(crate) fn switch_enqueue_hook(&mut self, pid: u32, prio: usize, pkt: u32) -> Verdict {
        let q = self.ports[pid as usize].prios[prio].queue_bytes + self.pkts[pkt].size_bytes as u64;
        let mut sw = sw_ctx!(self, pid, prio, pkt, q);
        let p = &mut self.pkts[pkt];
        self.cc.on_enqueue(&mut self.sw_parts, &mut sw, p)
    }

    /// The scheme's dequeue hook for packet `pkt` leaving `pid`'s queue `prio`; `red_ce`: this
    /// port's RED has just marked it CE.
    #[inline]
    pub(crate) fn switch_dequeue_hook(&mut self, pid: u32, prio: usize, pkt: u32, red_ce: bool) {
        let q = self.ports[pid as usize].prios[prio].queue_bytes;
        let mut sw = sw_ctx!(self, pid, prio, pkt, q);
        sw.red_ce = red_ce;
        let p = &mut self.pkts[pkt];
        self.cc.on_dequeue(&mut self.sw_parts, &mut sw, p);
    }

    /// The scheme's hook for a PAUSE or RESUME of class `prio` received by switch port `pid`.
    pub(crate) fn switch_pfc_hook(&mut self, pid: u32, prio: u8, pause: bool) {
        let q = self.ports[pid as usize].prios[prio as usize].queue_bytes;
        let mut sw = sw_ctx!(self, pid, prio, u32::MAX, q);
        self.cc.on_pfc(&mut self.sw_parts, &mut sw, pause);
        self.flush_switch_ctrl(pid);
    }

    /// A timer of port `pid`'s switch part fired.
    pub(crate) fn port_timer(&mut self, pid: u32, kind: u8) {
        let mut sw = sw_ctx!(self, pid, 0, u32::MAX, 0);
        self.cc.on_port_timer(&mut self.sw_parts, &mut sw, kind);
        self.flush_switch_ctrl(pid);
    }
}
