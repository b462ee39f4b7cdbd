//! Build a `Simulation` from a resolved scenario: ports from links, routes, buffer and PFC
//! headroom, ECN thresholds, flows from explicit lists and generators (with their ideal FCT),
//! probes, and the initial events.

use super::config::{
    cores, BaseRttBytes, FabricCfg, HostCfg, IdealFct, RecoveryMode, Threads, TxTime,
    AUTO_PARALLEL_HOSTS, CORES_ENV, DEFAULT_DATA_PRIORITY,
};
use super::{Scenario, ScenarioError};
use crate::cc::BaseRtt;
use crate::engine::parallel::{partition, window_ps, Parallel, Partitioning, Run, MAX_PARTITIONS};
use crate::engine::{DropPolicy, HostState, Settings, Simulation, Streams, Windows};
use crate::metrics::{Metrics, Results};
use crate::net::mmu::BufferState;
use crate::net::{Arena, Port};
use crate::sim::rng::{mix64, stream};
use crate::sim::{tx_time_ps, Event, EventQueue, Rng, Stream};
use crate::topo::{Layer, Routes, Topology};
use crate::transport::{Flow, Flows, PathBase};
use crate::workload::{generate, Collective, FlowSpec};

/// The fabric's ports and per-node port lists, built from the topology's links.
struct Fabric {
    switch_index: Vec<u32>,
    host_index: Vec<u32>,
    ports: Vec<Port>,
    /// Per node: (port id, peer node).
    node_ports: Vec<Vec<(u32, u32)>>,
}

impl Scenario {
    /// Build the simulation; every inconsistency is reported as a `ScenarioError`.
    pub fn build(&self) -> Result<Simulation, ScenarioError> {
        let c = &self.cfg;
        let topo = Topology::build(&c.topology, &self.base_dir)?;
        let (once, copied) = fabric_bytes(&topo);
        let fabric_bytes = once + copied;
        self.check_memory(fabric_bytes, 0)?;
        let mut fab = Self::fabric(&topo);
        let routes = Routes::compute(&topo, &fab.node_ports, &fab.switch_index)?;
        let info = crate::cc::scheme(&c.cc.scheme).expect("scheme checked at load");
        let settings = self.settings(info)?;
        let switches = self.buffers(&topo, &mut fab)?;
        self.ecn_thresholds(&mut fab.ports)?;
        let hosts: Vec<HostState> = topo
            .hosts
            .iter()
            .map(|&node| HostState {
                port: fab.node_ports[node as usize][0].0,
                active: Vec::new(),
                rr: 0,
                wake_at_ps: u64::MAX,
                timers: Default::default(),
                inbound: Vec::new(),
            })
            .collect();
        let host_rate: Vec<u64> = hosts
            .iter()
            .map(|h| fab.ports[h.port as usize].rate_bps)
            .collect();
        self.check_min_rate(&host_rate)?;
        let (specs, collectives) = self.flow_specs(&host_rate)?;
        self.check_memory(fabric_bytes, specs.len())?;
        let stop_ps = c.duration.map_or(u64::MAX, |d| d.0);

        let deadlock = crate::net::pfc::DeadlockDetector {
            after_ps: if c.fabric.pfc.enabled {
                c.fabric.pfc.deadlock_after().0
            } else {
                0
            },
            switch_ports: topo
                .nodes
                .iter()
                .enumerate()
                .filter(|&(_, n)| n.layer != Layer::Host)
                .map(|(i, _)| fab.node_ports[i].iter().map(|&(p, _)| p).collect())
                .collect(),
            ..Default::default()
        };
        let cc = &self.cc_params;
        let sw_parts = cc.new_switches(&fab.ports);
        let port_timers = vec![Default::default(); sw_parts.len()];
        let streams = Streams {
            ports: Stream::each(c.seed, stream::MARKING, fab.ports.len()),
            senders: Stream::each(c.seed, stream::SENDER, specs.len()),
            receivers: Stream::each(c.seed, stream::RECEIVER, specs.len()),
            hosts: Stream::each(c.seed, stream::HOST, hosts.len()),
        };
        let windows = Windows::new(window_ps(&topo, &fab.ports, deadlock.after_ps));
        let mut sim = Simulation {
            now_ps: 0,
            q: EventQueue::default(),
            pkts: Arena::default(),
            ports: fab.ports,
            topo: std::sync::Arc::new(topo),
            switch_index: fab.switch_index,
            host_index: fab.host_index,
            switches,
            host_rx: cc.new_hosts(hosts.len()),
            hosts,
            routes: std::sync::Arc::new(routes),
            flows: Flows::with_capacity(specs.len()),
            flow_ends: std::sync::Arc::from([]),
            cc: cc.clone(),
            // One per flow: `add_flows` adds a flow per spec, or fails.
            senders: cc.new_senders(specs.len()),
            receivers: cc.new_receivers(specs.len()),
            sw_parts,
            port_timers,
            ctrl_out: Vec::new(),
            s: settings,
            streams,
            windows,
            ints: Vec::new(),
            cut_ports: Vec::new(),
            metrics: Metrics::default(),
            stop_ps,
            flows_open: specs.len(),
            events: 0,
            link_traversals: 0,
            fatal: None,
            warnings: Vec::new(),
            estimated_events: None,
            deadlock,
            watchdog: Default::default(),
            unresponsive: Vec::new(),
            deps: Default::default(),
            collectives: Vec::new(),
            part: None,
        };
        self.add_flows(&mut sim, info, &specs, &host_rate)?;
        self.set_first_windows(&mut sim, info)?;
        sim.deps = crate::engine::deps::Deps::new(&specs);
        sim.collectives = collectives;
        if specs.iter().any(|f| !f.responsive) {
            sim.unresponsive = specs.iter().map(|f| !f.responsive).collect();
            // With neither a receiver part nor a switch part, nothing sends a sender a
            // control packet to ignore.
            if !cc.has_receiver() && !cc.has_switch() {
                sim.warnings.push(format!(
                    "workload.responsive: {} sends its senders no control packets (it has no receiver or switch part), so unresponsive senders run exactly as responsive ones; drop responsive, or pick a scheme whose receivers grant, credit or pull",
                    c.cc.scheme
                ));
            }
        }
        let late = specs.iter().filter(|f| f.start_ps >= stop_ps).count();
        if late > 0 {
            sim.warnings.push(format!(
                "flows: {late} of {} start at or after `duration` ({}) and never run; start them earlier or lengthen duration",
                specs.len(),
                crate::sim::fmt_time(stop_ps)
            ));
        }
        self.warn_extremes(&mut sim, stop_ps);
        self.setup_probes(&mut sim)?;
        // A stall is a wait past `stall_after` and past 4 packet times of the slowest flow (a
        // flow rate-limited to 50 kb/s delivers a packet every 168 ms, and is not stalled).
        let packet_bytes = (sim.s.mtu_payload_bytes + sim.s.header_bytes) as u64;
        let slowest_packet_ps = sim
            .flows
            .iter()
            .filter(|f| f.line_rate_bps > 0)
            .map(|f| wire_ps(packet_bytes, f.line_rate_bps))
            .max()
            .unwrap_or(0);
        sim.watchdog.after_ps = match c.host.stall_after.0 {
            0 => 0,
            after => after.max(slowest_packet_ps.saturating_mul(4)),
        };
        if sim.watchdog.after_ps > 0 && !sim.flows.is_empty() {
            sim.schedule_progress_check(sim.watchdog.after_ps);
        }
        sim.schedule_flows();
        Ok(sim)
    }

    /// Node indices and two ports per link.
    fn fabric(topo: &Topology) -> Fabric {
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
        Fabric {
            switch_index,
            host_index,
            ports,
            node_ports,
        }
    }

