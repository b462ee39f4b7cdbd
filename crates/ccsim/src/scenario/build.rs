//! Build a `Simulation` from a resolved scenario: ports from links, routes, buffer and PFC
//! headroom, ECN thresholds, flows from explicit lists and generators (with their ideal FCT),
//! probes, and the initial events.

use super::{Scenario, ScenarioError};
use crate::cc::qcn::QcnCp;
use crate::cc::{CcParams, SwitchFeature};
use crate::metrics::{Metrics, Results};
use crate::net::{Arena, Port};
use crate::sim::rng::{mix64, stream};
use crate::sim::{tx_time_ps, EventQueue, Rng};
use crate::topo::{Layer, Routes, Topology};
use crate::transport::Flow;
use crate::workload::{generate, FlowSpec};
use crate::world::{HostState, Settings, Simulation, SwitchState};

impl Scenario {
    /// Build the simulation; every inconsistency is reported as a `ScenarioError`.
    pub fn build(&self) -> Result<Simulation, ScenarioError> {
        let c = &self.cfg;
        let topo = Topology::build(&c.topology, &self.base_dir)?;
        let n = topo.nodes.len();

        let mut switch_index = vec![u32::MAX; n];
        let mut host_index = vec![u32::MAX; n];
        let mut nsw = 0u32;
        for (hid, &node) in topo.hosts.iter().enumerate() {
            host_index[node as usize] = hid as u32;
        }
        for (i, node) in topo.nodes.iter().enumerate() {
            if node.layer != Layer::Host {
                switch_index[i] = nsw;
                nsw += 1;
            }
        }

        // Two ports per link.
        let mut ports = Vec::with_capacity(topo.links.len() * 2);
        let mut node_ports: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for l in &topo.links {
            let (pa, pb) = (ports.len() as u32, ports.len() as u32 + 1);
            for (node, peer) in [(l.a, pb), (l.b, pa)] {
                ports.push(Port::new(
                    node,
                    peer,
                    l.rate_bps,
                    l.delay_ps,
                    host_index[node as usize] != u32::MAX,
                ));
            }
            node_ports[l.a as usize].push((pa, l.b));
            node_ports[l.b as usize].push((pb, l.a));
        }
        let routes = Routes::compute(&topo, &node_ports, &switch_index)?;

        let f = &c.fabric;
        let h = &c.host;
        if f.data_priority == 0 || f.data_priority > 7 {
            return Err(ScenarioError::new(
                "fabric.data_priority",
                "must be 1..7 (0 is reserved for control packets)",
            ));
        }
        let ack_priority = h.ack_priority.expect("resolved");
        if ack_priority > 7 {
            return Err(ScenarioError::new("host.ack_priority", "must be 0..7"));
        }
        if h.mtu_payload_bytes == 0 {
            return Err(ScenarioError::new("host.mtu_payload_bytes", "must be > 0"));
        }
        if h.window.is_some_and(|w| w.0 == 0) {
            return Err(ScenarioError::new(
                "host.window",
                "must be > 0 bytes (omit it for no window)",
            ));
        }
        if h.ack_every_packets == 0 {
            return Err(ScenarioError::new("host.ack_every_packets", "must be >= 1"));
        }
        if !(f.pfc.alpha > 0.0 && f.pfc.alpha.is_finite()) {
            return Err(ScenarioError::new("fabric.pfc.alpha", "must be > 0"));
        }
        let mtu_wire = (h.mtu_payload_bytes + h.header_bytes) as u64;

        // Buffer: headroom per switch port, the rest is the shared pool.
        let mut switches: Vec<SwitchState> = Vec::with_capacity(nsw as usize);
        for (i, node) in topo.nodes.iter().enumerate() {
            if switch_index[i] == u32::MAX {
                continue;
            }
            let mut hdrm_total = 0u64;
            for &(pid, _) in &node_ports[i] {
                let p = &mut ports[pid as usize];
                let bdp = (p.rate_bps as u128 * p.delay_ps as u128
                    / 8
                    / crate::sim::PS_PER_S as u128) as u64;
                p.hdrm_reserve_bytes = f.pfc.headroom.map_or(3 * bdp + 2 * mtu_wire, |s| s.0);
                hdrm_total += p.hdrm_reserve_bytes;
            }
            if f.pfc.enabled && hdrm_total >= f.buffer.0 {
                return Err(ScenarioError::new(
                    "fabric.buffer",
                    format!("switch `{}` needs {hdrm_total} bytes of PFC headroom, more than its {}-byte buffer; raise fabric.buffer or lower fabric.pfc.headroom", node.name, f.buffer.0),
                ));
            }
            let pool = if f.pfc.enabled {
                f.buffer.0 - hdrm_total
            } else {
                f.buffer.0
            };
            if f.pfc.enabled && f.pfc.mode == super::config::PfcMode::Static && f.pfc.xoff.0 > pool
            {
                return Err(ScenarioError::new("fabric.pfc.xoff", format!("{} bytes exceeds the shared pool of switch `{}` ({pool} bytes after headroom)", f.pfc.xoff.0, node.name)));
            }
            if f.pfc.enabled
                && f.pfc.xoff.0 <= f.pfc.resume_offset.0
                && f.pfc.mode == super::config::PfcMode::Static
            {
                return Err(ScenarioError::new(
                    "fabric.pfc.resume_offset",
                    "must be smaller than fabric.pfc.xoff",
                ));
            }
            switches.push(SwitchState {
                node: i as u32,
                shared_pool_bytes: pool,
                shared_used_bytes: 0,
                ctrl_bytes: 0,
                hdrm_used_bytes: 0,
                max_used_bytes: 0,
            });
        }

        // ECN thresholds, scaled by port rate.
        let ecn = &f.ecn;
        if ecn.enabled == Some(true) {
            let (kmin, kmax, pmax, rref) = (
                ecn.kmin.unwrap().0,
                ecn.kmax.unwrap().0,
                ecn.pmax.unwrap(),
                ecn.ref_rate.unwrap().0,
            );
            if kmax < kmin {
                return Err(ScenarioError::new(
                    "fabric.ecn.kmax",
                    "must be at least fabric.ecn.kmin (equal: a step at K, as DCTCP)",
                ));
            }
            if !(0.0..=1.0).contains(&pmax) {
                return Err(ScenarioError::new("fabric.ecn.pmax", "must be in [0, 1]"));
            }
            if rref == 0 {
                return Err(ScenarioError::new("fabric.ecn.ref_rate", "must be > 0"));
            }
            for p in ports.iter_mut().filter(|p| !p.is_host) {
                let scale = |k: u64| (k as u128 * p.rate_bps as u128 / rref as u128) as u64;
                p.kmin_bytes = scale(kmin);
                p.kmax_bytes = scale(kmax).max(p.kmin_bytes + 1);
            }
        }

        let mut hosts = Vec::with_capacity(topo.hosts.len());
        for &node in &topo.hosts {
            hosts.push(HostState {
                node,
                port: node_ports[node as usize][0].0,
                active: Vec::new(),
                rr: 0,
                wake_at_ps: u64::MAX,
            });
        }
        let host_rate: Vec<u64> = hosts
            .iter()
            .map(|h| ports[h.port as usize].rate_bps)
            .collect();
        let nh = hosts.len() as u32;

        // Flows: explicit ones first, then each generator in order.
        let mut specs: Vec<FlowSpec> = Vec::new();
        for (i, fc) in c.flows.iter().enumerate() {
            let fld = |x: &str| format!("flows[{i}].{x}");
            for (name, hst) in [("src", fc.src), ("dst", fc.dst)] {
                if hst >= nh {
                    return Err(ScenarioError::new(
                        &fld(name),
                        format!("unknown host {hst}; hosts are 0..{}", nh - 1),
                    ));
                }
            }
            if fc.src == fc.dst {
                return Err(ScenarioError::new(
                    &fld("dst"),
                    "same as src; a flow needs two different hosts",
                ));
            }
            if fc.size.is_some_and(|s| s.0 == 0) {
                return Err(ScenarioError::new(
                    &fld("size"),
                    "must be > 0 bytes (omit it for a long-lived flow)",
                ));
            }
            if fc.stop.is_some_and(|t| t.0 <= fc.start.0) {
                return Err(ScenarioError::new(&fld("stop"), "must be after `start`"));
            }
            if fc.size.is_some() && fc.stop.is_some() {
                return Err(ScenarioError::new(
                    &fld("stop"),
                    "only long-lived flows (without `size`) take `stop`",
                ));
            }
            specs.push(FlowSpec {
                src: fc.src,
                dst: fc.dst,
                size_bytes: fc.size.map(|s| s.0),
                start_ps: fc.start.0,
                stop_ps: fc.stop.map(|s| s.0),
            });
        }
        let mut rng = Rng::new(c.seed, stream::WORKLOAD);
        for (i, w) in c.workload.iter().enumerate() {
            specs.extend(generate(w, i, &host_rate, &self.base_dir, &mut rng)?);
        }
        let stop_ps = c.duration.map_or(u64::MAX, |d| d.0);
        if stop_ps == 0 {
            return Err(ScenarioError::new("duration", "must be > 0"));
        }
        if specs.is_empty() && stop_ps == u64::MAX {
            return Err(ScenarioError::new("flows", "the scenario has no flows and no `duration`: add [[flows]] or a [[workload]], or set duration"));
        }
        if stop_ps == u64::MAX
            && specs
                .iter()
                .any(|s| s.size_bytes.is_none() && s.stop_ps.is_none())
        {
            return Err(ScenarioError::new(
                "duration",
                "long-lived flows without `stop` need a `duration` to end the run",
            ));
        }

        // The scheme's own header (INT, timestamp) rides on every data packet and ACK.
        let info = crate::cc::scheme(&c.cc.scheme).expect("scheme checked at load");
        let settings = Settings {
            mtu_payload_bytes: h.mtu_payload_bytes,
            header_bytes: h.header_bytes + info.extra_header_bytes,
            ack_bytes: h.ack_bytes + info.extra_header_bytes,
            ack_every_packets: h.ack_every_packets,
            nack_interval_ps: h.nack_interval.0,
            ack_priority,
            data_priority: f.data_priority,
            scheduler: f.scheduler,
            pfc_enabled: f.pfc.enabled,
            pfc_mode: f.pfc.mode,
            pfc_xoff_bytes: f.pfc.xoff.0,
            pfc_alpha: f.pfc.alpha,
            pfc_resume_offset_bytes: f.pfc.resume_offset.0,
            pfc_frame_bytes: f.pfc.frame_bytes,
            ecn_pmax: ecn.pmax.unwrap_or(0.0),
            ecmp_seed: mix64(c.seed ^ stream::ECMP),
            record_pfc_events: c.output.pfc_events,
            int_enabled: info.switch_feature == SwitchFeature::Int,
        };

        let mut sim = Simulation {
            now_ps: 0,
            q: EventQueue::default(),
            pkts: Arena::default(),
            ports,
            topo,
            switch_index,
            host_index,
            switches,
            hosts,
            routes,
            flows: Vec::with_capacity(specs.len()),
            cc: Vec::with_capacity(specs.len()),
            cc_params: self.cc_params.clone(),
            s: settings,
            marking_rng: Rng::new(c.seed, stream::MARKING),
            ints: Vec::new(),
            qcn_cp: Vec::new(),
            metrics: Metrics::default(),
            stop_ps,
            flows_open: specs.len(),
            events: 0,
            link_traversals: 0,
            fatal: None,
        };
        if let CcParams::Qcn(p) = &self.cc_params {
            sim.qcn_cp = sim
                .ports
                .iter()
                .map(|pt| QcnCp::new(p, pt.rate_bps))
                .collect();
        }
        let mut base_rtt_ps = 0;
        if sim.s.int_enabled || info.bdp_window {
            let (rtt_ps, (src, dst, switches)) = sim.longest_paths();
            if sim.s.int_enabled && switches > crate::net::MAX_INT_HOPS {
                return Err(ScenarioError::new("topology", format!(
                    "hosts {src} -> {dst} cross {switches} switches; the INT header holds {} hops: use a shallower topology for this scheme",
                    crate::net::MAX_INT_HOPS
                )));
            }
            if info.bdp_window {
                base_rtt_ps = rtt_ps;
            }
        }
        for s in &specs {
            let mut fl = Flow::new(s.src, s.dst, s.size_bytes, s.start_ps, s.stop_ps);
            fl.line_rate_bps = host_rate[s.src as usize];
            fl.mtu_payload_bytes = h.mtu_payload_bytes as u64;
            fl.base_rtt_ps = base_rtt_ps;
            fl.window_bytes = h.window.map_or(u64::MAX, |w| w.0);
            fl.ideal_fct_ps = sim.ideal_fct_ps(
                sim.flows.len() as u32,
                s.src,
                s.dst,
                s.size_bytes.unwrap_or(0),
            );
            sim.flows.push(fl);
            sim.cc.push(self.cc_params.new_state());
        }
        self.setup_probes(&mut sim)?;
        sim.schedule_flows();
        Ok(sim)
    }

