//! Switch forwarding: ECMP route lookup, shared-buffer admission with per (ingress, priority)
//! and (egress, priority) accounting, PFC XOFF/XON with headroom, the egress scheduler and
//! the marking pipeline: RED/ECN marking and INT records at dequeue (as the HPCC ns-3
//! simulator's SwitchNotifyDequeue), the QCN congestion point at enqueue.
//!
//! Buffer model: `shared_pool = buffer - sum(headroom reserves)`. An arriving lossless packet is
//! charged to its ingress queue's shared bytes, or to the ingress port's headroom once the queue
//! has reached the PFC threshold (static XOFF, or alpha x free shared buffer). PAUSE goes out
//! when the queue reaches the threshold or uses headroom; RESUME when headroom is empty and the
//! queue is `resume_offset` below the threshold. Overflowing headroom or the shared pool in a
//! lossless fabric is a configuration error and stops the run.

use crate::cc::CcParams;
use crate::net::{IntHop, Packet, PktKind, MAX_INT_HOPS, NUM_PRIO};
use crate::scenario::config::{PfcMode, Scheduler};
use crate::sim::rng::mix64;
use crate::world::{SimError, Simulation};

impl Simulation {
    /// The egress port switch `si` uses for `flow` toward host `dst`: one of the equal-cost next
    /// hops, chosen by a per-flow hash (the same choice for every packet of the flow).
    #[inline]
    pub(crate) fn ecmp_next_hop(&self, si: u32, dst: u32, flow: u32) -> u32 {
        let hops = self.routes.next_hops(si, dst);
        match hops.len() {
            1 => hops[0],
            n => {
                hops[(mix64(self.s.ecmp_seed ^ ((si as u64) << 32) ^ flow as u64) % n as u64)
                    as usize]
            }
        }
    }

    #[inline]
    fn pfc_threshold(&self, si: usize) -> u64 {
        match self.s.pfc_mode {
            PfcMode::Static => self.s.pfc_xoff_bytes,
            PfcMode::Dynamic => {
                let sw = &self.switches[si];
                (self.s.pfc_alpha * (sw.shared_pool_bytes - sw.shared_used_bytes) as f64) as u64
            }
        }
    }

    /// A packet arrived at switch port `in_port`: route, admit, enqueue, maybe PAUSE.
    pub(crate) fn switch_receive(&mut self, in_port: u32, pkt: u32) {
        let node = self.ports[in_port as usize].node;
        let si = self.switch_index[node as usize];
        let p = self.pkts[pkt];
        let out = self.ecmp_next_hop(si, p.dst_host, p.flow);
        let size = p.size_bytes as u64;
        let prio = p.prio as usize;
        if prio == 0 {
            self.switches[si as usize].ctrl_bytes += size;
        } else if !self.admit(si as usize, in_port, prio, size) {
            return;
        }
        self.pkts[pkt].in_port = in_port;
        let port = &mut self.ports[out as usize];
        port.enqueue(prio, pkt, size);
        let backlog = port.backlog_bytes();
        if backlog > port.max_queue_bytes {
            port.max_queue_bytes = backlog;
        }
        let sw = &mut self.switches[si as usize];
        let used = sw.shared_used_bytes + sw.ctrl_bytes + sw.hdrm_used_bytes;
        if used > sw.max_used_bytes {
            sw.max_used_bytes = used;
        }
        if !self.qcn_cp.is_empty() && p.kind == PktKind::Data {
            self.qcn_sample(si, out, prio, p.flow);
        }
        self.port_kick(out);
    }