    /// Checked host and fabric settings the handlers use on the hot path.
    fn settings(&self, info: &crate::cc::SchemeInfo) -> Result<Settings, ScenarioError> {
        let c = &self.cfg;
        let (f, h) = (&c.fabric, &c.host);
        let (ack_priority, switch_ack_priority) = check_priorities(f, h, info)?;
        check_packets(f, h, info)?;
        let classes = &f.priority_by_size;
        let drop = f.loss.as_ref().map(|l| DropPolicy {
            mode: l.mode,
            queue_packets: l.queue_packets.unwrap_or(0),
            queue_bytes: l.queue_bytes.map_or(0, |b| b.0),
            alpha: l.alpha.unwrap_or(0.0),
            port_packets: l.port_packets.unwrap_or(0),
            port_bytes: l.port_bytes.map_or(0, |b| b.0),
            ctrl_packets: l.ctrl_packets.unwrap_or(0),
        });
        // The scheme's own header (INT, timestamp) rides on every data packet and ACK.
        Ok(Settings {
            mtu_payload_bytes: h.mtu_payload_bytes,
            header_bytes: h.header_bytes + info.header_bytes,
            ack_bytes: h.ack_bytes + info.header_bytes,
            base_rtt_bytes: match h.base_rtt_bytes.expect("resolved") {
                BaseRttBytes::FullPacket => {
                    h.mtu_payload_bytes + h.header_bytes + info.header_bytes
                }
                BaseRttBytes::Payload => h.mtu_payload_bytes,
            },
            ack_every_packets: h.ack_every_packets,
            nack_interval_ps: h.nack_interval.0,
            ack_timer_ps: h.ack_timer.0,
            ack_priority,
            switch_ack_priority,
            tx_floor_ns: f.tx_time == Some(TxTime::FloorNs),
            data_priority: f.data_priority.unwrap_or(DEFAULT_DATA_PRIORITY),
            scheduler: f.scheduler,
            hdr_ratio: if info.trim {
                (f.loss.as_ref().and_then(|l| l.header_turns))
                    .unwrap_or(crate::net::sched::HDR_RATIO)
            } else {
                0
            },
            pfc_enabled: f.pfc.enabled,
            pfc_mode: f.pfc.mode(),
            pfc_xoff_bytes: f.pfc.xoff().0,
            pfc_reserve_bytes: f.pfc.reserve.map_or(0, |r| r.0),
            pfc_resume_offset_bytes: f.pfc.resume_offset().0,
            pfc_frame_bytes: f.pfc.frame_bytes(),
            ecn_pmax: f.ecn.pmax.unwrap_or(0.0),
            ecmp_seed: mix64(c.seed ^ stream::ECMP),
            ecmp_symmetric: f.ecmp_symmetric || info.symmetric_paths,
            record_pfc_events: c.output.pfc_events,
            int_enabled: info.int,
            has_receiver: self.cc_params.has_receiver(),
            prio_per_packet: info.prio_per_packet || !classes.is_empty(),
            sender_srpt: info.sender_srpt,
            ctrl_queue: info.ctrl_queue.map(|q| match q.share_den {
                0 => {
                    let ctrl = info
                        .ctrl_bytes
                        .iter()
                        .find(|c| c.0 == q.code)
                        .map_or(h.ack_bytes + info.header_bytes, |c| c.1);
                    let data = h.mtu_payload_bytes + h.header_bytes + info.header_bytes;
                    crate::cc::CtrlQueue {
                        share_num: ctrl,
                        share_den: ctrl + data,
                        ..q
                    }
                }
                _ => q,
            }),
            drop,
            trim: info.trim,
            recovery: h.recovery.clone().unwrap_or_default(),
            own_recovery: info.own_recovery,
            path_per_packet: info.path_per_packet,
            spray_ctrl: info.spray_ctrl,
            inbound_flows: info.inbound_flows,
            switch_sees_ctrl: info.switch_sees_ctrl,
            ctrl_bytes: info.ctrl_bytes,
        })
    }

    /// Per switch: PFC headroom for each port (lossless), the rest is the shared pool.
    fn buffers(
        &self,
        topo: &Topology,
        fab: &mut Fabric,
    ) -> Result<Vec<BufferState>, ScenarioError> {
        let (f, h) = (&self.cfg.fabric, &self.cfg.host);
        let mtu_wire = (h.mtu_payload_bytes + h.header_bytes) as u64;
        let (alpha, per_rate) = (
            f.pfc.alpha.unwrap_or(0.0),
            f.pfc.alpha_per_rate == Some(true),
        );
        // The simulator's NIC rate: the first host's link.
        let host_bps = topo.hosts.first().map_or(0, |&h| {
            fab.ports[fab.node_ports[h as usize][0].0 as usize].rate_bps
        });
        if f.pfc.max_t_on.is_some_and(|t| t.0 == 0) {
            return Err(ScenarioError::new(
                "fabric.pfc.max_t_on",
                "must be > 0 (e.g. \"24us\"), or unset to derive it per port",
            ));
        }
        let reserve = f.pfc.reserve.map_or(0, |r| r.0);
        let hdrm_mtus = f.pfc.headroom_mtus.unwrap_or(0) as u64;
        let lossless_classes = f.priority_by_size.len() as u64 + 1;
        let mut switches = Vec::new();
        for (i, node) in topo.nodes.iter().enumerate() {
            if fab.switch_index[i] == u32::MAX {
                continue;
            }
            let mut hdrm_total = 0u64;
            for &(pid, _) in &fab.node_ports[i] {
                let p = &mut fab.ports[pid as usize];
                let bdp = (p.rate_bps as u128 * p.delay_ps as u128
                    / 8
                    / crate::sim::PS_PER_S as u128) as u64;
                p.hdrm_reserve_bytes = f
                    .pfc
                    .headroom
                    .map_or(3 * bdp + hdrm_mtus * mtu_wire, |s| s.0);
                hdrm_total += (p.hdrm_reserve_bytes + reserve) * lossless_classes;
                // The simulator's alpha: doubled while the rate is above the host links' (halved).
                p.pfc_alpha = alpha;
                let mut rate = p.rate_bps;
                while per_rate && rate > host_bps && p.pfc_alpha < 1.0 {
                    (p.pfc_alpha, rate) = ((2.0 * p.pfc_alpha).min(1.0), rate / 2);
                }
            }
            if f.pfc.enabled && hdrm_total >= f.buffer.0 {
                return Err(ScenarioError::new(
                    "fabric.buffer",
                    format!("switch `{}` needs {hdrm_total} bytes of PFC headroom (and reserve), more than its {}-byte buffer; raise fabric.buffer or lower fabric.pfc.headroom", node.name, f.buffer.0),
                ));
            }
            let pool = if f.pfc.enabled {
                f.buffer.0 - hdrm_total
            } else {
                f.buffer.0
            };
            if f.pfc.enabled
                && f.pfc.mode() == super::config::PfcMode::Static
                && f.pfc.xoff().0 > pool
            {
                return Err(ScenarioError::new("fabric.pfc.xoff", format!("{} bytes exceeds the shared pool of switch `{}` ({pool} bytes after headroom)", f.pfc.xoff().0, node.name)));
            }
            if f.pfc.enabled
                && f.pfc.xoff().0 <= f.pfc.resume_offset().0
                && f.pfc.mode() == super::config::PfcMode::Static
            {
                return Err(ScenarioError::new(
                    "fabric.pfc.xoff",
                    format!(
                        "{} bytes is not above fabric.pfc.resume_offset ({} bytes), where RESUME is sent; raise xoff (a plain number is bytes: write e.g. \"512KB\") or lower resume_offset",
                        f.pfc.xoff().0, f.pfc.resume_offset().0
                    ),
                ));
            }
            // TCD's max(T_on): the most one upstream can bring a port of this switch.
            let xoff = |p: &Port| match f.pfc.mode() {
                super::config::PfcMode::Static => f.pfc.xoff().0,
                _ => (p.pfc_alpha * pool as f64) as u64,
            };
            let hold = fab.node_ports[i]
                .iter()
                .map(|&(pid, _)| {
                    let p = &fab.ports[pid as usize];
                    reserve + xoff(p) + p.hdrm_reserve_bytes
                })
                .max()
                .filter(|_| f.pfc.enabled)
                .unwrap_or(0);
            for &(pid, _) in &fab.node_ports[i] {
                let p = &mut fab.ports[pid as usize];
                p.max_t_on_ps = f
                    .pfc
                    .max_t_on
                    .map_or_else(|| max_t_on_ps(hold, p.rate_bps, p.delay_ps), |t| t.0);
            }
            switches.push(BufferState {
                node: i as u32,
                shared_pool_bytes: pool,
                shared_used_bytes: 0,
                ctrl_bytes: 0,
                hdrm_used_bytes: 0,
                max_used_bytes: 0,
                acks_past_headroom: 0,
            });
        }
        Ok(switches)
    }

