//! Flow lifecycle and the receive path: data -> the scheme's receiver part, then ACK/NACK at the
//! receiver; ACK/NACK -> recovery and the scheme's sender part at the sender; control packets
//! -> the part they are addressed to. FCT is measured when the sender holds the ACK of the last
//! byte. Scheme hooks run through `sender_hook` / `receiver_hook`, and the control packets they
//! ask for leave right after them.

use crate::cc::{
    AckInfo, CcParams, CtrlInfo, DataInfo, HostRxStates, InboundFlow, ReceiverStates, Rx, RxHost,
    SenderStates, Tx,
};
use crate::engine::Simulation;
use crate::net::{Mark, Packet, PktKind, ACK_REQ, NO_SACK, SACK_TRIMMED};
use crate::sim::Event;

impl Simulation {
    pub(crate) fn flow_start(&mut self, fid: u32) {
        let now = self.now_ps;
        let f = &mut self.flows[fid as usize];
        f.started = true;
        f.ctl.next_avail_ps = now;
        self.sender_hook(fid, |cc, s, tx| cc.on_start(s, tx));
        self.flush_flow_ctrl(true);
        self.activate(fid);
    }

    /// Run a sender hook of flow `fid`.
    #[inline]
    pub(crate) fn sender_hook(
        &mut self,
        fid: u32,
        hook: impl FnOnce(&CcParams, &mut SenderStates, &mut Tx),
    ) {
        let i = self.flows.slot(fid);
        let f = self.flows.at_mut(i);
        let rng = &mut self.streams.senders[i];
        let mut tx = Tx::new(
            self.now_ps,
            (fid, i as u32),
            f,
            &mut self.q,
            &mut self.ctrl_out,
            rng,
        );
        hook(&self.cc, &mut self.senders, &mut tx);
    }

    /// Run a receiver hook of flow `fid` (with its receiving host's state).
    pub(crate) fn receiver_hook(
        &mut self,
        fid: u32,
        hook: impl FnOnce(&CcParams, &mut ReceiverStates, &mut HostRxStates, &mut Rx),
    ) {
        let i = self.flows.slot(fid);
        let f = self.flows.at_mut(i);
        let h = &mut self.hosts[f.dst as usize];
        let host = RxHost {
            timers: &mut h.timers,
            inbound: &h.inbound,
        };
        let rng = &mut self.streams.receivers[i];
        let id = (fid, i as u32);
        let mut rx =
            Rx::new(self.now_ps, id, f, &mut self.q, &mut self.ctrl_out, rng).with_host(host);
        hook(&self.cc, &mut self.receivers, &mut self.host_rx, &mut rx);
    }

    /// Keep flow `fid` in its receiving host's inbound list (`Settings::inbound_flows`): listed
    /// at its first packet there, its bytes received kept current, removed once all arrived.
    fn update_inbound(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        let inbound = &mut self.hosts[f.dst as usize].inbound;
        let size = f.rx_size_bytes();
        let done = f.rcv_nxt >= size;
        match (f.rx_slot, done) {
            (u32::MAX, true) => {}
            (u32::MAX, false) => {
                f.rx_slot = inbound.len() as u32;
                inbound.push(InboundFlow {
                    flow: fid,
                    src: f.src,
                    size_bytes: size,
                    received_bytes: f.rcv_nxt,
                });
            }
            (slot, false) => {
                let e = &mut inbound[slot as usize];
                (e.size_bytes, e.received_bytes) = (size, f.rcv_nxt);
            }
            (slot, true) => {
                f.rx_slot = u32::MAX;
                inbound.swap_remove(slot as usize);
                if let Some(moved) = inbound.get(slot as usize) {
                    self.flows[moved.flow as usize].rx_slot = slot;
                }
            }
        }
    }