    /// QCN congestion point at egress `out`: maybe sample the frame just queued and send its
    /// source a feedback message (a control-priority packet routed back from this switch).
    fn qcn_sample(&mut self, si: u32, out: u32, prio: usize, flow: u32) {
        let CcParams::Qcn(p) = &self.cc_params else {
            return;
        };
        let cp = &mut self.qcn_cp[out as usize];
        if self.marking_rng.uniform() >= cp.sample_probability(p) {
            return;
        }
        let Some(fb) = cp.sample(p, self.ports[out as usize].queue_bytes[prio]) else {
            return;
        };
        let src = self.flows[flow as usize].src;
        let size = self.s.ack_bytes;
        let cnm = self.pkts.alloc(Packet {
            kind: PktKind::Cnp,
            prio: 0,
            ce: true,
            pfc_prio: 0,
            size_bytes: size,
            payload_bytes: 0,
            flow,
            dst_host: src,
            seq: fb as u64,
            ts_ps: self.now_ps,
            in_port: u32::MAX,
            int_hops: 0,
        });
        let back = self.ecmp_next_hop(si, src, flow);
        self.switches[si as usize].ctrl_bytes += size as u64;
        self.ports[back as usize].enqueue(0, cnm, size as u64);
        self.port_kick(back);
    }

    /// Charge a lossless packet to its ingress queue; send PAUSE if needed. False = run failed.
    fn admit(&mut self, si: usize, in_port: u32, prio: usize, size: u64) -> bool {
        let thresh = self.pfc_threshold(si);
        let pfc = self.s.pfc_enabled;
        let port = &mut self.ports[in_port as usize];
        if pfc && (port.ing_hdrm_bytes[prio] > 0 || port.ing_shared_bytes[prio] + size > thresh) {
            let hdrm_used: u64 = port.ing_hdrm_bytes.iter().sum();
            if hdrm_used + size > port.hdrm_reserve_bytes {
                let name = &self.topo.nodes[port.node as usize].name;
                self.fatal = Some(SimError(format!(
                    "lossless violation at {:.3} us: PFC headroom of switch `{name}` ingress port {in_port} overflowed ({} + {size} > {} bytes); raise fabric.pfc.headroom",
                    self.now_ps as f64 / 1e6, hdrm_used, port.hdrm_reserve_bytes
                )));
                return false;
            }
            port.ing_hdrm_bytes[prio] += size;
            self.switches[si].hdrm_used_bytes += size;
        } else {
            let sw = &mut self.switches[si];
            if sw.shared_used_bytes + size > sw.shared_pool_bytes {
                let name = &self.topo.nodes[port.node as usize].name;
                self.fatal = Some(SimError(if pfc {
                    format!("lossless violation at {:.3} us: shared buffer of switch `{name}` overflowed; lower fabric.pfc.xoff or raise fabric.buffer", self.now_ps as f64 / 1e6)
                } else {
                    format!("buffer of switch `{name}` overflowed with PFC disabled at {:.3} us; ccsim's lossless transport cannot recover drops yet: enable fabric.pfc or raise fabric.buffer", self.now_ps as f64 / 1e6)
                }));
                return false;
            }
            sw.shared_used_bytes += size;
            port.ing_shared_bytes[prio] += size;
        }
        let bit = 1u8 << prio;
        if pfc
            && port.pfc_sent_mask & bit == 0
            && (port.ing_hdrm_bytes[prio] > 0 || port.ing_shared_bytes[prio] >= thresh)
        {
            port.pfc_sent_mask |= bit;
            self.send_pfc(in_port, prio as u8, true);
        }
        true
    }