    /// RED thresholds of every switch port, scaled by port rate.
    fn ecn_thresholds(&self, ports: &mut [Port]) -> Result<(), ScenarioError> {
        let ecn = &self.cfg.fabric.ecn;
        if ecn.enabled != Some(true) {
            return Ok(());
        }
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
        Ok(())
    }

    /// Flows: explicit ones first, then each generator in order; and the iterations of the
    /// collective ones.
    fn flow_specs(
        &self,
        host_rate: &[u64],
    ) -> Result<(Vec<FlowSpec>, Vec<Collective>), ScenarioError> {
        let c = &self.cfg;
        let nh = host_rate.len() as u32;
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
            if fc.rate.is_some_and(|r| r.0 == 0) {
                return Err(ScenarioError::new(&fld("rate"), "must be > 0"));
            }
            crate::workload::check_start_rate(fc.start_rate, fc.rate, &fld("start_rate"))?;
            for &a in &fc.after {
                let why = match c.flows.get(a as usize) {
                    None => format!("flow {a} does not exist; [[flows]] has {} flows, numbered from 0", c.flows.len()),
                    Some(_) if a as usize == i => "a flow cannot wait for itself".into(),
                    Some(w) if w.size.is_none() => format!("flow {a} is long-lived and never arrives whole; wait for flows with a size"),
                    Some(_) => continue,
                };
                return Err(ScenarioError::new(&fld("after"), why));
            }
            if fc.delay.0 > 0 && fc.after.is_empty() {
                return Err(ScenarioError::new(&fld("delay"), "counts from the flows in `after`, and there are none; use `start`, or list the flows in `after`"));
            }
            specs.push(FlowSpec {
                src: fc.src,
                dst: fc.dst,
                size_bytes: fc.size.map(|s| s.0),
                start_ps: fc.start.0,
                stop_ps: fc.stop.map(|s| s.0),
                rate_bps: fc.rate.map(|r| r.0),
                start_rate_bps: fc.start_rate.map(|r| r.0),
                responsive: true,
                after: fc.after.clone(),
                after_delay_ps: fc.delay.0,
            });
        }
        let mut rng = Rng::new(c.seed, stream::WORKLOAD);
        let mut collectives = Vec::new();
        for (i, w) in c.workload.iter().enumerate() {
            let base = specs.len() as u32;
            let mut flows = generate(w, i, host_rate, &self.base_dir, &mut rng)?;
            collectives.extend(crate::workload::collectives(
                w, i as u32, base, &flows, host_rate,
            ));
            flows
                .iter_mut()
                .for_each(|s| s.after.iter_mut().for_each(|a| *a += base));
            specs.extend(flows);
        }
        crate::workload::check_acyclic(&specs)?;
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
        Ok((specs, collectives))
    }

    /// A scheme's `min_rate` (every rate-based scheme has one) must not exceed a host's line rate.
    fn check_min_rate(&self, host_rate: &[u64]) -> Result<(), ScenarioError> {
        let Some(v) = self.cc_params.to_table().remove("min_rate") else {
            return Ok(());
        };
        let min_rate: crate::sim::quantity::Rate =
            v.try_into().expect("min_rate serializes as a rate");
        match host_rate.iter().enumerate().find(|&(_, &r)| r < min_rate.0) {
            Some((h, &r)) => Err(ScenarioError::new(
                "cc.params.min_rate",
                format!(
                    "{} bps is above host {h}'s line rate of {r} bps; a scheme's minimum rate must be at most the line rate",
                    min_rate.0
                ),
            )),
            None => Ok(()),
        }
    }

    /// `[[flows]] first_window`: the explicit flows come first in the run's flow list.
    fn set_first_windows(
        &self,
        sim: &mut Simulation,
        info: &crate::cc::SchemeInfo,
    ) -> Result<(), ScenarioError> {
        for (i, fc) in self.cfg.flows.iter().enumerate() {
            let Some(w) = fc.first_window else { continue };
            let field = format!("flows[{i}].first_window");
            if !info.first_window {
                return Err(ScenarioError::new(&field, format!(
                    "scheme {} sends no first window before its receiver answers (pHost, AMRT and NDP do); remove it",
                    info.name
                )));
            }
            // Whole packets: a sender with any credit left sends a whole packet.
            let mtu = sim.s.mtu_payload_bytes as u64;
            match u16::try_from(w.0.div_ceil(mtu)) {
                Ok(packets) if packets > 0 => sim.flows[i].first_window_packets = packets,
                _ => {
                    return Err(ScenarioError::new(&field, format!(
                        "must be 1 B to {} packets ({} B at this MTU); omit it for the scheme's own",
                        u16::MAX,
                        u16::MAX as u64 * mtu
                    )))
                }
            }
        }
        Ok(())
    }

    /// The flows with their ideal FCT, and the scheme's per-flow state.
    fn add_flows(
        &self,
        sim: &mut Simulation,
        info: &crate::cc::SchemeInfo,
        specs: &[FlowSpec],
        host_rate: &[u64],
    ) -> Result<(), ScenarioError> {
        let h = &self.cfg.host;
        let irn = sim.s.engine_recovery() && sim.s.recovery.mode == RecoveryMode::Irn;
        let mut base_rtt_ps = 0;
        let mut window = h.window.map_or(u64::MAX, |w| w.0);
        if sim.s.int_enabled || info.base_rtt == BaseRtt::Fabric || irn {
            let (rtt_ps, (src, dst, switches)) = sim.longest_paths()?;
            if sim.s.int_enabled && switches > crate::net::MAX_INT_HOPS {
                return Err(ScenarioError::new("topology", format!(
                    "hosts {src} -> {dst} cross {switches} switches; the INT header holds {} hops: use a shallower topology for this scheme",
                    crate::net::MAX_INT_HOPS
                )));
            }
            if info.base_rtt == BaseRtt::Fabric {
                base_rtt_ps = rtt_ps;
            }
            if irn && h.window.is_none() {
                // IRN's BDP-FC: at most one BDP of the fabric's longest path in flight.
                let rate = host_rate.iter().copied().max().unwrap_or(0);
                window = ((rtt_ps as u128 * rate as u128 / 8 / crate::sim::PS_PER_S as u128)
                    as u64)
                    .max(1);
            }
        }
        for s in specs {
            let mut fl = Flow::new(s.src, s.dst, s.size_bytes, s.start_ps, s.stop_ps);
            fl.line_rate_bps = host_rate[s.src as usize].min(s.rate_bps.unwrap_or(u64::MAX));
            if s.start_rate_bps.is_some_and(|r| r > fl.line_rate_bps) {
                return Err(ScenarioError::new(
                    "flows",
                    format!(
                        "flow {} ({} -> {}) has start_rate {} b/s, above its host's line rate of {} b/s; lower start_rate",
                        sim.flows.len(),
                        s.src,
                        s.dst,
                        s.start_rate_bps.unwrap_or(0),
                        fl.line_rate_bps
                    ),
                ));
            }
            fl.ctl.rate_bps = s.start_rate_bps.unwrap_or(fl.line_rate_bps);
            fl.mtu_payload_bytes = h.mtu_payload_bytes as u64;
            fl.header_bytes = sim.s.header_bytes;
            fl.base_rtt_ps = base_rtt_ps;
            let mut path = sim.path(sim.flows.len() as u32, s.src, s.dst);
            // A rate limiter is the path's slowest hop for the ideal FCT.
            path.bottleneck_bps = path.bottleneck_bps.min(fl.line_rate_bps);
            if info.base_rtt == BaseRtt::Path {
                fl.base_rtt_ps = sim.base_rtt_ps(&path, sim.s.base_rtt_bytes as u64);
                fl.path = sim.path_base(&path);
            }
            if fl.long_lived && fl.stop_ps != u64::MAX {
                let propagation: u64 = (path.ports.iter())
                    .map(|&p| sim.ports[p as usize].delay_ps)
                    .sum();
                let fid = sim.flows.len() as u32;
                let heard = Event::StopHeard { flow: fid };
                sim.q.push(fl.stop_ps.saturating_add(propagation), heard);
            }
            fl.ctl.window_bytes = window;
            fl.ctl.data_prio = match &self.cfg.fabric.priority_by_size {
                classes if classes.is_empty() => sim.s.data_priority,
                classes => {
                    let size = s.size_bytes.unwrap_or(u64::MAX);
                    1 + classes.iter().take_while(|b| size >= b.0).count() as u8
                }
            };
            if sim.s.own_recovery {
                fl.loss.resend = Some(Box::default());
                fl.ooo = Some(Box::default());
            }
            if irn {
                fl.loss.irn = Some(Box::default());
                fl.ooo = Some(Box::default());
            }
            fl.ideal_fct_ps = sim.ideal_fct_ps(
                &path,
                s.size_bytes.unwrap_or(0),
                (self.cfg.output.ideal_fct, h.header_bytes as u64),
            );
            let limit = crate::sim::units::MAX_TIME_PS;
            if fl.ideal_fct_ps > limit || s.start_ps > limit {
                return Err(ScenarioError::new(
                    "flows",
                    format!(
                        "flow {} ({} -> {}, {} B from {} ps) would end after {} s of simulated time; use a smaller size, a faster link or an earlier start",
                        sim.flows.len(),
                        s.src,
                        s.dst,
                        s.size_bytes.unwrap_or(0),
                        s.start_ps,
                        limit / crate::sim::PS_PER_S
                    ),
                ));
            }
            sim.flows.push(fl);
        }
        // Flows to one receiver that start at one instant (RCC's first request). A flow that
        // waits for others starts when they arrive, known only then: it counts as alone.
        let mut cohorts = std::collections::HashMap::<(u32, u64), u32>::new();
        let waits = |i: usize| !specs[i].after.is_empty();
        for (_, f) in sim.flows.iter().enumerate().filter(|&(i, _)| !waits(i)) {
            *cohorts.entry((f.dst, f.start_ps)).or_default() += 1;
        }
        for (_, f) in sim.flows.iter_mut().enumerate().filter(|&(i, _)| !waits(i)) {
            f.cohort = cohorts[&(f.dst, f.start_ps)];
        }
        sim.flow_ends = sim.flows.iter().map(|f| (f.src, f.dst)).collect();
        Ok(())
    }

    /// A probe's window: its `start` (by default the first flow's start down to a multiple of
    /// the interval, so the rows kept fall where they would from t = 0 and only idle ones go)
    /// and its `stop`. Refuses a probe that would record more than `MAX_SAMPLES` rows in it (up
    /// to the run's duration, when it has one), warns past `WARN_SAMPLES`, and schedules the
    /// first sample: one interval in, or at `start` (a baseline with no row).
    fn probe_window(
        &self,
        sim: &mut Simulation,
        field: &str,
        (interval_ps, per_sample): (u64, usize),
        (start, stop): (
            Option<crate::sim::quantity::Time>,
            Option<crate::sim::quantity::Time>,
        ),
        first_sample: crate::sim::Event,
    ) -> Result<(u64, u64), ScenarioError> {
        const MAX_SAMPLES: f64 = 1e8;
        const WARN_SAMPLES: f64 = 1e7;
        let first_flow_ps = sim.flows.iter().map(|f| f.start_ps).min().unwrap_or(0);
        let start_ps = start.map_or(first_flow_ps / interval_ps * interval_ps, |t| t.0);
        let stop_ps = stop.map_or(u64::MAX, |t| t.0);
        if stop_ps <= start_ps {
            let prefix = field.rsplit_once('.').map_or(field, |p| p.0);
            return Err(ScenarioError::new(
                &format!("{prefix}.stop"),
                "must be after start (no sample would be taken)",
            ));
        }
        let end_ps = stop_ps.min(self.cfg.duration.map_or(u64::MAX, |d| d.0));
        if end_ps != u64::MAX {
            let rows =
                end_ps.saturating_sub(start_ps) as f64 / interval_ps as f64 * per_sample as f64;
            if rows > MAX_SAMPLES {
                return Err(ScenarioError::new(field, format!("would record about {rows:.2e} samples over the run (at most {MAX_SAMPLES:.0e}, about 32 B each); sample less often, probe fewer ports or set start and stop")));
            }
            if rows > WARN_SAMPLES {
                sim.warnings.push(format!("{field}: would record about {rows:.1e} rows (about {:.0} MB); sample less often, probe fewer ports or set start and stop", rows * 32.0 / 1e6));
            }
        }
        let first_ps = if start_ps > 0 { start_ps } else { interval_ps };
        sim.q.push(first_ps, first_sample);
        Ok((start_ps, stop_ps))
    }

    /// Warnings for settings that make a run far slower than the user may expect: timers shorter
    /// than one packet's time on the wire (they fire many times per packet), and flows whose
    /// bytes take over 10 runs at line rate, or, without a duration, very many packets.
    fn warn_extremes(&self, sim: &mut Simulation, stop_ps: u64) {
        let packet_bytes = (sim.s.mtu_payload_bytes + sim.s.header_bytes) as u64;
        let fastest_bps = sim.flows.iter().map(|f| f.line_rate_bps).max().unwrap_or(0);
        if fastest_bps > 0 {
            let packet_ps = wire_ps(packet_bytes, fastest_bps);
            let mut timers: Vec<(String, u64)> = Vec::new();
            if let Some(r) = &self.cfg.host.recovery {
                if sim.s.drop.is_some() {
                    timers.extend([
                        ("host.recovery.rto".into(), r.rto.0),
                        ("host.recovery.rto_low".into(), r.rto_low.0),
                        ("host.recovery.rto_high".into(), r.rto_high.0),
                    ]);
                }
            }
            for (key, v) in &self.cfg.cc.params {
                if let Some(ps) = v.as_str().and_then(|t| crate::sim::parse_time_ps(t).ok()) {
                    timers.push((format!("cc.params.{key}"), ps));
                }
            }
            // A flow's timer runs at least while the flow could send at line rate (a
            // long-lived flow's, until the run ends: its duration, else when the last sized
            // flow could finish); those times in timer periods bound its firings from below.
            let line_rate_finish = |f: &crate::transport::Flow| {
                f.start_ps
                    .saturating_add(wire_ps(f.size_bytes, f.line_rate_bps.max(1)))
            };
            let end_ps = if stop_ps != u64::MAX {
                stop_ps
            } else {
                let sized = sim.flows.iter().filter(|f| !f.long_lived);
                sized.map(line_rate_finish).max().unwrap_or(0)
            };
            let active_ps: f64 = (sim.flows.iter())
                .map(|f| {
                    let finish = if f.long_lived {
                        end_ps
                    } else {
                        line_rate_finish(f)
                    };
                    finish.min(end_ps).saturating_sub(f.start_ps) as f64
                })
                .sum();
            for (field, ps) in timers {
                if ps > 0 && ps < packet_ps {
                    let fires = active_ps / ps as f64;
                    estimate(sim, fires, format!(
                        "{field} = {} is under one packet's time on the wire ({}): a timer that short fires about {:.0} times per packet and slows the run as much; lengthen it unless that is meant",
                        crate::sim::fmt_time(ps),
                        crate::sim::fmt_time_approx(packet_ps),
                        packet_ps as f64 / ps as f64
                    ));
                }
            }
        }
        let payload = sim.s.mtu_payload_bytes.max(1) as u64;
        let sized = sim
            .flows
            .iter()
            .filter(|f| !f.long_lived && f.line_rate_bps > 0);
        let need_ps = |f: &crate::transport::Flow| wire_ps(f.size_bytes, f.line_rate_bps);
        if stop_ps != u64::MAX {
            let too_long: Vec<&crate::transport::Flow> = sized
                .filter(|f| need_ps(f) as u128 > 10 * stop_ps as u128)
                .collect();
            if let Some(big) = too_long.iter().max_by_key(|f| f.size_bytes) {
                sim.warnings.push(format!(
                    "flows: {} need over 10 times `duration` ({}) at line rate (the largest, {} bytes, {}); they end far from finished",
                    too_long.len(),
                    crate::sim::fmt_time(stop_ps),
                    big.size_bytes,
                    crate::sim::fmt_time_approx(need_ps(big))
                ));
            }
        } else {
            let packets: u128 = sized.map(|f| f.size_bytes.div_ceil(payload) as u128).sum();
            if packets > 1_000_000_000 {
                let events = packets as f64 * 8.0;
                estimate(sim, events, format!(
                    "flows: {packets:.3e} packets to deliver and no `duration`: the run simulates until the last one arrives, some {events:.0e} events; set duration or smaller sizes"
                ));
            }
        }
    }

    fn setup_probes(&self, sim: &mut Simulation) -> Result<(), ScenarioError> {
        let o = &self.cfg.output;
        if let Some(tc) = &o.trace {
            let ports = resolve_ports(sim, "output.trace.ports", &tc.ports)?;
            let (start, stop) = (
                tc.start.map_or(0, |t| t.0),
                tc.stop.map_or(u64::MAX, |t| t.0),
            );
            if stop <= start {
                return Err(ScenarioError::new(
                    "output.trace.stop",
                    "must be after output.trace.start",
                ));
            }
            if let Some(d) = self.cfg.duration.filter(|d| start >= d.0) {
                return Err(ScenarioError::new(
                    "output.trace.start",
                    format!(
                        "starts at or after the run's duration ({}), so the trace would be empty; start it earlier",
                        crate::sim::fmt_time(d.0)
                    ),
                ));
            }
            if tc.max_packets == 0 {
                return Err(ScenarioError::new(
                    "output.trace.max_packets",
                    "must be at least 1 (unset: 1000000)",
                ));
            }
            let names: Vec<String> = ports.iter().map(|&p| sim.link_name(p)).collect();
            sim.metrics.trace = Some(Box::new(crate::metrics::trace::Trace::new(
                sim.ports.len(),
                &ports,
                &names,
                start,
                stop,
                tc.max_packets,
            )));
        }
        if let Some(qc) = &o.queues {
            check_probe_interval("output.queues.interval", qc.interval.0)?;
            let ids = resolve_ports(sim, "output.queues.ports", &qc.ports)?;
            (sim.metrics.queue_start_ps, sim.metrics.queue_stop_ps) = self.probe_window(
                sim,
                "output.queues.interval",
                (qc.interval.0, ids.len()),
                (qc.start, qc.stop),
                crate::sim::Event::SampleQueues,
            )?;
            sim.metrics.queue_ports = ids;
            sim.metrics.queue_interval_ps = qc.interval.0;
            sim.metrics.queue_by_flow = qc.by_flow;
        }
        if let Some(rc) = &o.rates {
            check_probe_interval("output.rates.interval", rc.interval.0)?;
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
            let per_sample = if rc.flows.is_empty() {
                sim.flows.len()
            } else {
                rc.flows.len()
            };
            (sim.metrics.rate_start_ps, sim.metrics.rate_stop_ps) = self.probe_window(
                sim,
                "output.rates.interval",
                (rc.interval.0, per_sample),
                (rc.start, rc.stop),
                crate::sim::Event::SampleRates,
            )?;
            sim.metrics.rate_all_flows = rc.flows.is_empty();
            sim.metrics.rate_flows = rc.flows.clone();
            sim.metrics.rate_interval_ps = rc.interval.0;
        }
        Ok(())
    }

    /// The scenario's warnings, then those of building `sim`.
    pub fn all_warnings(&self, sim: &Simulation) -> Vec<String> {
        self.warnings.iter().chain(&sim.warnings).cloned().collect()
    }

    /// Build the run `threads` asks for: the single-threaded engine, or the fabric cut into
    /// partitions run in parallel (`engine::parallel`).
    pub fn start(&self) -> Result<Run, ScenarioError> {
        let mut sim = self.build()?;
        let threads = match self.cfg.threads.unwrap_or(Threads::Auto) {
            Threads::Count(n) => {
                let cores = cores();
                if n as usize > cores {
                    sim.warnings.push(format!(
                        "threads: {n} threads on {cores} cores take turns (a sweep's workers share the machine's cores: {CORES_ENV} is each run's share); ask for at most {cores}"
                    ));
                }
                n as usize
            }
            Threads::Auto if sim.topo.hosts.len() < AUTO_PARALLEL_HOSTS => 1,
            Threads::Auto => match cores() {
                1 => 1,
                n => match self.parallel_refusal(&sim, &self.cut(&sim, n)) {
                    Some((why, _)) => {
                        sim.warnings
                            .push(format!("threads: \"auto\" runs on one thread: {why}"));
                        1
                    }
                    None => n,
                },
            },
        };
        if threads == 1 {
            return Ok(self.one_thread(sim));
        }
        self.start_parallel_from(sim, threads)
    }

    /// `sim` on the single-threaded engine, which cuts nothing: a `partitions` set is noted.
    fn one_thread(&self, mut sim: Simulation) -> Run {
        if self.cfg.partitions.is_some() {
            sim.warnings.push(
                "partitions: the run has one thread (threads = 1, or \"auto\" on a small fabric), so the fabric is not cut".into(),
            );
        }
        Run::One(Box::new(sim))
    }

    /// The fabric cut into partitions, run by `threads` threads. Any count, 1 included, gives
    /// the same results.
    pub fn start_parallel(&self, threads: usize) -> Result<Run, ScenarioError> {
        self.start_parallel_from(self.build()?, threads)
    }

    /// The fabric cut for a run on `threads` threads: into as many partitions, unless the
    /// scenario says how many.
    fn cut(&self, sim: &Simulation, threads: usize) -> Partitioning {
        partition(
            &sim.topo,
            self.cfg.partitions.map_or(threads, |n| n as usize),
        )
    }

    /// Why `sim` cannot run cut as `cut` (and the fix to name), if it cannot.
    fn parallel_refusal(&self, sim: &Simulation, cut: &Partitioning) -> Option<(String, String)> {
        if self.cfg.output.trace.is_some() {
            return Some((
                "a packet trace (output.trace) follows one event queue".into(),
                "run it with threads = 1".into(),
            ));
        }
        if let Some((a, w)) = sim.deps.remote(sim.flows.all()) {
            let (fa, fw) = (&sim.flows[a as usize], &sim.flows[w as usize]);
            return Some((
                format!("flow {w} waits for flow {a}, which arrives at host {}, not at its sender {}; a parallel run releases a waiting flow where what it waits for arrives", fa.dst, fw.src),
                "run it with threads = 1".into(),
            ));
        }
        let owner = |port: u32| cut.node_owner[sim.ports[port as usize].node as usize];
        let instant = (0..sim.ports.len() as u32).any(|p| {
            owner(p) != owner(sim.ports[p as usize].peer) && sim.ports[p as usize].delay_ps == 0
        });
        if instant {
            return Some((
                "a link between partitions has no propagation delay, so no partition may run ahead of another".into(),
                "give every link a delay, or run with threads = 1".into(),
            ));
        }
        // Each partition is a copy of the simulation but for the ports, routes and flows
        // (`Parallel`): the ports and routes are held once, a flow by its sender's partition
        // and its receiver's.
        let (once, one) = fabric_bytes(&sim.topo);
        let once = once.saturating_add(2 * sim.flows.len() as u64 * FLOW_BYTES);
        let parts = cut.parts;
        let (limit, whose) = self.memory_limit()?;
        let mb = |b: u64| b as f64 / 1e6;
        (once.saturating_add(one.saturating_mul(parts as u64)) > limit).then(|| {
            (
                format!(
                    "a parallel run copies the fabric's state into each partition (the ports, routes and flows are held once or twice): {parts} x {:.1} MB beside {:.1} MB, more than {whose} ({:.1} MB)",
                    mb(one),
                    mb(once),
                    mb(limit)
                ),
                "run with threads = 1 or fewer partitions, or raise memory_limit".into(),
            )
        })
    }

    fn start_parallel_from(
        &self,
        mut first: Simulation,
        threads: usize,
    ) -> Result<Run, ScenarioError> {
        let cut = self.cut(&first, threads);
        if let Some((why, fix)) = self.parallel_refusal(&first, &cut) {
            return Err(ScenarioError::new("threads", format!("{why}; {fix}")));
        }
        let parts = cut.parts;
        if self.cfg.threads == Some(Threads::Count(threads as u32)) && threads > parts {
            first.warnings.push(format!(
                "threads: {threads} asked, but the fabric is cut into {parts} partitions, so {parts} threads work (partitions, at most {MAX_PARTITIONS}, bound a run's threads)"
            ));
        }
        Ok(Run::Many(Box::new(Parallel::new(first, cut, threads))))
    }

    /// Collect a finished simulation's results.
    pub fn results(&self, sim: &mut Simulation) -> Results {
        let mut r = sim.results(
            &self.cfg.name,
            self.cfg.seed,
            &self.cfg.cc.scheme,
            self.resolved_toml(),
        );
        r.summary["warnings"] = serde_json::json!(self.all_warnings(sim));
        r
    }
}

