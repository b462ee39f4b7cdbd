//! Flow lifecycle and the receive path: data -> ACK/NACK (and CNP) at the receiver, ACK/NACK/CNP
//! -> congestion control and go-back-N at the sender. FCT is measured when the sender holds the
//! ACK of the last byte.

use crate::cc::{AckInfo, CcCtx};
use crate::net::{Packet, PktKind};
use crate::sim::Event;
use crate::world::Simulation;

impl Simulation {
    pub(crate) fn flow_start(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        f.started = true;
        f.next_avail_ps = self.now_ps;
        self.cc[fid as usize].on_start(&self.cc_params, f);
        self.activate(fid);
    }

    fn activate(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        if !f.in_active && !f.all_sent() {
            f.in_active = true;
            let h = &mut self.hosts[f.src as usize];
            h.active.push(fid);
            let port = h.port;
            self.port_kick(port);
        }
    }

    /// A long-lived flow stops offering new data; it finishes once what it sent is acked.
    pub(crate) fn flow_stop(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        if f.finished {
            return;
        }
        f.size_bytes = f.snd_nxt;
        if f.in_active {
            f.in_active = false;
            let h = &mut self.hosts[f.src as usize];
            h.active.retain(|&x| x != fid);
            h.rr %= h.active.len().max(1);
        }
        if f.snd_una >= f.size_bytes {
            self.finish_flow(fid);
        }
    }

    fn finish_flow(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        f.finished = true;
        f.finish_ps = self.now_ps;
        self.cc[fid as usize].on_finish();
        self.flows_open -= 1;
    }

    /// A packet reached a host.
    pub(crate) fn host_receive(&mut self, pkt: u32) {
        // The slot is freed first so a reply can reuse it; the INT side table keeps this
        // packet's records until a new packet is written there.
        let p = self.pkts[pkt];
        self.pkts.free(pkt);
        match p.kind {
            PktKind::Data => self.receive_data(&p, pkt),
            PktKind::Ack | PktKind::Nack | PktKind::Cnp => self.receive_feedback(&p, pkt),
            PktKind::Pause | PktKind::Resume => unreachable!("PFC frames are handled before"),
        }
    }

    fn control(
        s: &crate::world::Settings,
        kind: PktKind,
        flow: u32,
        dst_host: u32,
        seq: u64,
        ce: bool,
        ts_ps: u64,
    ) -> Packet {
        Packet {
            kind,
            prio: s.ack_priority,
            ce,
            pfc_prio: 0,
            size_bytes: s.ack_bytes,
            payload_bytes: 0,
            flow,
            dst_host,
            seq,
            ts_ps,
            in_port: u32::MAX,
            int_hops: 0,
        }
    }

    /// Send an ACK or NACK for data packet `data`, carrying its INT records. The ACK usually
    /// takes the slot the data packet just freed, and with it the records, so nothing is copied.
    fn send_ack(&mut self, host: u32, mut ack: Packet, data: &Packet, data_pkt: u32) {
        if !self.s.int_enabled {
            self.send_control(host, ack);
            return;
        }
        ack.int_hops = data.int_hops;
        let int = self.ints[data_pkt as usize];
        let id = self.send_control(host, ack);
        if id != data_pkt {
            *self.int_slot(id) = int;
        }
    }

    fn receive_data(&mut self, p: &Packet, pkt: u32) {
        let now = self.now_ps;
        let fid = p.flow;
        let f = &mut self.flows[fid as usize];
        let (src, dst) = (f.src, f.dst);
        self.metrics.delivered_bytes += if p.seq == f.rcv_nxt {
            p.payload_bytes as u64
        } else {
            0
        };
        if p.seq == f.rcv_nxt {
            f.rcv_nxt += p.payload_bytes as u64;
            f.rx_since_ack += 1;
            f.ce_since_ack |= p.ce;
            let last = !f.long_lived && f.rcv_nxt >= f.size_bytes;
            if f.rx_since_ack >= self.s.ack_every_packets || last {
                let ack = Self::control(
                    &self.s,
                    PktKind::Ack,
                    fid,
                    src,
                    f.rcv_nxt,
                    f.ce_since_ack,
                    p.ts_ps,
                );
                let f = &mut self.flows[fid as usize];
                f.rx_since_ack = 0;
                f.ce_since_ack = false;
                self.send_ack(dst, ack, p, pkt);
            }
            let gap = self.cc_params.cnp_interval_ps();
            let f = &mut self.flows[fid as usize];
            if gap > 0 && p.ce && f.last_cnp_ps.is_none_or(|t| now >= t + gap) {
                f.last_cnp_ps = Some(now);
                let cnp = Self::control(&self.s, PktKind::Cnp, fid, src, 0, true, p.ts_ps);
                self.send_control(dst, cnp);
            }
        } else if p.seq > f.rcv_nxt {
            if now >= f.nack_ok_ps || f.last_nack_seq != f.rcv_nxt {
                f.nack_ok_ps = now + self.s.nack_interval_ps;
                f.last_nack_seq = f.rcv_nxt;
                let nack =
                    Self::control(&self.s, PktKind::Nack, fid, src, f.rcv_nxt, p.ce, p.ts_ps);
                self.send_ack(dst, nack, p, pkt);
            }
        } else {
            // Duplicate after go-back-N: re-acknowledge what we have.
            let ack = Self::control(&self.s, PktKind::Ack, fid, src, f.rcv_nxt, false, p.ts_ps);
            self.send_ack(dst, ack, p, pkt);
        }
    }

    fn receive_feedback(&mut self, p: &Packet, pkt: u32) {
        let now = self.now_ps;
        let fid = p.flow;
        let f = &mut self.flows[fid as usize];
        if f.finished {
            return;
        }
        let mut ctx = CcCtx {
            now_ps: now,
            flow_id: fid,
            q: &mut self.q,
        };
        let cc = &mut self.cc[fid as usize];
        match p.kind {
            PktKind::Cnp => cc.on_cnp(&self.cc_params, f, &mut ctx, p.seq as u8),
            PktKind::Ack | PktKind::Nack => {
                let newly = p.seq.saturating_sub(f.snd_una);
                if newly > 0 {
                    f.snd_una = p.seq;
                }
                if p.kind == PktKind::Nack && f.snd_nxt > p.seq {
                    f.snd_nxt = p.seq; // go-back-N
                }
                cc.on_ack(
                    &self.cc_params,
                    f,
                    &mut ctx,
                    AckInfo {
                        ack_seq: p.seq,
                        newly_acked_bytes: newly,
                        ce_echo: p.ce,
                        rtt_ps: now - p.ts_ps,
                        int: if self.s.int_enabled {
                            &self.ints[pkt as usize].hops[..p.int_hops as usize]
                        } else {
                            &[]
                        },
                    },
                );
            }
            _ => {}
        }
        let f = &self.flows[fid as usize];
        if f.snd_una >= f.size_bytes {
            self.finish_flow(fid);
            return;
        }
        if !f.in_active && !f.all_sent() {
            self.activate(fid);
        } else {
            let port = self.hosts[f.src as usize].port;
            self.port_kick(port);
        }
    }

    /// Schedule the start (and stop) events of every flow.
    pub(crate) fn schedule_flows(&mut self) {
        for (i, f) in self.flows.iter().enumerate() {
            self.q.push(f.start_ps, Event::FlowStart { flow: i as u32 });
            if f.long_lived && f.stop_ps != u64::MAX {
                self.q.push(f.stop_ps, Event::FlowStop { flow: i as u32 });
            }
        }
    }
}
