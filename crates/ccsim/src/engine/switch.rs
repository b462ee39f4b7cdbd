//! Switch forwarding: ECMP route lookup, buffer admission (`net::mmu`), the scheme's enqueue
//! hook, queueing, and at dequeue the scheduler (`net::sched`), RED/ECN and the scheme's dequeue
//! hook (`engine::marking`), then the buffer release that may send RESUME. On a lossy fabric a
//! packet without room is dropped, or trimmed to its header when the scheme asks for trimming.

use crate::cc::Verdict;
use crate::engine::Simulation;
use crate::net::mmu::Admit;
use crate::net::{Packet, PktKind, PATH_KEY_MASK};
use crate::sim::rng::mix64;

impl Simulation {
    /// The egress port switch `si` uses for packet `p`: one of the equal-cost next hops toward
    /// its host, chosen by a hash of its flow (the same choice for every packet of the flow),
    /// and of its path key for data packets of a `path_per_packet` scheme (control packets
    /// too with `spray_ctrl`). With symmetric ECMP
    /// the hash covers the unordered pair of end hosts instead of the flow and is the same at
    /// every switch of a layer, so the reverse direction retraces the forward path.
    #[inline(always)]
    pub(crate) fn ecmp_next_hop(&self, si: u32, p: &Packet) -> u32 {
        let hops = self.routes.next_hops(si, p.dst_host);
        if hops.len() == 1 {
            return hops[0];
        }
        let path = if !self.s.path_per_packet {
            0
        } else if p.kind == PktKind::Data {
            p.aux & PATH_KEY_MASK
        } else if self.s.spray_ctrl {
            // Control packets carry no path key: their send time and sequence pick one (never
            // 0, the flow's own path).
            (mix64(p.ts_ps ^ p.seq.rotate_left(32)) as u32 & PATH_KEY_MASK) | 1
        } else {
            0
        };
        let ends = if self.s.ecmp_symmetric {
            self.flow_ends[p.flow as usize]
        } else {
            (0, 0)
        };
        self.ecmp_hash(si, hops, (p.flow, path), ends)
    }

    /// The next hop of a flow between hosts `ends` (that need not exist yet) toward `dst`.
    pub(crate) fn ecmp_route(&self, si: u32, dst: u32, flow: u32, ends: (u32, u32)) -> u32 {
        let hops = self.routes.next_hops(si, dst);
        match hops.len() {
            1 => hops[0],
            _ => self.ecmp_hash(si, hops, (flow, 0), ends),
        }
    }

    /// `(src, dst)`: the flow's end hosts, read only with symmetric ECMP. A path key of 0 hashes
    /// as the flow alone.
    #[inline(always)]
    fn ecmp_hash(
        &self,
        si: u32,
        hops: &[u32],
        (flow, path): (u32, u32),
        (src, dst): (u32, u32),
    ) -> u32 {
        let key = if self.s.ecmp_symmetric {
            // Every switch of a layer picks the same position among its up-links, so the
            // reverse path climbs through the mirror images of the forward path's switches
            // (same position in the other pod, same core).
            let (a, b) = (src.min(dst) as u64, src.max(dst) as u64);
            let layer = self.topo.nodes[self.switches[si as usize].node as usize].layer;
            mix64(a << 32 | b) ^ (layer as u64) << 32
        } else {
            flow as u64 ^ (si as u64) << 32
        };
        let key = if path == 0 {
            key
        } else {
            key ^ mix64(path as u64)
        };
        hops[(mix64(self.s.ecmp_seed ^ key) % hops.len() as u64) as usize]
    }