/// Bytes a flow costs at least: its state, the scheme's per-flow parts and its result row.
const FLOW_BYTES: u64 = std::mem::size_of::<Flow>() as u64 + 256;

/// TCD's max(T_on) of a switch port, the longest continuous ON period of a port in PFC's
/// ON/OFF pattern, when `fabric.pfc.max_t_on` does not give it. ccsim's derivation: the ACC
/// paper sets 24 us "according to the equation in [45]" (TCD's paper, not in the seeds), so
/// the equation here is ccsim's reading. A paused port can hold at most `hold_bytes` for one
/// upstream port, what its switch lets that port bring before pausing it (the ingress reserve,
/// XOFF at an empty buffer, and the headroom for what is in flight when the PAUSE leaves; the
/// largest over the switch's ports). Resumed, it sends that backlog in `hold_bytes` / C, and
/// its downstream's answer to it (the next PAUSE, or none) comes back within the link's round
/// trip: max(T_on) = hold / C + 2 x delay. A port ON for longer is out of the pattern, and
/// TCD judges it by its own queue. On the TCD authors' 40G chain (4 us links, XOFF 329,600 B,
/// headroom 103,000 B) this gives 94.5 us, where their configuration sets 97 us; on ACC's
/// fat-tree (XOFF 512 KB, 1 us links) 55 us at a ToR's 100G host ports and 15 us at 400G
/// ports, where the paper sets 24 us for every port.
pub fn max_t_on_ps(hold_bytes: u64, rate_bps: u64, delay_ps: u64) -> u64 {
    wire_ps(hold_bytes, rate_bps).saturating_add(2 * delay_ps)
}

