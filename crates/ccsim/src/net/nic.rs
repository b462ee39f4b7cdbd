//! Host NIC transmit: control packets (ACK/NACK/CNP) first, in priority order, then one data
//! packet from the flows allowed to send now (round-robin over the host's active flows; a flow
//! is allowed when it has data, its window is open and its pacing time has come). When only
//! pacing holds flows back, the NIC schedules a wake-up at the earliest pacing time.

use crate::net::{Packet, PktKind, NUM_PRIO};
use crate::sim::Event;
use crate::world::Simulation;

impl Simulation {
    /// Pick the next packet for host port `pid`, building a data packet if a flow may send.
    pub(crate) fn nic_dequeue(&mut self, pid: u32) -> Option<u32> {
        let now = self.now_ps;
        let port = &mut self.ports[pid as usize];
        if port.queued_pkts > 0 {
            for p in 0..NUM_PRIO {
                if port.paused_mask & (1 << p) == 0 {
                    if let Some(pkt) = port.queues[p].pop_front() {
                        port.queue_bytes[p] -= self.pkts[pkt].size_bytes as u64;
                        port.queued_pkts -= 1;
                        return Some(pkt);
                    }
                }
            }
        }
        if port.paused_mask & (1 << self.s.data_priority) != 0 {
            return None;
        }
        let hid = self.host_index[port.node as usize] as usize;
        let idx = self.pick_flow(hid, now)?;
        let h = &mut self.hosts[hid];
        let fid = h.active[idx];
        let pkt = self.make_data_packet(fid);
        // Next turn goes to the flow after this one; a flow whose last byte just left the
        // NIC leaves the list (a NACK or a new flow puts flows back through `activate`).
        let h = &mut self.hosts[hid];
        if self.flows[fid as usize].all_sent() {
            self.flows[fid as usize].in_active = false;
            h.active.remove(idx);
            h.rr = if h.active.is_empty() {
                0
            } else {
                idx % h.active.len()
            };
        } else {
            h.rr = (idx + 1) % h.active.len();
        }
        Some(pkt)
    }

    /// Round-robin from `rr`: the index of the first active flow allowed to send now. If none
    /// is and some wait only for pacing, schedule a wake-up at the earliest pacing time.
    fn pick_flow(&mut self, hid: usize, now: u64) -> Option<usize> {
        let h = &mut self.hosts[hid];
        let n = h.active.len();
        let mut earliest = u64::MAX;
        for k in 0..n {
            let idx = (h.rr + k) % n;
            let f = &self.flows[h.active[idx] as usize];
            if f.can_send(now) {
                return Some(idx);
            }
            if f.snd_nxt - f.snd_una < f.window_bytes {
                earliest = earliest.min(f.next_avail_ps);
            }
        }
        if earliest != u64::MAX
            && (h.wake_at_ps == u64::MAX || earliest < h.wake_at_ps || h.wake_at_ps < now)
        {
            h.wake_at_ps = earliest;
            self.q.push(earliest, Event::NicWake { host: hid as u32 });
        }
        None
    }

    fn make_data_packet(&mut self, fid: u32) -> u32 {
        let now = self.now_ps;
        let f = &mut self.flows[fid as usize];
        let payload = (f.size_bytes - f.snd_nxt).min(self.s.mtu_payload_bytes as u64) as u32;
        let size = payload + self.s.header_bytes;
        let pkt = self.pkts.alloc(Packet {
            kind: PktKind::Data,
            prio: self.s.data_priority,
            ce: false,
            pfc_prio: 0,
            size_bytes: size,
            payload_bytes: payload,
            flow: fid,
            dst_host: f.dst,
            seq: f.snd_nxt,
            ts_ps: now,
            in_port: u32::MAX,
            int_hops: 0,
        });
        f.snd_nxt += payload as u64;
        f.tx_bytes += size as u64;
        f.next_avail_ps = now + crate::sim::tx_time_ps(size as u64, f.rate_bps);
        let mut ctx = crate::cc::CcCtx {
            now_ps: now,
            flow_id: fid,
            q: &mut self.q,
        };
        self.cc[fid as usize].on_send(&self.cc_params, f, &mut ctx, size as u64);
        pkt
    }

    /// Queue a control packet (ACK/NACK/CNP) at host `hid`'s NIC; returns its packet id.
    pub(crate) fn send_control(&mut self, hid: u32, pkt: Packet) -> u32 {
        let prio = pkt.prio as usize;
        let size = pkt.size_bytes as u64;
        let id = self.pkts.alloc(pkt);
        let pid = self.hosts[hid as usize].port;
        let port = &mut self.ports[pid as usize];
        port.enqueue(prio, id, size);
        self.port_kick(pid);
        id
    }
}