    /// A packet arrived at switch port `in_port`: route, admit (or drop / trim), run the scheme's
    /// enqueue hook, enqueue.
    pub(crate) fn switch_receive(&mut self, in_port: u32, pkt: u32) {
        let node = self.ports[in_port as usize].node;
        let si = self.switch_index[node as usize];
        let p = self.pkts[pkt];
        let out = self.ecmp_next_hop(si, &p);
        let mut size = p.size_bytes as u64;
        let mut prio = p.prio as usize;
        if prio == 0 {
            if self.is_limited_ctrl(&p) {
                if self.limited_enqueue(out, pkt) {
                    self.switches[si as usize].ctrl_bytes += size;
                    self.note_buffer_use(si as usize);
                    self.port_kick(out);
                }
                return;
            }
            if self.ctrl_no_room(si as usize, out, size) {
                self.drop_packet(out, pkt);
                return;
            }
            self.switches[si as usize].ctrl_bytes += size;
        } else {
            let ack = matches!(p.kind, PktKind::Ack | PktKind::Nack);
            match self.admit(si as usize, in_port, out, (prio, size, ack)) {
                Admit::Ok => {}
                Admit::Fatal => return,
                Admit::Drop
                    if self.s.trim
                        && p.kind == PktKind::Data
                        && !self.ctrl_no_room(si as usize, out, p.size_bytes as u64) =>
                {
                    let at = (si as usize, in_port, out);
                    match self.trim_on_overflow(at, pkt, (prio, size, ack)) {
                        Some(queued_as) => (size, prio) = queued_as,
                        None => return,
                    }
                }
                Admit::Drop => {
                    self.drop_packet(out, pkt);
                    return;
                }
            }
        }
        self.pkts[pkt].in_port = in_port;
        if !self.sw_parts.is_empty() && (prio != 0 || self.s.switch_sees_ctrl) {
            let verdict = self.switch_enqueue_hook(out, prio, pkt);
            self.count_ce(out, p.mark, pkt);
            match verdict {
                Verdict::Enqueue => {}
                // Priority 0 (a control packet, a trimmed header): not in the shared buffer.
                Verdict::Drop if prio == 0 => {
                    self.switches[si as usize].ctrl_bytes -= size;
                    self.drop_packet(out, pkt);
                    self.flush_switch_ctrl(out);
                    return;
                }
                Verdict::Drop => {
                    self.release(si as usize, in_port, prio, size);
                    self.drop_packet(out, pkt);
                    self.flush_switch_ctrl(out);
                    return;
                }
                Verdict::Trim if prio == 0 => {} // already a header or a control packet
                Verdict::Trim => {
                    self.release(si as usize, in_port, prio, size);
                    self.trim(out, pkt);
                    (size, prio) = (self.pkts[pkt].size_bytes as u64, 0);
                    self.switches[si as usize].ctrl_bytes += size;
                }
            }
        }
        let port = &mut self.ports[out as usize];
        port.enqueue(prio, pkt, size);
        let backlog = port.backlog_bytes();
        if backlog > port.max_queue_bytes {
            port.max_queue_bytes = backlog;
        }
        self.note_buffer_use(si as usize);
        if !self.ctrl_out.is_empty() {
            self.flush_switch_ctrl(out);
        }
        self.port_kick(out);
    }

    /// Data packet `pkt` (priority `prio`, `size` bytes) found no room at port `out` of switch
    /// `si`: as htsim, trim it or the newest queued packet with equal chance (the arrival then
    /// takes the room that packet's payload leaves). Returns the size and priority the arrival
    /// is queued with (its header at priority 0 if it was trimmed), or None if it was dropped
    /// (no room for its header either).
    #[cold]
    #[inline(never)]
    fn trim_on_overflow(
        &mut self,
        (si, in_port, out): (usize, u32, u32),
        pkt: u32,
        (prio, size, ack): (usize, u64, bool),
    ) -> Option<(u64, usize)> {
        let newest = self.sw_parts.is_empty()
            && self.streams.ports[out as usize].uniform() < 0.5
            && self.trim_newest(si, out, prio)
            && matches!(self.admit(si, in_port, out, (prio, size, ack)), Admit::Ok);
        if newest {
            return Some((size, prio));
        }
        if self.ctrl_no_room(si, out, self.pkts[pkt].size_bytes as u64) {
            self.drop_packet(out, pkt);
            return None;
        }
        self.trim(out, pkt);
        let header = self.pkts[pkt].size_bytes as u64;
        self.switches[si].ctrl_bytes += header;
        Some((header, 0))
    }

    /// Trim the newest data packet of priority `prio` queued at port `out` (not the head) and
    /// move its header to the control queue; false when there is none.
    #[cold]
    fn trim_newest(&mut self, si: usize, out: u32, prio: usize) -> bool {
        let Some((pkt, size)) = self.ports[out as usize].pop_newest(prio, &self.pkts) else {
            return false;
        };
        self.release(si, self.pkts[pkt].in_port, prio, size);
        self.trim(out, pkt);
        let header = self.pkts[pkt].size_bytes as u64;
        self.switches[si].ctrl_bytes += header;
        self.ports[out as usize].enqueue(0, pkt, header);
        true
    }