/// Picoseconds `bytes` take on the wire at `rate_bps` (saturating at u64::MAX).
fn wire_ps(bytes: u64, rate_bps: u64) -> u64 {
    let ps = bytes as u128 * 8 * crate::sim::PS_PER_S as u128 / rate_bps.max(1) as u128;
    ps.min(u64::MAX as u128) as u64
}

/// The ports `specs` (at `field`) name: "from->to" node names, or "all" for every switch port;
/// each once, in the order named.
fn resolve_ports(
    sim: &Simulation,
    field: &str,
    specs: &[String],
) -> Result<Vec<u32>, ScenarioError> {
    if specs.is_empty() {
        return Err(ScenarioError::new(
            field,
            "names no port; list \"from->to\" ports, or [\"all\"] for every switch port",
        ));
    }
    let mut ids = Vec::new();
    let mut named: Vec<(u32, usize)> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        if spec == "all" {
            ids.extend((0..sim.ports.len() as u32).filter(|&p| !sim.ports[p as usize].is_host));
            continue;
        }
        let fld = format!("{field}[{i}]");
        let (a, b) = spec.split_once("->").ok_or_else(|| ScenarioError::new(&fld, format!("`{spec}`: write a port as \"from->to\" node names, e.g. \"sw0->h3\", or \"all\"")))?;
        let node = |n: &str| {
            sim.topo
                .node_by_name(n.trim())
                .ok_or_else(|| ScenarioError::new(&fld, format!("unknown node `{n}`")))
        };
        let (na, nb) = (node(a)?, node(b)?);
        let pid = (0..sim.ports.len() as u32)
            .find(|&p| {
                sim.ports[p as usize].node == na
                    && sim.ports[sim.ports[p as usize].peer as usize].node == nb
            })
            .ok_or_else(|| ScenarioError::new(&fld, format!("no link from `{a}` to `{b}`")))?;
        if let Some((_, j)) = named.iter().find(|(p, _)| *p == pid) {
            return Err(ScenarioError::new(
                &fld,
                format!("`{spec}` is {field}[{j}] again; list each port once"),
            ));
        }
        named.push((pid, i));
        ids.push(pid);
    }
    let mut seen = std::collections::HashSet::new();
    ids.retain(|p| seen.insert(*p));
    Ok(ids)
}