    fn setup_probes(&self, sim: &mut Simulation) -> Result<(), ScenarioError> {
        let o = &self.cfg.output;
        if let Some(qc) = &o.queues {
            if qc.interval.0 == 0 {
                return Err(ScenarioError::new("output.queues.interval", "must be > 0"));
            }
            let mut ids = Vec::new();
            for (i, spec) in qc.ports.iter().enumerate() {
                if spec == "all" {
                    ids.extend(
                        (0..sim.ports.len() as u32).filter(|&p| !sim.ports[p as usize].is_host),
                    );
                    continue;
                }
                let fld = format!("output.queues.ports[{i}]");
                let (a, b) = spec.split_once("->").ok_or_else(|| ScenarioError::new(&fld, format!("`{spec}`: write a port as \"from->to\" node names, e.g. \"sw0->h3\", or \"all\"")))?;
                let na = sim
                    .topo
                    .node_by_name(a.trim())
                    .ok_or_else(|| ScenarioError::new(&fld, format!("unknown node `{a}`")))?;
                let nb = sim
                    .topo
                    .node_by_name(b.trim())
                    .ok_or_else(|| ScenarioError::new(&fld, format!("unknown node `{b}`")))?;
                let pid = (0..sim.ports.len() as u32)
                    .find(|&p| {
                        sim.ports[p as usize].node == na
                            && sim.ports[sim.ports[p as usize].peer as usize].node == nb
                    })
                    .ok_or_else(|| {
                        ScenarioError::new(&fld, format!("no link from `{a}` to `{b}`"))
                    })?;
                ids.push(pid);
            }
            sim.metrics.queue_ports = ids;
            sim.metrics.queue_interval_ps = qc.interval.0;
            sim.q.push(qc.interval.0, crate::sim::Event::SampleQueues);
        }
        if let Some(rc) = &o.rates {
            if rc.interval.0 == 0 {
                return Err(ScenarioError::new("output.rates.interval", "must be > 0"));
            }
            for (i, &f) in rc.flows.iter().enumerate() {
                if f as usize >= sim.flows.len() {
                    return Err(ScenarioError::new(
                        &format!("output.rates.flows[{i}]"),
                        format!(
                            "unknown flow {f}; flows are 0..{}",
                            sim.flows.len().saturating_sub(1)
                        ),
                    ));
                }
            }
            sim.metrics.rate_all_flows = rc.flows.is_empty();
            sim.metrics.rate_flows = rc.flows.clone();
            sim.metrics.rate_interval_ps = rc.interval.0;
            sim.q.push(rc.interval.0, crate::sim::Event::SampleRates);
        }
        Ok(())
    }