    /// Cut data packet `pkt` to its header (payload 0) for the control queue of port `out`.
    fn trim(&mut self, out: u32, pkt: u32) {
        let p = &mut self.pkts[pkt];
        p.size_bytes -= p.payload_bytes;
        p.payload_bytes = 0;
        p.prio = 0;
        self.ports[out as usize].trims += 1;
    }

    /// A lossy switch `si` has no room for a priority-0 packet of `size` bytes at port `out`:
    /// its queue is at `fabric.loss.ctrl_packets`, or the packet would overflow the buffer
    /// (control packets bypass admission, but not the buffer's size).
    #[inline]
    fn ctrl_no_room(&self, si: usize, out: u32, size: u64) -> bool {
        self.s.drop.is_some_and(|d| {
            let sw = &self.switches[si];
            (d.ctrl_packets > 0
                && self.ports[out as usize].prios[0].len() >= d.ctrl_packets as usize)
                || sw.shared_used_bytes + sw.ctrl_bytes + size > sw.shared_pool_bytes
        })
    }

    /// Drop packet `pkt` that had no room at egress port `out`.
    fn drop_packet(&mut self, out: u32, pkt: u32) {
        let port = &mut self.ports[out as usize];
        port.drops += 1;
        port.drop_bytes += self.pkts[pkt].size_bytes as u64;
        self.pkts.free(pkt);
    }

    /// Send the control packets a switch hook at egress port `pid` asked for, from that
    /// switch, at control priority (e.g. QCN feedback to a flow's source).
    pub(crate) fn flush_switch_ctrl(&mut self, pid: u32) {
        let si = self.switch_index[self.ports[pid as usize].node as usize];
        let msgs = std::mem::take(&mut self.ctrl_out);
        for m in &msgs {
            let (src, dst) = self.flow_ends[m.flow as usize];
            let to = if m.to_sender { src } else { dst };
            let size = self.s.ctrl_size(m.code);
            let mut c = Packet::new(PktKind::Ctrl, m.flow, to, size, 0);
            (c.sub, c.hdr, c.mark, c.ts_ps) = (m.code, m.hdr, m.mark, m.ts_ps);
            let limited = self.is_limited_ctrl(&c);
            let back = self.ecmp_next_hop(si, &c);
            let cnm = self.pkts.alloc(c);
            if limited {
                if !self.limited_enqueue(back, cnm) {
                    continue;
                }
            } else {
                self.ports[back as usize].enqueue(0, cnm, size as u64);
            }
            self.switches[si as usize].ctrl_bytes += size as u64;
            self.ports[back as usize].ctrl_sent += 1;
            self.port_kick(back);
        }
        self.ctrl_out = msgs;
        self.ctrl_out.clear();
    }

    /// Pick the next packet for switch egress port `pid` and do the dequeue-time work.
    pub(crate) fn switch_dequeue(&mut self, pid: u32) -> Option<u32> {
        if self.ports[pid as usize].has_limited() {
            if let Some(pkt) = self.limited_dequeue(pid) {
                let si = self.switch_index[self.ports[pid as usize].node as usize] as usize;
                self.switches[si].ctrl_bytes -= self.pkts[pkt].size_bytes as u64;
                if self.s.switch_sees_ctrl && !self.sw_parts.is_empty() {
                    self.switch_dequeue_hook(pid, 0, pkt, false);
                }
                return Some(pkt);
            }
        }
        let port = &mut self.ports[pid as usize];
        if !port.has_queued() {
            return None;
        }
        let prio = port.pick_priority(self.s.scheduler, self.s.hdr_ratio)?;
        let (pkt, size) = port.dequeue(prio, &self.pkts).expect("non-empty");
        let si = self.switch_index[port.node as usize] as usize;
        if prio == 0 {
            self.switches[si].ctrl_bytes -= size;
            if self.s.switch_sees_ctrl && !self.sw_parts.is_empty() {
                self.switch_dequeue_hook(pid, 0, pkt, false);
            }
            return Some(pkt);
        }
        let red_ce = self.red_mark(pid, prio, pkt);
        if !self.sw_parts.is_empty() {
            let before = self.pkts[pkt].mark;
            self.switch_dequeue_hook(pid, prio, pkt, red_ce);
            self.count_ce(pid, before, pkt);
        }
        self.release(si, self.pkts[pkt].in_port, prio, size);
        Some(pkt)
    }
}