    /// Queue a PAUSE or RESUME for `prio` out of `port_id` (ahead of all data).
    fn send_pfc(&mut self, port_id: u32, prio: u8, pause: bool) {
        let pkt = self.pkts.alloc(Packet {
            kind: if pause {
                PktKind::Pause
            } else {
                PktKind::Resume
            },
            prio: 0,
            ce: false,
            pfc_prio: prio,
            size_bytes: self.s.pfc_frame_bytes,
            payload_bytes: 0,
            flow: u32::MAX,
            dst_host: u32::MAX,
            seq: 0,
            ts_ps: 0,
            in_port: u32::MAX,
            int_hops: 0,
        });
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

    /// Pick the next packet for switch egress port `pid` and do the dequeue-time work.
    pub(crate) fn switch_dequeue(&mut self, pid: u32) -> Option<u32> {
        let port = &mut self.ports[pid as usize];
        if port.queued_pkts == 0 {
            return None;
        }
        let ready = |p: usize, port: &crate::net::Port| {
            !port.queues[p].is_empty() && port.paused_mask & (1 << p) == 0
        };
        let mut pick = None;
        if ready(0, port) {
            pick = Some(0);
        } else {
            match self.s.scheduler {
                Scheduler::Strict => pick = (1..NUM_PRIO).find(|&p| ready(p, port)),
                Scheduler::Rr => {
                    for i in 1..NUM_PRIO {
                        let p = 1 + (port.rr_last as usize + i - 1) % (NUM_PRIO - 1);
                        if ready(p, port) {
                            pick = Some(p);
                            port.rr_last = p as u8;
                            break;
                        }
                    }
                }
            }
        }
        let prio = pick?;
        let pkt = port.queues[prio].pop_front().expect("non-empty");
        let size = self.pkts[pkt].size_bytes as u64;
        port.queue_bytes[prio] -= size;
        port.queued_pkts -= 1;
        let si = self.switch_index[port.node as usize] as usize;
        if prio == 0 {
            self.switches[si].ctrl_bytes -= size;
            return Some(pkt);
        }
        // RED/ECN on the egress queue after this packet left it (HPCC simulator order).
        if port.kmax_bytes > 0 && self.pkts[pkt].kind == PktKind::Data {
            let q = port.queue_bytes[prio];
            let mark = if q > port.kmax_bytes {
                true
            } else if q > port.kmin_bytes {
                let prob = self.s.ecn_pmax * (q - port.kmin_bytes) as f64
                    / (port.kmax_bytes - port.kmin_bytes) as f64;
                self.marking_rng.uniform() < prob
            } else {
                false
            };
            if mark {
                self.pkts[pkt].ce = true;
            }
        }
        if self.s.int_enabled
            && self.pkts[pkt].kind == PktKind::Data
            && (self.pkts[pkt].int_hops as usize) < MAX_INT_HOPS
        {
            let hop = IntHop {
                ts_ps: self.now_ps,
                tx_bytes: port.tx_bytes,
                rate_bps: port.rate_bps,
                qlen_bytes: port.backlog_bytes() as u32,
            };
            let n = self.pkts[pkt].int_hops as usize;
            self.int_slot(pkt).hops[n] = hop;
            self.pkts[pkt].int_hops += 1;
        }
        self.release(si, self.pkts[pkt].in_port, prio, size);
        Some(pkt)
    }

    /// Return a departing packet's bytes to the buffer; send RESUME if the queue drained.
    fn release(&mut self, si: usize, in_port: u32, prio: usize, size: u64) {
        let port = &mut self.ports[in_port as usize];
        let from_hdrm = port.ing_hdrm_bytes[prio].min(size);
        port.ing_hdrm_bytes[prio] -= from_hdrm;
        self.switches[si].hdrm_used_bytes -= from_hdrm;
        let rest = size - from_hdrm;
        port.ing_shared_bytes[prio] -= rest;
        self.switches[si].shared_used_bytes -= rest;
        let bit = 1u8 << prio;
        let port = &self.ports[in_port as usize];
        if port.pfc_sent_mask & bit != 0 && port.ing_hdrm_bytes[prio] == 0 {
            let shared = port.ing_shared_bytes[prio];
            let thresh = self.pfc_threshold(si);
            if shared == 0 || shared + self.s.pfc_resume_offset_bytes <= thresh {
                self.ports[in_port as usize].pfc_sent_mask &= !bit;
                self.send_pfc(in_port, prio as u8, false);
            }
        }
    }
}