    /// Collect a finished simulation's results.
    pub fn results(&self, sim: &mut Simulation) -> Results {
        sim.results(
            &self.cfg.name,
            self.cfg.seed,
            &self.cfg.cc.scheme,
            self.resolved_toml(),
        )
    }
}

/// A route through the fabric: the egress port of every hop, and its slowest link.
struct Path {
    ports: Vec<u32>,
    bottleneck_bps: u64,
}

impl Simulation {
    /// Ideal FCT on the path ECMP gives flow `fid` (DESIGN.md): base RTT (2 x propagation +
    /// one full packet's serialization per hop) + all bytes with headers at the bottleneck rate.
    pub(crate) fn ideal_fct_ps(&self, fid: u32, src: u32, dst: u32, size: u64) -> u64 {
        let mtu = self.s.mtu_payload_bytes as u64;
        let wire = size + size.div_ceil(mtu) * self.s.header_bytes as u64;
        let path = self.path(fid, src, dst);
        self.base_rtt_ps(&path) + tx_time_ps(wire, path.bottleneck_bps)
    }

    /// The egress ports flow `fid` from `src` to `dst` crosses (ECMP choices included).
    fn path(&self, fid: u32, src: u32, dst: u32) -> Path {
        let mut path = Path {
            ports: Vec::with_capacity(8),
            bottleneck_bps: u64::MAX,
        };
        let mut pid = self.hosts[src as usize].port;
        loop {
            let p = &self.ports[pid as usize];
            path.ports.push(pid);
            path.bottleneck_bps = path.bottleneck_bps.min(p.rate_bps);
            let si = self.switch_index[self.ports[p.peer as usize].node as usize];
            if si == u32::MAX {
                return path;
            }
            pid = self.ecmp_next_hop(si, dst, fid);
        }
    }