/// Bytes the fabric of `topo` takes at least: what a parallel run holds once, its ports and
/// the route table (switch x switch with hosts), and what each partition copies: per-port
/// scheme state, per-node and per-host state.
fn fabric_bytes(topo: &Topology) -> (u64, u64) {
    let mut has_hosts = vec![false; topo.nodes.len()];
    for l in &topo.links {
        for (n, m) in [(l.a, l.b), (l.b, l.a)] {
            if topo.nodes[n as usize].layer == Layer::Host {
                has_hosts[m as usize] = true;
            }
        }
    }
    let attach = has_hosts.iter().filter(|&&x| x).count() as u64;
    let switches = (topo.nodes.len() - topo.hosts.len()) as u64;
    let ports = 2 * topo.links.len() as u64;
    let once = ports * std::mem::size_of::<Port>() as u64 + switches * attach * Routes::ENTRY_BYTES;
    let copied = ports * 64 + topo.nodes.len() as u64 * 128 + topo.hosts.len() as u64 * 256;
    (once, copied)
}

/// This machine's memory in bytes (None where it cannot be read).
fn machine_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = text.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    Some(
        kb.trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()?
            * 1024,
    )
}

impl Scenario {
    /// The memory a run may use, and whose limit it is (None: unknown).
    fn memory_limit(&self) -> Option<(u64, &'static str)> {
        match self.cfg.memory_limit {
            Some(l) => Some((l.0, "memory_limit")),
            None => machine_memory_bytes().map(|m| (m, "this machine's memory")),
        }
    }