    /// Send the control packets a sender or receiver hook asked for, from the host at the
    /// other end of their destination; `kick` starts the NIC (false inside NIC dequeue).
    pub(crate) fn flush_flow_ctrl(&mut self, kick: bool) {
        let msgs = std::mem::take(&mut self.ctrl_out);
        for m in &msgs {
            let f = &self.flows[m.flow as usize];
            let (from, to) = if m.to_sender {
                (f.dst, f.src)
            } else {
                (f.src, f.dst)
            };
            let size = self.s.ctrl_size(m.code);
            let mut c = Packet::new(PktKind::Ctrl, m.flow, to, size, self.s.ack_priority);
            (c.sub, c.hdr, c.mark, c.ts_ps) = (m.code, m.hdr, m.mark, m.ts_ps);
            self.ports[self.hosts[from as usize].port as usize].ctrl_sent += 1;
            self.send_control(from, c, kick);
        }
        self.ctrl_out = msgs;
        self.ctrl_out.clear();
    }

    fn activate(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        if !f.in_active && f.has_data() {
            f.in_active = true;
            let h = &mut self.hosts[f.src as usize];
            h.active.push(fid);
            let port = h.port;
            self.port_kick(port);
        }
    }

    /// Restart flow `fid`'s NIC: put the flow back among the active ones, or kick the port.
    pub(crate) fn wake_sender(&mut self, fid: u32) {
        let f = &self.flows[fid as usize];
        if !f.in_active && f.has_data() {
            self.activate(fid);
        } else {
            let port = self.hosts[f.src as usize].port;
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
        if self.part.is_some() {
            self.tell_receiver_size(fid);
        }
        let f = &mut self.flows[fid as usize];
        if f.in_active && !f.has_data() {
            f.in_active = false;
            let h = &mut self.hosts[f.src as usize];
            h.active.retain(|&x| x != fid);
            h.rr %= h.active.len().max(1);
        }
        if f.snd_una >= f.size_bytes {
            self.finish_flow(fid);
        }
    }

    /// The receiver of long-lived flow `fid` hears that it stopped, one propagation delay of
    /// its path after the stop: from now on it knows the final size (in one simulation and
    /// in any partitioning alike; the size itself reached a receiver in another partition
    /// with the window's crossings, `tell_receiver_size`).
    pub(crate) fn stop_heard(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        f.stop_heard = true;
        if f.rx_slot != u32::MAX {
            self.update_inbound(fid);
        }
    }

    fn finish_flow(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        f.finished = true;
        f.finish_ps = self.now_ps;
        for e in &mut f.tx_timers {
            *e = e.wrapping_add(1);
        }
        f.loss.rto_deadline_ps = u64::MAX;
        self.sender_hook(fid, |cc, s, tx| cc.on_finish(s, tx));
        self.flush_flow_ctrl(true);
        self.flows_open -= 1;
    }

    /// A packet reached a host. Inlined into the run loop's arrival dispatch, its one caller
    /// (LLVM stopped doing so by itself as the scheme registry grew: 3% more instructions).
    #[inline(always)]
    pub(crate) fn host_receive(&mut self, pkt: u32) {
        // The slot is freed first so a reply can reuse it; the INT side table keeps this
        // packet's records until a new packet is written there.
        let p = self.pkts[pkt];
        self.pkts.free(pkt);
        match p.kind {
            PktKind::Data => self.receive_data(&p, pkt),
            PktKind::Ack | PktKind::Nack => self.receive_ack(&p, pkt),
            PktKind::Ctrl => self.receive_ctrl(&p),
            PktKind::Pause | PktKind::Resume => unreachable!("PFC frames are handled before"),
        }
    }

    /// An ACK or NACK from flow `fid`'s receiver, echoing data packet `data`.
    fn reply(&self, fid: u32, kind: PktKind, seq: u64, mark: Mark, ts_ps: u64) -> Packet {
        let f = &self.flows[fid as usize];
        // Switches queue it in `switch_ack_priority`; the NIC in `ack_priority` (send_control).
        let mut a = Packet::new(
            kind,
            fid,
            f.src,
            self.s.ack_bytes,
            self.s.switch_ack_priority,
        );
        (a.seq, a.mark, a.ts_ps) = (seq, mark, ts_ps);
        if self.s.has_receiver {
            a.hdr = self.cc.ack_hdr(&self.receivers, self.flows.slot(fid));
        }
        a
    }

    /// Send an ACK or NACK for data packet `data`, carrying its INT records. The ACK usually
    /// takes the slot the data packet just freed, and with it the records, so nothing is copied.
    fn send_ack(&mut self, host: u32, mut ack: Packet, data: &Packet, data_pkt: u32) {
        if !self.s.int_enabled {
            self.send_control(host, ack, true);
            return;
        }
        ack.sub = data.sub;
        // Usually the ACK takes the data packet's freed slot and its records as they are.
        // Otherwise they are copied: sending from a host stamps no INT, so they are intact.
        let id = self.send_control(host, ack, true);
        if id != data_pkt {
            self.int_slot(id);
            let from = data_pkt as usize;
            self.ints.copy_within(from..from + 1, id as usize);
        }
    }

    /// The INT records of packet `pkt`, growing the side table to the arena's size.
    fn int_slot(&mut self, pkt: u32) -> &mut crate::net::IntStack {
        let i = pkt as usize;
        if i >= self.ints.len() {
            self.ints.resize(
                self.pkts.capacity_used().max(i + 1),
                crate::net::IntStack::default(),
            );
        }
        &mut self.ints[i]
    }

    fn receive_data(&mut self, p: &Packet, pkt: u32) {
        let now = self.now_ps;
        let fid = p.flow;
        let i = self.flows.slot(fid);
        let f = self.flows.at_mut(i);
        let dst = f.dst;
        let trimmed = p.payload_bytes == 0;
        let in_order = !trimmed && p.seq == f.rcv_nxt;
        if in_order {
            f.rcv_nxt += p.payload_bytes as u64;
            f.rx_since_ack += 1;
            f.mark_since_ack = f.mark_since_ack.merge(p.mark);
            self.metrics.delivered_bytes += p.payload_bytes as u64;
            if f.ooo.is_some() {
                self.deliver_held(fid);
            }
            let f = self.flows.at(i);
            if !self.deps.is_empty() && !f.long_lived && f.rcv_nxt >= f.size_bytes {
                self.flow_arrived(fid);
            }
        }
        if self.s.inbound_flows {
            self.update_inbound(fid);
        }
        if self.s.has_receiver {
            let info = DataInfo {
                seq: p.seq,
                payload_bytes: p.payload_bytes as u32,
                size_bytes: p.size_bytes as u32,
                mark: p.mark,
                sent_ps: p.ts_ps,
                hdr: p.hdr,
                in_order,
                trimmed,
            };
            self.receiver_hook(fid, |cc, s, h, rx| cc.on_data(s, h, rx, &info));
        }
        let f = self.flows.at_mut(i);
        let rcv_nxt = f.rcv_nxt;
        let idx = (p.seq / self.s.mtu_payload_bytes as u64) as u32;
        let reply = if in_order {
            let last = !f.long_lived && f.rcv_nxt >= f.size_bytes;
            if f.rx_since_ack >= self.s.ack_every_packets || last || p.aux & ACK_REQ != 0 {
                let mark = f.mark_since_ack;
                f.rx_since_ack = 0;
                f.mark_since_ack = Mark::None;
                f.ack_due_ps = u64::MAX;
                Some(self.reply(fid, PktKind::Ack, rcv_nxt, mark, p.ts_ps))
            } else {
                f.last_data_ts_ps = p.ts_ps;
                if f.ack_due_ps == u64::MAX {
                    f.ack_due_ps = now + self.s.ack_timer_ps;
                    self.q.push(f.ack_due_ps, Event::AckTimer { flow: fid });
                }
                None
            }
        } else if trimmed {
            let mut nack = self.reply(fid, PktKind::Nack, rcv_nxt, p.mark, p.ts_ps);
            nack.aux = idx | SACK_TRIMMED;
            Some(nack)
        } else if p.seq > rcv_nxt {
            if let Some(ooo) = &mut f.ooo {
                // Selective repeat: keep it and NACK with its index (a duplicate: ACK).
                let dup = ooo.held.contains(idx as u64);
                ooo.held.insert(idx as u64);
                let kind = if dup { PktKind::Ack } else { PktKind::Nack };
                let mut r = self.reply(fid, kind, rcv_nxt, p.mark, p.ts_ps);
                r.aux = idx;
                Some(r)
            } else if now >= f.nack_ok_ps || f.last_nack_seq != rcv_nxt {
                f.nack_ok_ps = now + self.s.nack_interval_ps;
                f.last_nack_seq = rcv_nxt;
                Some(self.reply(fid, PktKind::Nack, rcv_nxt, p.mark, p.ts_ps))
            } else {
                None
            }
        } else {
            // Duplicate after go-back-N: re-acknowledge what we have.
            Some(self.reply(fid, PktKind::Ack, rcv_nxt, Mark::None, p.ts_ps))
        };
        if let Some(r) = reply {
            self.send_ack(dst, r, p, pkt);
        }
        if !self.ctrl_out.is_empty() {
            self.flush_flow_ctrl(true);
        }
    }

    /// The ACK timer of flow `fid` fired: acknowledge what coalescing still holds back. The ACK
    /// echoes the last packet's send time but carries no INT records (schemes that need them
    /// skip such an ACK).
    pub(crate) fn ack_timer_fired(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        if f.ack_due_ps != self.now_ps {
            return;
        }
        f.ack_due_ps = u64::MAX;
        if f.rx_since_ack == 0 {
            return;
        }
        let (mark, rcv_nxt, dst, ts_ps) = (f.mark_since_ack, f.rcv_nxt, f.dst, f.last_data_ts_ps);
        (f.rx_since_ack, f.mark_since_ack) = (0, Mark::None);
        let ack = self.reply(fid, PktKind::Ack, rcv_nxt, mark, ts_ps);
        self.send_control(dst, ack, true);
        if !self.ctrl_out.is_empty() {
            self.flush_flow_ctrl(true);
        }
    }

    /// Selective repeat: move the in-order point over packets held beyond the old gap.
    fn deliver_held(&mut self, fid: u32) {
        let mtu = self.s.mtu_payload_bytes as u64;
        let f = &mut self.flows[fid as usize];
        let ooo = f.ooo.as_mut().expect("selective repeat");
        loop {
            let idx = f.rcv_nxt / mtu;
            if !f.rcv_nxt.is_multiple_of(mtu) || !ooo.held.contains(idx) {
                break;
            }
            let len = mtu.min(f.size_bytes - f.rcv_nxt);
            f.rcv_nxt += len;
            f.rx_since_ack += 1;
            self.metrics.delivered_bytes += len;
        }
        ooo.held.advance_to(f.rcv_nxt / mtu);
    }

    fn receive_ack(&mut self, p: &Packet, pkt: u32) {
        let now = self.now_ps;
        let fid = p.flow;
        let i = self.flows.slot(fid);
        let f = self.flows.at_mut(i);
        if f.finished {
            return;
        }
        let newly = p.seq.saturating_sub(f.snd_una);
        if newly > 0 {
            f.snd_una = p.seq;
        }
        let nack = p.kind == PktKind::Nack;
        if self.s.own_recovery {
            self.skip_acked_resends(fid);
        } else if self.s.drop.is_some() {
            self.recover(fid, p, newly);
        } else if nack && f.snd_nxt > p.seq {
            f.snd_nxt = p.seq; // go-back-N
        }
        // A go-back (a NACK, a timeout) can point below what a later ACK has since covered:
        // never resend what the receiver has, never count negative bytes in flight.
        let f = self.flows.at_mut(i);
        f.snd_nxt = f.snd_nxt.max(f.snd_una);
        let int = if self.s.int_enabled && p.sub > 0 {
            &self.ints[pkt as usize].hops[..p.sub as usize]
        } else {
            &[]
        };
        let ack = AckInfo {
            nack,
            ack_seq: p.seq,
            newly_acked_bytes: newly,
            mark: p.mark,
            rtt_ps: now - p.ts_ps,
            hdr: p.hdr,
            int,
            sack_seq: (p.aux != NO_SACK)
                .then(|| (p.aux & !SACK_TRIMMED) as u64 * self.s.mtu_payload_bytes as u64),
            trimmed: p.aux != NO_SACK && p.aux & SACK_TRIMMED != 0,
        };
        let f = self.flows.at_mut(i);
        let rng = &mut self.streams.senders[i];
        let mut tx = Tx::new(
            now,
            (fid, i as u32),
            f,
            &mut self.q,
            &mut self.ctrl_out,
            rng,
        );
        self.cc.on_ack(&mut self.senders, &mut tx, &ack);
        self.after_sender_feedback(fid);
    }

    /// After an ACK or a control packet reached the sender: send what the hook asked for,
    /// finish the flow if all is acked, else restart its NIC.
    fn after_sender_feedback(&mut self, fid: u32) {
        if !self.ctrl_out.is_empty() {
            self.flush_flow_ctrl(true);
        }
        let f = &self.flows[fid as usize];
        if f.snd_una >= f.size_bytes {
            self.finish_flow(fid);
            return;
        }
        self.wake_sender(fid);
    }

    fn receive_ctrl(&mut self, p: &Packet) {
        let fid = p.flow;
        let c = CtrlInfo {
            code: p.sub,
            hdr: p.hdr,
            mark: p.mark,
            sent_ps: p.ts_ps,
        };
        let f = &self.flows[fid as usize];
        if p.dst_host != f.src {
            if self.s.inbound_flows {
                self.update_inbound(fid);
            }
            self.receiver_hook(fid, |cc, s, h, rx| cc.on_receiver_ctrl(s, h, rx, &c));
            if !self.ctrl_out.is_empty() {
                self.flush_flow_ctrl(true);
            }
            return;
        }
        if f.finished || self.unresponsive.get(fid as usize) == Some(&true) {
            return;
        }
        self.sender_hook(fid, |cc, s, tx| cc.on_ctrl(s, tx, &c));
        self.after_sender_feedback(fid);
    }

    /// A sender timer fired: restart the NIC if the hook opened a gate that may let the flow
    /// send sooner (window, halt, credit, pacing clock).
    pub(crate) fn sender_timer(&mut self, fid: u32, kind: u8) {
        let f = &self.flows[fid as usize];
        let c = &f.ctl;
        let before = (
            c.window_bytes,
            c.hold_until_ps,
            c.credit_bytes,
            c.next_avail_ps,
            f.rtx_seq,
        );
        self.sender_hook(fid, |cc, s, tx| cc.on_sender_timer(s, tx, kind));
        let f = &self.flows[fid as usize];
        let c = &f.ctl;
        if c.window_bytes > before.0
            || c.hold_until_ps < before.1
            || c.credit_bytes > before.2
            || c.next_avail_ps < before.3
            || f.rtx_seq != before.4
        {
            self.wake_sender(fid);
        }
        if !self.ctrl_out.is_empty() {
            self.flush_flow_ctrl(true);
        }
    }

    /// Schedule the start (and stop) events of every flow.
    pub(crate) fn schedule_flows(&mut self) {
        for (i, f) in self.flows.iter().enumerate() {
            if !self.deps.waits(i) {
                self.q.push(f.start_ps, Event::FlowStart { flow: i as u32 });
            }
            if f.long_lived && f.stop_ps != u64::MAX {
                self.q.push(f.stop_ps, Event::FlowStop { flow: i as u32 });
            }
        }
    }
}