    /// Base RTT of a path (DESIGN.md): 2 x propagation + one full packet's serialization per hop.
    fn base_rtt_ps(&self, path: &Path) -> u64 {
        let full = (self.s.mtu_payload_bytes + self.s.header_bytes) as u64;
        path.ports
            .iter()
            .map(|&pid| {
                let p = &self.ports[pid as usize];
                2 * p.delay_ps + tx_time_ps(full, p.rate_bps)
            })
            .sum()
    }

    /// Over every ordered pair of hosts, on the ECMP path of flow id 0: the longest base RTT
    /// (the HPCC simulator's `GLOBAL_T 1` window and base RTT) and the pair crossing the most
    /// switches, as (src, dst, switches).
    fn longest_paths(&self) -> (u64, (u32, u32, usize)) {
        let nh = self.hosts.len() as u32;
        let (mut rtt_ps, mut deepest) = (0, (0, 0, 0));
        for src in 0..nh {
            for dst in (0..nh).filter(|&d| d != src) {
                let path = self.path(0, src, dst);
                rtt_ps = rtt_ps.max(self.base_rtt_ps(&path));
                if path.ports.len() - 1 > deepest.2 {
                    deepest = (src, dst, path.ports.len() - 1);
                }
            }
        }
        (rtt_ps, deepest)
    }
}