    /// Refuse, before allocating them, a fabric of `fabric_bytes` with `flows` flows that would
    /// not fit in `memory_limit` (default: this machine's memory).
    fn check_memory(&self, fabric_bytes: u64, flows: usize) -> Result<(), ScenarioError> {
        let Some((limit, whose)) = self.memory_limit() else {
            return Ok(());
        };
        let need = fabric_bytes.saturating_add(flows as u64 * FLOW_BYTES);
        if need <= limit {
            return Ok(());
        }
        let gb = |b: u64| b as f64 / 1e9;
        Err(ScenarioError::new(
            "memory_limit",
            format!(
                "the scenario needs at least {:.1} GB ({:.1} GB of fabric, {flows} flows), more than {whose} ({:.1} GB); use a smaller topology or fewer flows, or raise memory_limit",
                gb(need),
                gb(fabric_bytes),
                gb(limit)
            ),
        ))
    }
}

/// A route through the fabric: the egress port of every hop, and its slowest link.
struct Path {
    ports: Vec<u32>,
    bottleneck_bps: u64,
}

impl Simulation {
    /// Ideal FCT of `size` bytes on a flow's path (DESIGN.md, metrics), by definition `def`;
    /// `host_hdr` is the host's header without the scheme's.
    fn ideal_fct_ps(&self, path: &Path, size: u64, (def, host_hdr): (IdealFct, u64)) -> u64 {
        let mtu = self.s.mtu_payload_bytes as u64;
        let with_headers = |hdr: u64| size.saturating_add(size.div_ceil(mtu).saturating_mul(hdr));
        match def {
            IdealFct::Hpcc => self
                .base_rtt_ps(path, mtu)
                .saturating_add(tx_time_ps(with_headers(host_hdr), path.bottleneck_bps)),
            IdealFct::Exact => {
                let hdr = self.s.header_bytes as u64;
                let wire = with_headers(hdr);
                // Store-and-forward of the first packet, then the rest streams at the bottleneck
                // (exact when the links are equally fast), then the last ACK back.
                let first = size.min(mtu) + hdr;
                let per_hop: u64 = path
                    .ports
                    .iter()
                    .map(|&pid| {
                        let p = &self.ports[pid as usize];
                        2 * p.delay_ps
                            + tx_time_ps(first, p.rate_bps)
                            + tx_time_ps(self.s.ack_bytes as u64, p.rate_bps)
                    })
                    .sum();
                per_hop.saturating_add(tx_time_ps(wire.saturating_sub(first), path.bottleneck_bps))
            }
        }
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
            pid = self.ecmp_route(si, dst, fid, (src, dst));
        }
    }

    /// Base RTT of a path (DESIGN.md): 2 x propagation + one packet's serialization per hop
    /// (a full packet, or the payload: `host.base_rtt_bytes`).
    fn base_rtt_ps(&self, path: &Path, bytes: u64) -> u64 {
        path.ports
            .iter()
            .map(|&pid| {
                let p = &self.ports[pid as usize];
                2 * p.delay_ps + tx_time_ps(bytes, p.rate_bps)
            })
            .sum()
    }

    /// A data packet's one-way delay on an idle path (the size `host.base_rtt_bytes` says),
    /// and the rate of its last link.
    fn path_base(&self, path: &Path) -> PathBase {
        let bytes = self.s.base_rtt_bytes as u64;
        let ports = path.ports.iter().map(|&pid| &self.ports[pid as usize]);
        PathBase {
            base_owd_ps: ports
                .map(|p| p.delay_ps + tx_time_ps(bytes, p.rate_bps))
                .sum(),
            last_hop_bps: self.ports[*path.ports.last().expect("a path has a hop") as usize]
                .rate_bps,
        }
    }

    /// Over every ordered pair of hosts and every equal-cost path between them: the longest
    /// base RTT (the HPCC simulator's `GLOBAL_T 1` window and base RTT) and the pair crossing
    /// the most switches, as (src, dst, switches). Hosts behind one switch share every route,
    /// so this walks (switch with hosts x switch) pairs, never host pairs.
    fn longest_paths(&self) -> Result<(u64, (u32, u32, usize)), ScenarioError> {
        let bytes = self.s.base_rtt_bytes as u64;
        // Per port: its share of a base RTT, and the switch it leads to.
        let port_cost: Vec<u64> = (self.ports.iter())
            .map(|p| 2 * p.delay_ps + tx_time_ps(bytes, p.rate_bps))
            .collect();
        let port_next: Vec<u32> = (self.ports.iter())
            .map(|p| self.switch_index[self.ports[p.peer as usize].node as usize])
            .collect();
        let cost = |pid: u32| port_cost[pid as usize];
        let next_switch = |pid: u32| port_next[pid as usize];
        // Hosts grouped by the switch they hang off (the route table's attachments).
        let (attach_nodes, host_attach) = self.routes.attachments();
        let mut groups: Vec<(u32, Vec<u32>)> = (attach_nodes.iter())
            .map(|&n| (self.switch_index[n as usize], Vec::new()))
            .collect();
        for (h, &a) in host_attach.iter().enumerate() {
            groups[a as usize].1.push(h as u32);
        }
        let up = |h: u32| cost(self.hosts[h as usize].port);
        let down = |h: u32| cost(self.routes.attachment(h).1);
        let up_max: Vec<u64> = groups
            .iter()
            .map(|g| {
                g.1.iter()
                    .map(|&h| up(h))
                    .max()
                    .expect("a group has a host")
            })
            .collect();
        let (mut rtt_ps, mut deepest) = (0, (0, 0, 0));
        // Per switch toward the current destination group: (longest cost, switches crossed).
        let mut memo = vec![(u64::MAX, 0usize); self.switches.len()];
        let mut stack = Vec::new();
        for (gi, (t, dsts)) in groups.iter().enumerate() {
            if gi % 64 == 0 && crate::sim::interrupt::requested() {
                return Err(ScenarioError::interrupted());
            }
            let dst = dsts[0];
            let down_max = dsts
                .iter()
                .map(|&h| down(h))
                .max()
                .expect("a group has a host");
            memo.iter_mut().for_each(|m| *m = (u64::MAX, 0));
            memo[*t as usize] = (0, 1);
            for (gs, (s, srcs)) in groups.iter().enumerate() {
                // Next hops lead strictly closer: settle a switch once all of them are settled.
                stack.push(*s);
                while let Some(&u) = stack.last() {
                    if memo[u as usize].0 != u64::MAX {
                        stack.pop();
                        continue;
                    }
                    let hops = self.routes.next_hops(u, dst);
                    let before = stack.len();
                    stack.extend(
                        hops.iter()
                            .map(|&p| next_switch(p))
                            .filter(|&v| memo[v as usize].0 == u64::MAX),
                    );
                    if stack.len() == before {
                        let best = hops
                            .iter()
                            .map(|&p| cost(p) + memo[next_switch(p) as usize].0)
                            .max()
                            .expect("a route has a hop");
                        memo[u as usize] = (best, memo[next_switch(hops[0]) as usize].1 + 1);
                        stack.pop();
                    }
                }
                let (mid, switches) = memo[*s as usize];
                let ends = if gs == gi {
                    // Two different hosts behind the same switch: each uplink with the
                    // longest downlink of another host.
                    let mut downs: Vec<(u64, u32)> = srcs.iter().map(|&h| (down(h), h)).collect();
                    downs.sort_unstable_by(|a, b| b.cmp(a));
                    srcs.iter()
                        .filter_map(|&a| {
                            downs.iter().take(2).find(|d| d.1 != a).map(|d| up(a) + d.0)
                        })
                        .max()
                } else {
                    Some(up_max[gs] + down_max)
                };
                let Some(ends) = ends else { continue };
                rtt_ps = rtt_ps.max(ends + mid);
                if switches > deepest.2 {
                    deepest = (srcs[0], dst, switches);
                }
            }
        }
        Ok((rtt_ps, deepest))
    }
}

