//! Loss recovery at run time (`transport::loss` holds the state): go-back-N and IRN on ACKs,
//! NACKs and retransmission timeouts, and the retransmissions a scheme asks for.

use crate::engine::Simulation;
use crate::net::{Packet, PktKind, NO_SACK, SACK_TRIMMED};
use crate::sim::Event;
use crate::transport::loss::RecoveryMode;

impl Simulation {
    /// An ACK or NACK reached flow `fid`'s sender on a lossy fabric (`snd_una` already moved by
    /// `newly` bytes): go back (go-back-N) or update the selective-repeat state, and move the
    /// retransmission timer.
    pub(crate) fn recover(&mut self, fid: u32, p: &Packet, newly: u64) {
        let mtu = self.s.mtu_payload_bytes as u64;
        let now = self.now_ps;
        let f = &mut self.flows[fid as usize];
        let nack = p.kind == PktKind::Nack;
        let mut rearm = false;
        if let Some(irn) = &mut f.loss.irn {
            irn.on_cum_ack(f.snd_una, mtu);
            if p.aux != NO_SACK {
                let idx = (p.aux & !SACK_TRIMMED) as u64;
                if p.aux & SACK_TRIMMED == 0 {
                    irn.sacked.insert(idx);
                }
                if nack {
                    irn.recover(f.snd_una, f.snd_nxt, (idx + 1) * mtu);
                }
            }
            f.rtx_seq = irn.next_rtx(f.snd_una, mtu);
        } else if nack && f.snd_nxt > p.seq {
            f.snd_nxt = p.seq; // go-back-N
        }
        if f.snd_una >= f.snd_nxt && f.rtx_seq == u64::MAX {
            f.loss.rto_deadline_ps = u64::MAX;
        } else if newly > 0 {
            rearm = true;
        }
        if rearm {
            self.flows[fid as usize].loss.rto_deadline_ps = now + self.rto_ps(fid);
        }
    }

    /// The retransmission timeout of flow `fid` now: go-back-N's `rto`, or IRN's RTO_low while
    /// at most N packets are in flight and RTO_high otherwise.
    fn rto_ps(&self, fid: u32) -> u64 {
        let r = &self.s.recovery;
        let f = &self.flows[fid as usize];
        match r.mode {
            RecoveryMode::GoBackN => r.rto.0,
            RecoveryMode::Irn => {
                let in_flight = (f.snd_nxt - f.snd_una).div_ceil(self.s.mtu_payload_bytes as u64);
                if in_flight <= r.rto_low_packets as u64 {
                    r.rto_low.0
                } else {
                    r.rto_high.0
                }
            }
        }
    }

    /// Flow `fid` sent a data packet: start the retransmission timer if it is not running.
    pub(crate) fn arm_rto(&mut self, fid: u32) {
        if self.flows[fid as usize].loss.rto_deadline_ps != u64::MAX {
            return;
        }
        let at = self.now_ps + self.rto_ps(fid);
        let l = &mut self.flows[fid as usize].loss;
        l.rto_deadline_ps = at;
        if !l.rto_pending {
            l.rto_pending = true;
            self.q.push(
                at,
                Event::Rto {
                    flow: fid,
                    epoch: l.rto_epoch,
                },
            );
        }
    }

    /// The retransmission timer of flow `fid` fired: re-arm if its deadline moved, else
    /// retransmit everything unacknowledged (IRN: everything not selectively acked). Out of
    /// line: rare, and inlined with its scheme hook it cost the run loop 2% more instructions.
    #[inline(never)]
    pub(crate) fn rto_fired(&mut self, fid: u32, epoch: u32) {
        let now = self.now_ps;
        let mtu = self.s.mtu_payload_bytes as u64;
        let f = &mut self.flows[fid as usize];
        if epoch != f.loss.rto_epoch {
            return;
        }
        f.loss.rto_pending = false;
        let deadline = f.loss.rto_deadline_ps;
        if f.finished || deadline == u64::MAX {
            return;
        }
        if now < deadline {
            f.loss.rto_pending = true;
            self.q.push(deadline, Event::Rto { flow: fid, epoch });
            return;
        }
        f.loss.timeouts += 1;
        if let Some(irn) = &mut f.loss.irn {
            irn.in_recovery = false;
            irn.recover(f.snd_una, f.snd_nxt, f.snd_nxt);
            f.rtx_seq = irn.next_rtx(f.snd_una, mtu);
        } else {
            f.snd_nxt = f.snd_una;
        }
        f.loss.rto_deadline_ps = u64::MAX;
        self.arm_rto(fid);
        self.sender_hook(fid, |cc, s, tx| cc.on_timeout(s, tx));
        self.wake_sender(fid);
        if !self.ctrl_out.is_empty() {
            self.flush_flow_ctrl(true);
        }
    }

    /// Flow `fid` just retransmitted the bytes below `after`: queue its next retransmission
    /// (IRN's next unsacked packet, or the next one the scheme asked for).
    pub(crate) fn next_retransmission(&mut self, fid: u32, after: u64) {
        let mtu = self.s.mtu_payload_bytes as u64;
        let f = &mut self.flows[fid as usize];
        if let Some(irn) = &mut f.loss.irn {
            irn.rtx_cursor = after;
            f.rtx_seq = irn.next_rtx(f.snd_una, mtu);
            return;
        }
        f.rtx_seq = u64::MAX;
        self.skip_acked_resends(fid);
    }

    /// A scheme's own recovery: drop requested resends the cumulative ACK has since covered.
    pub(crate) fn skip_acked_resends(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        let q = f.loss.resend.as_mut().expect("own recovery");
        while f.rtx_seq == u64::MAX || f.rtx_seq < f.snd_una {
            f.rtx_seq = match q.pop_front() {
                Some(seq) => seq,
                None => {
                    f.rtx_seq = u64::MAX;
                    break;
                }
            };
        }
    }
}
