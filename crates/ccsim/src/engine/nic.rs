//! Host NIC transmit: control packets (ACK/NACK/scheme control) first, in priority order, then
//! one data packet from the flows allowed to send now (round-robin over the host's active
//! flows; a flow is allowed when it has data, its window is open, its pacing time and any halt
//! have passed, it holds credit, and its priority is not paused). When only time holds flows
//! back, the NIC schedules a wake-up at the earliest such time.

use crate::cc::DataOut;
use crate::engine::Simulation;
use crate::net::config::Scheduler;
use crate::net::{Packet, PktKind, SchemeHdr, ACK_REQ, PATH_KEY_MASK};
use crate::sim::Event;

impl Simulation {
    /// Pick the next packet for host port `pid`, building a data packet if a flow may send.
    pub(crate) fn nic_dequeue(&mut self, pid: u32) -> Option<u32> {
        let now = self.now_ps;
        if self.ports[pid as usize].has_limited() {
            if let Some(pkt) = self.limited_dequeue(pid) {
                return Some(pkt);
            }
        }
        let port = &mut self.ports[pid as usize];
        if let Some(p) = port.pick_priority(Scheduler::Strict, 0) {
            let (pkt, _) = port
                .dequeue(p, &self.pkts)
                .expect("picked a non-empty queue");
            return Some(pkt);
        }
        let paused = port.paused_mask;
        if !self.s.prio_per_packet && paused & (1 << self.s.data_priority) != 0 {
            return None;
        }
        let hid = self.host_index[port.node as usize] as usize;
        let idx = self.pick_flow(hid, now, paused)?;
        let h = &mut self.hosts[hid];
        let fid = h.active[idx];
        let pkt = self.make_data_packet(fid);
        // Next turn goes to the flow after this one; a flow with nothing left to send leaves
        // the list (a NACK, a timeout or a new flow puts flows back through `activate`).
        let h = &mut self.hosts[hid];
        let f = &mut self.flows[fid as usize];
        if f.all_sent() {
            f.in_active = false;
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
    /// is and some wait only for their pacing time or halt, schedule a wake-up at the earliest.
    fn pick_flow(&mut self, hid: usize, now: u64, paused: u8) -> Option<usize> {
        if self.s.sender_srpt {
            if let Some(idx) = self.shortest_sendable(hid, now, paused) {
                return Some(idx);
            }
        }
        let h = &mut self.hosts[hid];
        let n = h.active.len();
        let mut earliest = u64::MAX;
        let per_flow_prio = self.s.prio_per_packet && paused != 0;
        for k in 0..n {
            let idx = (h.rr + k) % n;
            let f = &self.flows[h.active[idx] as usize];
            if per_flow_prio && paused & (1 << f.ctl.data_prio) != 0 {
                continue;
            }
            if f.can_send(now) {
                return Some(idx);
            }
            if f.has_ready_packet() && f.ctl.credit_bytes > 0 {
                earliest = earliest.min(f.ctl.next_avail_ps.max(f.ctl.hold_until_ps));
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

    /// Shortest first (`sender_srpt`): the index of the active flow allowed to send now with the
    /// fewest bytes left to send (then the lowest id); None leaves the wake-up to `pick_flow`.
    #[cold]
    #[inline(never)]
    fn shortest_sendable(&self, hid: usize, now: u64, paused: u8) -> Option<usize> {
        let per_flow_prio = self.s.prio_per_packet && paused != 0;
        let active = &self.hosts[hid].active;
        (active.iter().enumerate())
            .filter(|&(_, &fid)| {
                let f = &self.flows[fid as usize];
                !(per_flow_prio && paused & (1 << f.ctl.data_prio) != 0) && f.can_send(now)
            })
            .min_by_key(|&(_, &fid)| {
                let f = &self.flows[fid as usize];
                (f.size_bytes - f.snd_nxt.min(f.size_bytes), fid)
            })
            .map(|(idx, _)| idx)
    }

    /// Build flow `fid`'s next data packet: a queued retransmission, else new data. The
    /// sender's pre-transmit hook (`on_send`) may set its scheme header and path key.
    fn make_data_packet(&mut self, fid: u32) -> u32 {
        let now = self.now_ps;
        let i = self.flows.slot(fid);
        let f = self.flows.at_mut(i);
        let rtx = f.rtx_seq;
        let seq = if rtx != u64::MAX { rtx } else { f.snd_nxt };
        let payload = (f.size_bytes - seq).min(self.s.mtu_payload_bytes as u64) as u32;
        let size = payload + self.s.header_bytes;
        let mut data = Packet::new(PktKind::Data, fid, f.dst, size, f.ctl.data_prio);
        (data.seq, data.ts_ps, data.payload_bytes) = (seq, now, payload as u16);
        // Ask for an ACK when this packet closes the window, and on every retransmission.
        if rtx != u64::MAX || seq + payload as u64 - f.snd_una >= f.ctl.window_bytes {
            data.aux = ACK_REQ;
        }
        let pkt = self.pkts.alloc(data);
        if rtx != u64::MAX {
            self.next_retransmission(fid, seq + payload as u64);
        } else {
            f.snd_nxt += payload as u64;
        }
        let f = self.flows.at_mut(i);
        f.tx_bytes += size as u64;
        let gap_ps = crate::sim::tx_time_ps(size as u64, f.ctl.rate_bps);
        f.ctl.next_avail_ps = now + crate::sim::cut_to_ns(gap_ps, self.s.tx_floor_ns);
        if f.ctl.credit_bytes != u64::MAX {
            f.ctl.credit_bytes = f.ctl.credit_bytes.saturating_sub(payload as u64);
        }
        if self.s.engine_recovery() {
            self.arm_rto(fid);
        }
        let mut out = DataOut {
            seq,
            payload_bytes: payload,
            size_bytes: size,
            retransmit: rtx != u64::MAX,
            hdr: SchemeHdr::default(),
            path_key: 0,
        };
        self.sender_hook(fid, |cc, s, tx| cc.on_send(s, tx, &mut out));
        let p = &mut self.pkts[pkt];
        p.hdr = out.hdr;
        p.aux |= out.path_key & PATH_KEY_MASK;
        if !self.ctrl_out.is_empty() {
            self.flush_flow_ctrl(false);
        }
        pkt
    }

    /// Queue a control packet (ACK/NACK/scheme control) at host `hid`'s NIC and, with `kick`,
    /// start the port; returns its packet id.
    #[inline]
    pub(crate) fn send_control(&mut self, hid: u32, pkt: Packet, kick: bool) -> u32 {
        // Every control packet leaves the NIC in its class; an ACK's `prio` is its class at
        // switches (`fabric.ack_priority`), a control packet's the same as here.
        let prio = self.s.ack_priority as usize;
        let size = pkt.size_bytes as u64;
        let limited = self.is_limited_ctrl(&pkt);
        let id = self.pkts.alloc(pkt);
        let pid = self.hosts[hid as usize].port;
        if limited {
            if !self.limited_enqueue(pid, id) {
                return id;
            }
        } else {
            self.ports[pid as usize].enqueue(prio, id, size);
            if self.ports[pid as usize].prios[prio].len() > MAX_NIC_CTRL_PACKETS {
                self.control_storm(hid);
            }
        }
        if kick {
            self.port_kick(pid);
        }
        id
    }

    /// Host `hid`'s NIC holds more control packets than it can ever send: the scheme makes
    /// them faster than the link carries them, and the run would exhaust memory.
    #[cold]
    fn control_storm(&mut self, hid: u32) {
        if self.fatal.is_none() {
            self.fatal = Some(super::SimError(format!(
                "a control storm at {:.3} us: host {hid}'s NIC holds over {MAX_NIC_CTRL_PACKETS} control packets (grants, credits, ACKs) waiting for its link, made faster than the link carries them; the scheme does not keep up with this many concurrent flows (fewer flows or a lower load run)",
                self.now_ps as f64 / 1e6
            )));
        }
    }
}

/// Control packets one NIC may hold before the run stops as a control storm (`control_storm`).
const MAX_NIC_CTRL_PACKETS: usize = 1 << 18;