/// Probes sample at most every 10 ns: each sample walks the probed ports or flows.
fn check_probe_interval(field: &str, interval_ps: u64) -> Result<(), ScenarioError> {
    if interval_ps < 10_000 {
        return Err(ScenarioError::new(
            field,
            "must be at least 10ns (each sample walks every probed port or flow)",
        ));
    }
    Ok(())
}

/// The fabric's and hosts' priorities (data, size classes, ACKs) and the scheduler a scheme
/// needs; returns the hosts' and the switches' ACK priorities.
fn check_priorities(
    f: &FabricCfg,
    h: &HostCfg,
    info: &crate::cc::SchemeInfo,
) -> Result<(u8, u8), ScenarioError> {
    let data_priority = f.data_priority.unwrap_or(DEFAULT_DATA_PRIORITY);
    if data_priority == 0 || data_priority > 7 {
        return Err(ScenarioError::new(
            "fabric.data_priority",
            "must be 1..7 (0 is reserved for control packets)",
        ));
    }
    let classes = &f.priority_by_size;
    if classes.len() > 6
        || classes.windows(2).any(|w| w[0].0 >= w[1].0)
        || classes.first().is_some_and(|b| b.0 == 0)
    {
        return Err(ScenarioError::new(
            "fabric.priority_by_size",
            "must be 1 to 6 ascending sizes above 0 (classes 1..7), e.g. [\"10KB\", \"100KB\", \"1MB\"]",
        ));
    }
    if !classes.is_empty() && f.data_priority.is_some() {
        return Err(ScenarioError::new(
            "fabric.data_priority",
            "does nothing beside priority_by_size, which gives each size class its own priority (1..7); remove one of them",
        ));
    }
    if !classes.is_empty() && info.prio_per_packet {
        return Err(ScenarioError::new(
            "fabric.priority_by_size",
            "this scheme sets its packets' priorities itself; remove priority_by_size",
        ));
    }
    if info.strict_priority && f.scheduler != crate::net::config::Scheduler::Strict {
        return Err(ScenarioError::new(
            "fabric.scheduler",
            format!(
                "{} ranks packets by priority: set fabric.scheduler = \"strict\"",
                info.name
            ),
        ));
    }
    let ack_priority = h.ack_priority.expect("resolved");
    if ack_priority > 7 {
        return Err(ScenarioError::new("host.ack_priority", "must be 0..7"));
    }
    let switch_ack_priority = f.ack_priority.expect("resolved");
    if switch_ack_priority > 7 {
        return Err(ScenarioError::new("fabric.ack_priority", "must be 0..7"));
    }
    Ok((ack_priority, switch_ack_priority))
}

/// Packet sizes (each within `MAX_PACKET_BYTES`, ACKs and PFC frames above 0, a drop-tail queue
/// holding a data packet), the window and the ACK options.
fn check_packets(
    f: &FabricCfg,
    h: &HostCfg,
    info: &crate::cc::SchemeInfo,
) -> Result<(), ScenarioError> {
    if h.mtu_payload_bytes == 0 {
        return Err(ScenarioError::new("host.mtu_payload_bytes", "must be > 0"));
    }
    for (field, bytes) in [
        (
            "host.mtu_payload_bytes",
            h.mtu_payload_bytes as u64 + (h.header_bytes + info.header_bytes) as u64,
        ),
        ("host.ack_bytes", (h.ack_bytes + info.header_bytes) as u64),
        ("fabric.pfc.frame_bytes", f.pfc.frame_bytes() as u64),
    ] {
        if bytes > crate::net::MAX_PACKET_BYTES as u64 {
            return Err(ScenarioError::new(
                field,
                format!(
                    "makes {bytes}-byte packets; packets are at most {} bytes",
                    crate::net::MAX_PACKET_BYTES
                ),
            ));
        }
    }
    for (field, bytes) in [
        ("host.ack_bytes", h.ack_bytes),
        ("fabric.pfc.frame_bytes", f.pfc.frame_bytes()),
    ] {
        if bytes == 0 {
            return Err(ScenarioError::new(
                field,
                "must be > 0 bytes: every packet occupies the wire",
            ));
        }
    }
    // A drop-tail queue must hold at least one full data packet.
    let packet = h.mtu_payload_bytes as u64 + (h.header_bytes + info.header_bytes) as u64;
    if let Some(l) = &f.loss {
        for (field, limit) in [("queue_bytes", l.queue_bytes), ("port_bytes", l.port_bytes)] {
            if let Some(b) = limit.filter(|b| b.0 > 0 && b.0 < packet) {
                return Err(ScenarioError::new(
                    &format!("fabric.loss.{field}"),
                    format!(
                        "{} B cannot hold one {packet}-byte data packet; give at least {packet}B",
                        b.0
                    ),
                ));
            }
        }
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
    if h.ack_timer.0 == 0 {
        return Err(ScenarioError::new(
            "host.ack_timer",
            "must be > 0: a coalesced ACK must not wait forever",
        ));
    }
    Ok(())
}

/// Say `warning`, and keep it as the run's estimate if `events` is the largest so far
/// (`Simulation::estimated_events`, which `Run::refuse_endless` reads).
fn estimate(sim: &mut Simulation, events: f64, warning: String) {
    if sim
        .estimated_events
        .as_ref()
        .is_none_or(|(e, _)| events > *e)
    {
        sim.estimated_events = Some((events, warning.clone()));
    }
    sim.warnings.push(warning);
}

#[cfg(test)]
mod tests {
    use super::max_t_on_ps;
    const US: u64 = crate::sim::PS_PER_US;

    #[test]
    fn max_t_on_sends_what_the_switch_holds_for_one_upstream_plus_the_link_round_trip() {
        // The TCD authors' 40G chain: XOFF 2 x 160 cells of 1030 B, headroom 100 cells, 4 us
        // links: 432,600 B at 40 Gb/s is 86.52 us, plus 8 us (their configuration: 97 us).
        let hold = 2 * 160 * 1030 + 100 * 1030;
        assert_eq!(max_t_on_ps(hold, 40_000_000_000, 4 * US), 94_520_000);
        // ACC's fat-tree: XOFF 512 KB; a ToR's 400G uplinks bring 3 x 50 KB of headroom + 2
        // packets of 1048 B: 664,096 B. At a 100G host port: 53.13 us + 2 us; at 400G 15.28 us.
        let hold = 512_000 + 3 * 50_000 + 2 * 1048;
        assert_eq!(max_t_on_ps(hold, 100_000_000_000, US), 55_127_680);
        assert_eq!(max_t_on_ps(hold, 400_000_000_000, US), 15_281_920);
        // No PFC, nothing held: the round trip alone.
        assert_eq!(max_t_on_ps(0, 100_000_000_000, US), 2 * US);
    }
}
