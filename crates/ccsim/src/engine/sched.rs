//! Egress scheduling at run time: the rate-limited control queue of a scheme.

use crate::engine::Simulation;
use crate::net::{Packet, PktKind};
use crate::sim::Event;

impl Simulation {
    /// True when `pkt` belongs in the scheme's rate-limited control queue.
    #[inline]
    pub(crate) fn is_limited_ctrl(&self, pkt: &Packet) -> bool {
        self.s
            .ctrl_queue
            .is_some_and(|c| pkt.kind == PktKind::Ctrl && pkt.sub == c.code)
    }

    /// Queue `pkt` in port `pid`'s rate-limited control queue; false (the packet counted and
    /// freed) when the queue is full.
    #[cold]
    pub(crate) fn limited_enqueue(&mut self, pid: u32, pkt: u32) -> bool {
        let limit = self.s.ctrl_queue.map_or(0, |c| c.limit_packets) as usize;
        let port = &mut self.ports[pid as usize];
        if port.limited().len() >= limit {
            port.ctrl_drops += 1;
            self.pkts.free(pkt);
            return false;
        }
        port.push_limited(pkt);
        true
    }

    /// The head of port `pid`'s rate-limited control queue if its time has come (the next
    /// waits the packet's serialization time divided by the queue's share of the link);
    /// otherwise arm the port's wake-up for that time.
    #[cold]
    pub(crate) fn limited_dequeue(&mut self, pid: u32) -> Option<u32> {
        let c = self.s.ctrl_queue?;
        let now = self.now_ps;
        let port = &mut self.ports[pid as usize];
        let &pkt = port.limited().front()?;
        if port.limited_next_ps <= now {
            port.pop_limited();
            let ser = port.tx_time_ps(self.pkts[pkt].size_bytes as u64, self.s.tx_floor_ns);
            let gap = ser * c.share_den as u64 / c.share_num as u64;
            port.limited_next_ps = now + gap;
            return Some(pkt);
        }
        let at = port.limited_next_ps;
        if port.txdone_at_ps > at {
            port.txdone_at_ps = at;
            self.q.push(at, Event::TxDone { port: pid });
        }
        None
    }
}
