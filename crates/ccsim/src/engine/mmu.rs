//! Buffer admission at a switch: the shared pool, PFC thresholds and headroom on a lossless
//! fabric, drop-tail or dynamic-threshold drops on a lossy one, and the release that may RESUME.

use crate::engine::{SimError, Simulation};
use crate::net::config::{DropMode, PfcMode};
use crate::net::mmu::Admit;

impl Simulation {
    /// PFC XOFF threshold of the ingress queues of switch `si`'s port `in_port`.
    #[inline]
    pub(crate) fn pfc_threshold(&self, si: usize, in_port: u32) -> u64 {
        match self.s.pfc_mode {
            PfcMode::Static => self.s.pfc_xoff_bytes,
            PfcMode::Dynamic => {
                let sw = &self.switches[si];
                let alpha = self.ports[in_port as usize].pfc_alpha;
                (alpha * (sw.shared_pool_bytes - sw.shared_used_bytes) as f64) as u64
            }
        }
    }

    /// A packet past the threshold that finds its port's headroom full: an ACK goes to the
    /// pool, counted (module header); anything else is a lossless violation (false).
    #[cold]
    fn past_full_headroom(
        &mut self,
        si: usize,
        in_port: u32,
        prio: usize,
        size: u64,
        ack: bool,
    ) -> bool {
        if ack {
            self.switches[si].acks_past_headroom += 1;
            return true;
        }
        let port = &self.ports[in_port as usize];
        let name = &self.topo.nodes[port.node as usize].name;
        self.fatal = Some(SimError(format!(
            "lossless violation at {:.3} us: PFC headroom of switch `{name}` ingress port {in_port} priority {prio} overflowed ({} + {size} > {} bytes); raise fabric.pfc.headroom",
            self.now_ps as f64 / 1e6,
            port.prios[prio].ing.hdrm_bytes,
            port.hdrm_reserve_bytes
        )));
        false
    }

    /// Charge a data packet (or an ACK, `ack`) arriving through `in_port` for egress `out` to
    /// the buffer; on a lossless fabric, send PAUSE if its ingress queue passed the threshold.
    /// Inlined into `switch_receive`, on every hop (NDP's trimming calls it too, cold).
    #[inline(always)]
    pub(crate) fn admit(
        &mut self,
        si: usize,
        in_port: u32,
        out: u32,
        (prio, size, ack): (usize, u64, bool),
    ) -> Admit {
        if let Some(d) = self.s.drop {
            let sw = &self.switches[si];
            let q = &self.ports[out as usize];
            let full = match d.mode {
                DropMode::DropTail => {
                    (d.queue_packets > 0 && q.prios[prio].len() >= d.queue_packets as usize)
                        || (d.queue_bytes > 0 && q.prios[prio].queue_bytes + size > d.queue_bytes)
                        || (d.port_packets > 0
                            && q.prios.iter().map(|c| c.len()).sum::<usize>()
                                >= d.port_packets as usize)
                        || (d.port_bytes > 0 && q.backlog_bytes() + size > d.port_bytes)
                }
                DropMode::Dynamic => {
                    let free = sw.shared_pool_bytes - sw.shared_used_bytes;
                    (q.prios[prio].queue_bytes + size) as f64 > d.alpha * free as f64
                }
            };
            // Control packets (priority 0) bypass admission but occupy the same buffer.
            if full || sw.shared_used_bytes + sw.ctrl_bytes + size > sw.shared_pool_bytes {
                return Admit::Drop;
            }
            self.switches[si].shared_used_bytes += size;
            self.ports[in_port as usize].prios[prio].ing.shared_bytes += size;
            return Admit::Ok;
        }
        let thresh = self.pfc_threshold(si, in_port);
        let reserve = self.s.pfc_reserve_bytes;
        let port = &self.ports[in_port as usize];
        let ing = &port.prios[prio].ing;
        // Bytes of the queue in the shared pool with this packet.
        let shared_after = (ing.shared_bytes + size).saturating_sub(reserve);
        // Past the threshold: headroom, if it has room.
        let past = ing.hdrm_bytes > 0 || shared_after > thresh;
        let to_hdrm = past && ing.hdrm_bytes + size <= port.hdrm_reserve_bytes;
        if past && !to_hdrm && !self.past_full_headroom(si, in_port, prio, size, ack) {
            return Admit::Fatal;
        }
        let port = &mut self.ports[in_port as usize];
        let ing = &mut port.prios[prio].ing;
        if to_hdrm {
            ing.hdrm_bytes += size;
            self.switches[si].hdrm_used_bytes += size;
        } else {
            let sw = &mut self.switches[si];
            let to_pool = size.min(shared_after);
            if sw.shared_used_bytes + to_pool > sw.shared_pool_bytes {
                let name = &self.topo.nodes[port.node as usize].name;
                self.fatal = Some(SimError(format!("lossless violation at {:.3} us: shared buffer of switch `{name}` overflowed; lower fabric.pfc.xoff or raise fabric.buffer", self.now_ps as f64 / 1e6)));
                return Admit::Fatal;
            }
            sw.shared_used_bytes += to_pool;
            ing.shared_bytes += size;
        }
        let ing = &port.prios[prio].ing;
        let bit = 1u8 << prio;
        if port.pfc_sent_mask & bit == 0
            && (ing.hdrm_bytes > 0 || ing.shared_bytes.saturating_sub(reserve) >= thresh)
        {
            port.pfc_sent_mask |= bit;
            self.send_pfc(in_port, prio as u8, true);
        }
        Admit::Ok
    }

    /// Return a departing packet's bytes to the buffer; send RESUME if its ingress queue
    /// drained.
    #[inline(always)]
    pub(crate) fn release(&mut self, si: usize, in_port: u32, prio: usize, size: u64) {
        let ing = &mut self.ports[in_port as usize].prios[prio].ing;
        let from_hdrm = ing.hdrm_bytes.min(size);
        ing.hdrm_bytes -= from_hdrm;
        let rest = size - from_hdrm;
        let reserve = self.s.pfc_reserve_bytes;
        let from_pool = rest.min(ing.shared_bytes.saturating_sub(reserve));
        ing.shared_bytes -= rest;
        let sw = &mut self.switches[si];
        sw.hdrm_used_bytes -= from_hdrm;
        sw.shared_used_bytes -= from_pool;
        let bit = 1u8 << prio;
        let port = &self.ports[in_port as usize];
        let ing = &port.prios[prio].ing;
        if port.pfc_sent_mask & bit != 0 && ing.hdrm_bytes == 0 {
            let shared = ing.shared_bytes.saturating_sub(reserve);
            let thresh = self.pfc_threshold(si, in_port);
            if shared == 0 || shared + self.s.pfc_resume_offset_bytes <= thresh {
                self.ports[in_port as usize].pfc_sent_mask &= !bit;
                self.send_pfc(in_port, prio as u8, false);
            }
        }
    }

    /// Track the switch's buffer high-water mark.
    #[inline]
    pub(crate) fn note_buffer_use(&mut self, si: usize) {
        let sw = &mut self.switches[si];
        let used = sw.shared_used_bytes + sw.ctrl_bytes + sw.hdrm_used_bytes;
        if used > sw.max_used_bytes {
            sw.max_used_bytes = used;
        }
    }
}
