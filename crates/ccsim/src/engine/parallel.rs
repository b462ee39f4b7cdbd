//! One run on many cores, with the single-threaded engine's results whatever the number of
//! threads and partitions.
//!
//! The fabric is cut into partitions by its shape alone (`partition`): the components left
//! when the top switch layer is removed (a fat-tree's pods, a leaf-spine's racks), grouped
//! into one partition per thread, at most `MAX_PARTITIONS` (or the scenario's `partitions`),
//! with the top layer's switches dealt among them in runs. Each partition is a whole
//! `Simulation` of its own (event queue, packet arena, metrics) that runs only the events of
//! what it owns: its nodes' ports, its hosts, the sender half of the flows its hosts send and
//! the receiver half of those they receive. The one way in from another partition is a packet
//! or PFC frame on a cut link (`Port::cut`): `transmit` puts it in an outbox instead of the
//! queue. A partition's port array holds only its own ports; the others' entries are zeroed
//! memory it never touches (`owned_ports`), so the fabric's ports are resident once, not once
//! per partition. It holds only its flows (`transport::Flows`), found by id through a table.
//!
//! Synchronization is conservative, in windows (`engine::Windows`): a packet sent at t on a
//! cut link arrives at t + serialization + propagation >= t + L, where L (`window_ps`) is the
//! smallest propagation delay of a link any partitioning may cut. So every partition may run
//! the events of [t0, t0 + L) alone, where t0 is the earliest pending event anywhere; at the
//! window's end the outboxes are delivered and the next window begins. Whole-fabric work runs
//! between windows, on every partition's state at once: the PFC deadlock scan, the progress
//! watchdog, the end of the run.
//!
//! Why results are one simulation's: events at an instant run in an order read from the
//! events (`sim::queue::tie_key`), every entity draws from its own random stream
//! (`sim::rng::Stream`), and one simulation keeps the same windows and ends where the
//! coordinator does, so each partition runs exactly the single run's events of what it owns,
//! in the same order. Threads only decide which core runs a partition.

use crate::cc::{ReceiverStates, SenderStates};
use crate::engine::{SimError, Simulation, Watchdog, Windows};
use crate::metrics::{Metrics, SyncStats};
use crate::net::pfc::DeadlockDetector;
use crate::net::{Arena, IntHop, IntStack, Packet, PktKind, Port, MAX_INT_HOPS};
use crate::sim::alloc::{small_pages, zero_and_release, HUGE_PAGE_BYTES};
use crate::sim::rng::Stream;
use crate::sim::{Event, EventQueue, TimerOwner};
use crate::topo::{Layer, Topology};
use crate::transport::{Flow, Flows};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// The most partitions a fabric is cut into: more threads than this find no more work.
pub const MAX_PARTITIONS: usize = 16;
// A port names the partition its peer is in with one byte (`Port::cut`).
const _: () = assert!(MAX_PARTITIONS < 256);

/// How many crossings ahead `cross` and `receive_crossings` prefetch what they write.
const OUTBOX_AHEAD: usize = 12;

/// A packet or PFC frame on its way to another partition.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    arrive_ps: u64,
    /// The receiving port (the cut link's far end), and the packet's place on the link
    /// (`Event::Arrive`).
    port: u32,
    link_seq: u32,
    pkt: Packet,
}

/// Crossings in emission order, and the valid INT records of each (`int_hops`) beside them,
/// one after another (runs with `int` only).
#[derive(Clone, Debug)]
struct Batch {
    pkts: Vec<Crossing>,
    ints: Vec<IntHop>,
    /// Final sizes of stopped long-lived flows, for their receivers (`tell_receiver_size`).
    sizes: Vec<(u32, u64)>,
    /// The earliest arrival (u64::MAX: none).
    first_ps: u64,
}

impl Default for Batch {
    fn default() -> Self {
        Batch {
            pkts: Vec::new(),
            ints: Vec::new(),
            sizes: Vec::new(),
            first_ps: u64::MAX,
        }
    }
}

impl Batch {
    fn clear(&mut self) {
        self.pkts.clear();
        self.ints.clear();
        self.sizes.clear();
        self.first_ps = u64::MAX;
    }
    fn is_empty(&self) -> bool {
        self.pkts.is_empty() && self.sizes.is_empty()
    }
}

/// What a partition's simulation knows of the parallel run (`Simulation::part`).
#[derive(Clone, Debug)]
pub struct Part {
    index: usize,
    /// Partition of every port's node.
    port_owner: std::sync::Arc<[u16]>,
    /// Crossings sent this window, by receiving partition: the slots it sends into, held for
    /// the window (`run_window`).
    outbox: Vec<Batch>,
    /// The earliest deadlock scan this partition asked for in the last window (u64::MAX:
    /// none), which the coordinator makes between windows.
    pub(crate) deadlock_at_ps: u64,
    /// The time of the next event in the queue after the last window (u64::MAX: none).
    next_ps: u64,
    /// Packets and PFC frames taken in from other partitions.
    received: u64,
}

/// Send packet `pkt`, arriving at port `port` of partition `to` at `arrive_ps`, with its INT
/// records from `ints` (runs with INT); `transmit` calls it with the simulation's fields. Out
/// of line: the single-threaded engine never takes this branch.
#[inline(never)]
pub(crate) fn cross(
    part: &mut Option<Box<Part>>,
    pkts: &mut Arena,
    ints: Option<&[IntStack]>,
    (arrive_ps, port, link_seq, to): (u64, u32, u32, usize),
    pkt: u32,
) {
    let c = Crossing {
        arrive_ps,
        port,
        link_seq,
        pkt: pkts[pkt],
    };
    pkts.free(pkt);
    let part = part.as_mut().expect("a cut port is in a partitioned run");
    let out = &mut part.outbox[to];
    out.pkts.push(c);
    out.first_ps = out.first_ps.min(arrive_ps);
    // An outbox's buffers come back cold from the receiving core (`run_window`): start loading
    // the lines the next crossings will write (a prefetch past the end is harmless).
    let ahead = out.pkts.len() + OUTBOX_AHEAD;
    crate::sim::prefetch(out.pkts.as_ptr().wrapping_add(ahead));
    if let Some(ints) = ints {
        let n = int_hops(&c.pkt);
        match ints.get(pkt as usize) {
            Some(stack) => out.ints.extend_from_slice(&stack.hops[..n]),
            None => out.ints.resize(out.ints.len() + n, IntHop::default()),
        }
        // Up to five records (two and a half lines) a crossing: two lines ahead each time.
        let ahead = out
            .ints
            .as_ptr()
            .wrapping_add(out.ints.len() + 2 * OUTBOX_AHEAD);
        crate::sim::prefetch(ahead);
        crate::sim::prefetch(ahead.wrapping_add(2));
    }
}

/// How many INT records packet `p` carries (`Packet::sub`; a PFC frame's `sub` is its class).
fn int_hops(p: &Packet) -> usize {
    match p.kind {
        PktKind::Pause | PktKind::Resume => 0,
        _ => (p.sub as usize).min(MAX_INT_HOPS),
    }
}

impl Simulation {
    /// Long-lived flow `fid` stopped at its sender: a receiver in another partition learns its
    /// final size at the start of the next window, within one lookahead (in one simulation, it
    /// knows at once).
    pub(crate) fn tell_receiver_size(&mut self, fid: u32) {
        let f = &self.flows[fid as usize];
        let dst_port = self.hosts[f.dst as usize].port;
        let part = self.part.as_mut().expect("a partition");
        let to = part.port_owner[dst_port as usize] as usize;
        if to != part.index {
            part.outbox[to].sizes.push((fid, f.size_bytes));
        }
    }

    /// A sampling event runs in every partition (each samples what it owns); partition 0
    /// alone counts it in `events`, so a parallel run's count means what a single run's does.
    pub(crate) fn count_shared_once(&mut self) {
        if self.part.as_ref().is_some_and(|p| p.index != 0) {
            self.events -= 1;
        }
    }

    /// Take in the packets another partition sent.
    fn receive_crossings(&mut self, b: &Batch) {
        if let Some(part) = &mut self.part {
            part.received += b.pkts.len() as u64;
        }
        for &(fid, size) in &b.sizes {
            self.flows[fid as usize].size_bytes = size;
        }
        let mut hops = &b.ints[..];
        for (i, c) in b.pkts.iter().enumerate() {
            // The slots a few crossings on will fill were freed long ago: start loading them.
            if let (Some(next), Some(later)) = (
                self.pkts.upcoming(OUTBOX_AHEAD),
                b.pkts.get(i + OUTBOX_AHEAD),
            ) {
                self.pkts.prefetch(next);
                if let Some(int) = self.ints.get(next as usize) {
                    for h in int.hops.iter().take(int_hops(&later.pkt)) {
                        crate::sim::prefetch(h);
                    }
                }
            }
            let id = self.pkts.alloc(c.pkt);
            if self.s.int_enabled {
                let (these, rest) = hops.split_at(int_hops(&c.pkt));
                self.set_int(id, these);
                hops = rest;
            }
            self.q.push(
                c.arrive_ps,
                Event::Arrive {
                    port: c.port,
                    pkt: id,
                    link_seq: c.link_seq,
                },
            );
        }
    }

    /// Packet `id`'s first INT records, growing the side table to the arena's size.
    fn set_int(&mut self, id: u32, hops: &[IntHop]) {
        let i = id as usize;
        if i >= self.ints.len() {
            self.ints
                .resize(self.pkts.capacity_used().max(i + 1), IntStack::default());
        }
        self.ints[i].hops[..hops.len()].copy_from_slice(hops);
    }
}

/// The switch layer `partition` deals out: only a link with an end in it can be cut.
fn top_layer(topo: &Topology) -> Layer {
    (topo.nodes.iter().map(|nd| nd.layer))
        .filter(|&l| l != Layer::Host)
        .max()
        .unwrap_or(Layer::Tor)
}

/// The length of the run's windows (`engine::Windows`), from the fabric alone so that every
/// partitioning shares them: the shortest delay of a link any partitioning may cut (one with
/// an end in the top layer), at most the PFC deadlock detection time (a scan asked for in a
/// window then falls after it), at least 1 ps.
pub fn window_ps(topo: &Topology, ports: &[Port], deadlock_after_ps: u64) -> u64 {
    let top = top_layer(topo);
    let in_top = |p: &Port| topo.nodes[p.node as usize].layer == top;
    let cuttable = (ports.iter())
        .filter(|p| in_top(p) || in_top(&ports[p.peer as usize]))
        .map(|p| p.delay_ps)
        .min()
        .unwrap_or(u64::MAX);
    let scan = if deadlock_after_ps > 0 {
        deadlock_after_ps
    } else {
        u64::MAX
    };
    cuttable.min(scan).max(1)
}

/// How a fabric is cut: the partition of every node.
#[derive(Clone, Debug)]
pub struct Partitioning {
    pub node_owner: Vec<u16>,
    pub parts: usize,
}

/// Cut `topo` into at most `most` partitions (1 to `MAX_PARTITIONS`) by its shape alone (see
/// the module header).
pub fn partition(topo: &Topology, most: usize) -> Partitioning {
    let n = topo.nodes.len();
    let top = top_layer(topo);
    // Components without the top layer (union-find, smallest node id as the root).
    let mut root: Vec<u32> = (0..n as u32).collect();
    fn find(root: &mut [u32], mut x: u32) -> u32 {
        while root[x as usize] != x {
            root[x as usize] = root[root[x as usize] as usize];
            x = root[x as usize];
        }
        x
    }
    for l in &topo.links {
        if topo.nodes[l.a as usize].layer == top || topo.nodes[l.b as usize].layer == top {
            continue;
        }
        let (a, b) = (find(&mut root, l.a), find(&mut root, l.b));
        let (lo, hi) = (a.min(b), a.max(b));
        root[hi as usize] = lo;
    }
    // Components in order of their smallest node, with their hosts counted.
    let mut comp_of = vec![u32::MAX; n];
    let mut comps: Vec<u64> = Vec::new();
    let is_host = |i: usize| topo.nodes[i].layer == Layer::Host;
    for i in 0..n {
        if topo.nodes[i].layer == top && !is_host(i) {
            continue;
        }
        let r = find(&mut root, i as u32) as usize;
        if comp_of[r] == u32::MAX {
            comp_of[r] = comps.len() as u32;
            comps.push(0);
        }
        comp_of[i] = comp_of[r];
        comps[comp_of[i] as usize] += is_host(i) as u64;
    }
    let parts = comps.len().clamp(1, most.clamp(1, MAX_PARTITIONS));
    // Consecutive components into `parts` groups of about equal hosts.
    let total: u64 = comps.iter().sum::<u64>().max(1);
    let mut group = Vec::with_capacity(comps.len());
    let mut seen = 0u64;
    for (c, &hosts) in comps.iter().enumerate() {
        let by_hosts = (seen * parts as u64 / total) as usize;
        // Never more groups than components left can fill.
        let g = by_hosts
            .max(parts.saturating_sub(comps.len() - c))
            .min(parts - 1);
        group.push(g as u16);
        seen += hosts;
    }
    // The top layer in runs of consecutive ids, about as many switches to each partition: a
    // switch's links up to the top layer are made in the order of the top switches' ids, so
    // the ports of a run lie together. Dealt in turn, each partition had one port on every
    // page of the others' (at k = 32 on 16 threads, 2 MB resident for 0.5 MB of ports).
    let top_switches = comp_of.iter().filter(|&&c| c == u32::MAX).count();
    let mut node_owner = vec![0u16; n];
    let mut dealt = 0usize;
    for i in 0..n {
        node_owner[i] = match comp_of[i] {
            u32::MAX => {
                dealt += 1;
                ((dealt - 1) * parts / top_switches) as u16
            }
            c => group[c as usize],
        };
    }
    Partitioning { node_owner, parts }
}

/// Which partition runs event `ev` of `sim` (None: the coordinator's whole-fabric work; every
/// partition: `u16::MAX`).
fn event_owner(
    sim: &Simulation,
    (port_owner, flow_owner): (&[u16], &[(u16, u16)]),
    ev: Event,
) -> Option<u16> {
    let host = |h: u32| port_owner[sim.hosts[h as usize].port as usize];
    let src = |f: u32| flow_owner[f as usize].0;
    let dst = |f: u32| flow_owner[f as usize].1;
    Some(match ev {
        Event::TxDone { port } | Event::Arrive { port, .. } => port_owner[port as usize],
        Event::FlowStart { flow } | Event::FlowStop { flow } | Event::Rto { flow, .. } => src(flow),
        Event::AckTimer { flow } | Event::StopHeard { flow } => dst(flow),
        Event::NicWake { host: h } => host(h),
        Event::Timer { owner, id, .. } => match owner {
            TimerOwner::Sender => src(id),
            TimerOwner::Receiver => dst(id),
            TimerOwner::Host => host(id),
            TimerOwner::Port => port_owner[id as usize],
        },
        Event::SampleQueues | Event::SampleRates => u16::MAX,
        Event::DeadlockCheck | Event::ProgressCheck => return None,
    })
}

/// Turn `sim`, a copy of the build without its events, into partition `index`: mark its cut
/// ports, queue the events of what it owns (`events`, the build's in their order), keep the
/// probes of what it owns, count the flows it sends.
fn make_part(
    sim: &mut Simulation,
    index: usize,
    parts: usize,
    (port_owner, flow_owner): (&std::sync::Arc<[u16]>, &[(u16, u16)]),
    events: &[(u64, Event)],
) {
    let me = index as u16;
    sim.cut_ports = vec![0; sim.ports.len().div_ceil(64)];
    for p in (0..sim.ports.len()).filter(|&p| port_owner[p] == me) {
        let peer = sim.ports[p].peer as usize;
        let to = port_owner[peer];
        sim.ports[p].cut = if to == me { 0 } else { to as u8 + 1 };
        if to != me {
            sim.cut_ports[p / 64] |= 1 << (p % 64);
        }
    }
    for &(t, ev) in events {
        match event_owner(sim, (port_owner, flow_owner), ev) {
            Some(o) if o == me || o == u16::MAX => sim.q.push(t, ev),
            _ => {}
        }
    }
    let m = &mut sim.metrics;
    m.queue_ports.retain(|&p| port_owner[p as usize] == me);
    if m.rate_all_flows {
        m.rate_all_flows = false;
        m.rate_flows = (0..sim.flows.len() as u32).collect();
    }
    let mut rate_flows = std::mem::take(&mut sim.metrics.rate_flows);
    rate_flows.retain(|&f| flow_owner[f as usize].0 == me);
    sim.metrics.rate_flows = rate_flows;
    sim.flows_open = flow_owner.iter().filter(|o| o.0 == me).count();
    sim.windows.end_ps = u64::MAX;
    sim.part = Some(Box::new(Part {
        index,
        port_owner: port_owner.clone(),
        outbox: vec![Batch::default(); parts],
        deadlock_at_ps: u64::MAX,
        next_ps: sim.q.peek_time().unwrap_or(u64::MAX),
        received: 0,
    }));
}

/// Partition `me`'s entries of a per-port array (the ports, their random streams and timer
/// epochs): a copy of those of the ports it owns, the others zeroed and untouched (`Port`). A
/// huge page of the array of which it owns less than half gets small pages, so that the
/// others' entries around its own are not resident; where it owns more, a packet's hops keep
/// the huge page's reach in the TLB.
fn owned_ports<T: bytemuck::Zeroable + Clone>(
    per_port: &[T],
    port_owner: &[u16],
    me: usize,
) -> Vec<T> {
    let mut mine: Vec<T> = bytemuck::zeroed_vec(per_port.len());
    for block in huge_page_blocks(&mine) {
        let own = block.clone().filter(|&q| port_owner[q] as usize == me);
        if 2 * own.count() < block.len() {
            small_pages(&mine[block]);
        }
    }
    for (q, entry) in per_port.iter().enumerate() {
        if port_owner[q] as usize == me {
            mine[q] = entry.clone();
        }
    }
    mine
}

/// The index ranges of `v` whose entries start in the same huge page, in order.
fn huge_page_blocks<T>(v: &[T]) -> Vec<std::ops::Range<usize>> {
    let huge_page =
        |i: usize| (v.as_ptr() as usize + i * std::mem::size_of::<T>()) / HUGE_PAGE_BYTES;
    let mut blocks = Vec::new();
    let mut start = 0;
    while start < v.len() {
        let page = huge_page(start);
        let end = (start..v.len())
            .find(|&i| huge_page(i) != page)
            .unwrap_or(v.len());
        blocks.push(start..end);
        start = end;
    }
    blocks
}

/// The barrier between windows. It spins (a window is short, and a sleeping thread would take
/// longer to wake than the window to run), and with more threads than cores it yields at once,
/// so that the thread everyone waits for gets a core.
struct SpinBarrier {
    threads: usize,
    spins: u32,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn wait(&self) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::AcqRel);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == gen {
            spins += 1;
            if spins < self.spins {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// A run cut into partitions, each a `Simulation`, run by `threads` threads.
pub struct Parallel {
    shared: Arc<Shared>,
    /// The helper threads (all but the caller's), started by the first `run_events`.
    pool: Option<Pool>,
    node_owner: Vec<u16>,
    /// Order of the probed ports and rate-sampled flows in the single-run output.
    queue_order: Vec<u32>,
    rate_order: Option<Vec<u32>>,
    ctl: Control,
}

/// What every thread reaches: the partitions and the crossings between them.
struct Shared {
    parts: Vec<Mutex<Simulation>>,
    port_owner: std::sync::Arc<[u16]>,
    /// Per flow: the partitions of its sender and of its receiver.
    flow_owner: Vec<(u16, u16)>,
    /// Crossings sent in a window, slot `(parity * parts + from) * parts + to` where parity
    /// is the window's number mod 2: a window's crossings are taken in at the start of the
    /// next, which sends into the other half meanwhile.
    slots: Vec<Mutex<Batch>>,
}

/// The coordinator's state: the whole-fabric checks and where the run is.
struct Control {
    /// The windows, as one simulation has them; their length is the lookahead.
    windows: Windows,
    deadlock: DeadlockDetector,
    watchdog: Watchdog,
    stop_ps: u64,
    /// Start of the next window (the end of the last).
    now_ps: u64,
    done: bool,
    stats: SyncStats,
}

/// What the coordinator decided for the next window.
enum Plan {
    Run {
        end_ps: u64,
    },
    /// Return to the caller (the event budget of this call is spent, or the run is over).
    Yield,
}

impl Parallel {
    /// A parallel run of `first`, the scenario built, cut into the partitions of `cut` (which
    /// cuts no link without delay: the scenario refuses that).
    pub fn new(mut first: Simulation, cut: Partitioning, threads: usize) -> Parallel {
        let parts = cut.parts;
        let port_owner: std::sync::Arc<[u16]> = first
            .ports
            .iter()
            .map(|p| cut.node_owner[p.node as usize])
            .collect();
        // The other partitions start as copies of the build (the same for all of them, and a
        // copy costs a fraction of it: no routes, no flow generation). Each keeps the ports it
        // owns; the others stay zeroed, untouched memory (`Port`). Each holds the flows it
        // sends or receives (`FlowArrays`). Each queues the events it owns, taken from the
        // build's queue in their order.
        let host_owner = |h: u32| port_owner[first.hosts[h as usize].port as usize];
        let flow_owner: Vec<(u16, u16)> = (first.flow_ends.iter())
            .map(|&(src, dst)| (host_owner(src), host_owner(dst)))
            .collect();
        let flow_arrays = FlowArrays::take(&mut first);
        let ports = std::mem::take(&mut first.ports);
        let mut events = Vec::new();
        while let Some(e) = first.q.pop() {
            events.push(e);
        }
        first.q = EventQueue::default();
        let (streams, timers) = (&first.streams.ports, &first.port_timers);
        let owned = |i: usize| {
            (
                owned_ports(&ports, &port_owner, i),
                owned_ports(streams, &port_owner, i),
                owned_ports(timers, &port_owner, i),
            )
        };
        let copiers = threads.clamp(1, parts);
        let per_copier = (parts - 1).div_ceil(copiers).max(1);
        let mut copies: Vec<Option<Simulation>> = (1..parts).map(|_| None).collect();
        std::thread::scope(|scope| {
            for (c, chunk) in copies.chunks_mut(per_copier).enumerate() {
                let (first, owned) = (&first, &owned);
                let (flow_arrays, flow_owner) = (&flow_arrays, &flow_owner);
                scope.spawn(move || {
                    for (j, slot) in chunk.iter_mut().enumerate() {
                        let mut sim = first.clone();
                        let me = 1 + c * per_copier + j;
                        (sim.ports, sim.streams.ports, sim.port_timers) = owned(me);
                        flow_arrays.give(&mut sim, flow_owner, me);
                        *slot = Some(sim);
                    }
                });
            }
        });
        (first.ports, first.streams.ports, first.port_timers) = owned(0);
        flow_arrays.give(&mut first, &flow_owner, 0);
        drop((ports, flow_arrays));
        let mut sims = vec![first];
        sims.extend(copies.into_iter().map(|c| c.expect("copied")));
        let first = &sims[0];
        let queue_order = first.metrics.queue_ports.clone();
        let rate_order = (!first.metrics.rate_all_flows).then(|| first.metrics.rate_flows.clone());
        let deadlock = DeadlockDetector {
            found: Vec::new(),
            ..first.deadlock.clone()
        };
        let watchdog = first.watchdog.clone();
        // No cut link is shorter than a window (`window_ps`).
        let windows = first.windows.clone();
        let lookahead_ps = windows.len_ps;
        let stop_ps = first.stop_ps;
        for (i, sim) in sims.iter_mut().enumerate() {
            make_part(sim, i, parts, (&port_owner, &flow_owner), &events);
        }
        Parallel {
            shared: Arc::new(Shared {
                parts: sims.into_iter().map(Mutex::new).collect(),
                port_owner,
                flow_owner,
                slots: (0..2 * parts * parts)
                    .map(|_| Mutex::new(Batch::default()))
                    .collect(),
            }),
            pool: None,
            node_owner: cut.node_owner,
            queue_order,
            rate_order,
            ctl: Control {
                windows,
                deadlock,
                watchdog,
                stop_ps,
                now_ps: 0,
                done: false,
                stats: SyncStats {
                    partitions: parts,
                    threads: threads.clamp(1, parts),
                    lookahead_ps,
                    ..SyncStats::default()
                },
            },
        }
    }

    fn partitions(&self) -> usize {
        self.shared.parts.len()
    }
    /// Where the run is: the end of the last window (at the end, the run's end time).
    pub fn now_ps(&self) -> u64 {
        self.ctl.now_ps
    }
    pub fn stop_ps(&self) -> u64 {
        self.ctl.stop_ps
    }
    /// Events run so far, all partitions.
    pub fn events(&self) -> u64 {
        (0..self.partitions())
            .map(|i| self.shared.part(i).events)
            .sum()
    }
    /// Flows not yet finished.
    pub fn flows_open(&self) -> usize {
        (0..self.partitions())
            .map(|i| self.shared.part(i).flows_open)
            .sum()
    }
    pub fn flows_total(&self) -> usize {
        self.shared.part(0).flows.len()
    }

    /// Run windows until about `max_events` more events ran (at least one window). Returns
    /// Ok(true) when the run is over. Where it stops between calls does not change the
    /// results; the threads sleep between calls.
    pub fn run_events(&mut self, max_events: u64) -> Result<bool, SimError> {
        if self.ctl.done {
            return Ok(true);
        }
        let start_events = self.events();
        let threads = self.ctl.stats.threads;
        let shared = &self.shared;
        let pool = self
            .pool
            .get_or_insert_with(|| Pool::start(shared, threads));
        let (win, ctl) = (Arc::clone(&pool.window), &mut self.ctl);
        pool.open_call();
        let result = loop {
            let t_plan = std::time::Instant::now();
            let plan = match win.failed.lock().expect("error slot").take() {
                Some((_, e)) => Err(e),
                None => ctl.plan(shared, start_events, max_events),
            };
            ctl.stats.serial_s += t_plan.elapsed().as_secs_f64();
            let end_ps = match plan {
                Ok(Plan::Run { end_ps }) => end_ps,
                other => {
                    win.pause_helpers();
                    break other.map(|_| ctl.done);
                }
            };
            win.end_ps.store(end_ps, Ordering::Release);
            win.no.store(ctl.stats.windows, Ordering::Release);
            win.pause.store(false, Ordering::Release);
            for c in &win.claimed {
                c.store(false, Ordering::Relaxed);
            }
            win.barrier.wait();
            run_window_caught(shared, &win, 0);
            win.barrier.wait();
            if win.panicked.load(Ordering::Acquire) {
                // A bug: put the helpers to sleep (so that they end with the run), then fail.
                win.pause_helpers();
                panic!("a partition's thread panicked");
            }
            let took_ns = win.took_ns.iter().map(|n| n.load(Ordering::Relaxed));
            ctl.stats.critical_s += took_ns.clone().max().unwrap_or(0) as f64 * 1e-9;
            ctl.stats.work_s += took_ns.sum::<u64>() as f64 * 1e-9;
            ctl.now_ps = end_ps;
            ctl.stats.windows += 1;
        };
        ctl.stats.busy_s = (win.busy_ns.iter())
            .map(|n| n.load(Ordering::Relaxed) as f64 * 1e-9)
            .collect();
        if result.is_err() {
            ctl.done = true;
        }
        result
    }
}

/// What the threads share within a window, set by the coordinator between barriers.
struct Window {
    barrier: SpinBarrier,
    end_ps: AtomicU64,
    /// The window's number: its parity picks the slots it sends into (`Shared::halves`).
    no: AtomicU64,
    /// Set for the barrier that ends a call: the helpers go to sleep.
    pause: AtomicBool,
    /// Per partition: a thread has taken it this window.
    claimed: Vec<AtomicBool>,
    /// Per partition: nanoseconds it took this window.
    took_ns: Vec<AtomicU64>,
    /// Per thread: nanoseconds spent running partitions, since the start.
    busy_ns: Vec<AtomicU64>,
    /// The lowest partition's error, whichever thread found it first.
    failed: Mutex<Option<(usize, SimError)>>,
    /// A thread panicked in its share of the window (a bug).
    panicked: AtomicBool,
}

impl Window {
    /// End a call: the helpers leave the window loop and sleep until the next. The second
    /// barrier: every helper has read `pause` before the next call may clear it.
    fn pause_helpers(&self) {
        self.pause.store(true, Ordering::Release);
        self.barrier.wait();
        self.barrier.wait();
    }
}

/// `run_window`, a panic in it noted in `Window::panicked` so that the thread still meets the
/// others at the barrier (the caller then fails, instead of every thread waiting forever).
fn run_window_caught(shared: &Shared, win: &Window, t: usize) {
    let run = std::panic::AssertUnwindSafe(|| run_window(shared, win, t));
    if std::panic::catch_unwind(run).is_err() {
        win.panicked.store(true, Ordering::Release);
    }
}

/// One thread's share of a window: deliver what came in, run to the window's end, send what
/// crossed out, for each partition it takes.
fn run_window(shared: &Shared, win: &Window, t: usize) {
    let parts = shared.parts.len();
    let threads = win.busy_ns.len();
    let end_ps = win.end_ps.load(Ordering::Acquire);
    let (now, last) = shared.halves(win.no.load(Ordering::Acquire));
    let t0 = std::time::Instant::now();
    // A thread runs its own partitions first (t, t + threads, ...: their state stays in its
    // core's cache), then any not yet taken. Who runs one changes nothing.
    let own = (t..parts).step_by(threads);
    let rest = (0..parts).map(|k| (t + k) % parts);
    for i in own.chain(rest) {
        if win.claimed[i].swap(true, Ordering::AcqRel) {
            continue;
        }
        let t_part = std::time::Instant::now();
        let mut sim = shared.part(i);
        for from in 0..parts {
            let mut slot = last[from * parts + i].lock().expect("slot");
            sim.receive_crossings(&slot);
            slot.clear();
        }
        // The outboxes are the slots this window sends into, taken for the window and put back
        // at its end: their last crossings were taken in and cleared in the window before, and
        // their buffers are kept. So a pair of partitions has two buffers, one per half, not a
        // third beside them (each keeps the capacity of its largest batch).
        let part = sim.part.as_mut().expect("a partition");
        for (to, out) in part.outbox.iter_mut().enumerate() {
            let mut slot = now[i * parts + to].lock().expect("slot");
            debug_assert!(slot.is_empty() && out.pkts.capacity() == 0);
            std::mem::swap(&mut *slot, out);
        }
        let ran = sim.run_until(end_ps);
        let next_ps = sim.q.peek_time().unwrap_or(u64::MAX);
        sim.part.as_mut().expect("a partition").next_ps = next_ps;
        if let Err(e) = ran {
            let mut f = win.failed.lock().expect("error slot");
            if f.as_ref().is_none_or(|(j, _)| i < *j) {
                *f = Some((i, e));
            }
        }
        let part = sim.part.as_mut().expect("a partition");
        for (to, out) in part.outbox.iter_mut().enumerate() {
            std::mem::swap(&mut *now[i * parts + to].lock().expect("slot"), out);
        }
        win.took_ns[i].store(t_part.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
    win.busy_ns[t].fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// The helper threads, kept from the first call of `run_events` to the end of the run
/// (starting them at each call cost about a millisecond, and moved them between cores). Within
/// a call they meet the caller at `Window::barrier`; between calls they sleep on `gate`.
struct Pool {
    window: Arc<Window>,
    gate: Arc<(Mutex<Gate>, Condvar)>,
    handles: Vec<JoinHandle<()>>,
}

/// Calls opened so far, and whether the run is over.
#[derive(Default)]
struct Gate {
    calls: u64,
    shutdown: bool,
}

impl Pool {
    fn start(shared: &Arc<Shared>, threads: usize) -> Pool {
        let parts = shared.parts.len();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let window = Arc::new(Window {
            barrier: SpinBarrier {
                threads,
                spins: if threads <= cores { 1 << 14 } else { 0 },
                arrived: AtomicUsize::new(0),
                generation: AtomicUsize::new(0),
            },
            end_ps: AtomicU64::new(0),
            no: AtomicU64::new(0),
            pause: AtomicBool::new(false),
            claimed: (0..parts).map(|_| AtomicBool::new(false)).collect(),
            took_ns: (0..parts).map(|_| AtomicU64::new(0)).collect(),
            busy_ns: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            failed: Mutex::new(None),
            panicked: AtomicBool::new(false),
        });
        let gate = Arc::new((Mutex::new(Gate::default()), Condvar::new()));
        let handles = (1..threads)
            .map(|t| {
                let (shared, win, gate) =
                    (Arc::clone(shared), Arc::clone(&window), Arc::clone(&gate));
                std::thread::spawn(move || helper(t, &shared, &win, &gate))
            })
            .collect();
        Pool {
            window,
            gate,
            handles,
        }
    }

    /// Wake the helpers for a call of `run_events`.
    fn open_call(&self) {
        let (m, cv) = &*self.gate;
        m.lock().expect("gate").calls += 1;
        cv.notify_all();
    }
}

/// Helper thread `t`: sleep until a call opens, then run windows until the call ends.
fn helper(t: usize, shared: &Shared, win: &Window, gate: &(Mutex<Gate>, Condvar)) {
    let mut seen = 0;
    loop {
        {
            let (m, cv) = gate;
            let mut g = m.lock().expect("gate");
            while g.calls == seen && !g.shutdown {
                g = cv.wait(g).expect("gate");
            }
            if g.shutdown {
                return;
            }
            seen = g.calls;
        }
        loop {
            win.barrier.wait();
            if win.pause.load(Ordering::Acquire) {
                win.barrier.wait();
                break;
            }
            run_window_caught(shared, win, t);
            win.barrier.wait();
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let (m, cv) = &*self.gate;
        if let Ok(mut g) = m.lock() {
            g.shutdown = true;
        }
        cv.notify_all();
        // When a call panicked, the helpers have been put to sleep and end on their own.
        if !std::thread::panicking() {
            for h in self.handles.drain(..) {
                h.join().expect("a helper thread ends cleanly");
            }
        }
    }
}

impl Control {
    /// Between windows, with every partition at `now_ps`: the whole-fabric checks, the end of
    /// the run, and the next window's end.
    fn plan(&mut self, sh: &Shared, start_events: u64, max_events: u64) -> Result<Plan, SimError> {
        let parts = sh.parts.len();
        let mut sims: Vec<_> = (0..parts).map(|i| sh.part(i)).collect();
        let now = self.now_ps;
        let mut next = u64::MAX;
        let mut events = 0;
        let mut flows_open = 0;
        let w = &mut self.windows;
        for sim in sims.iter_mut() {
            events += sim.events;
            flows_open += sim.flows_open;
            let part = sim.part.as_mut().expect("a partition");
            next = next.min(part.next_ps);
            let asked = std::mem::replace(&mut part.deadlock_at_ps, u64::MAX);
            w.next_deadlock_ps = w.next_deadlock_ps.min(asked);
        }
        for slot in sh.halves(self.stats.windows).1 {
            let slot = slot.lock().expect("slot");
            next = next.min(slot.first_ps);
        }
        let flows_total = sims[0].flows.len();
        // The end: every flow finished, the stop time reached, or nothing left to happen.
        if flows_total > 0 && flows_open == 0 {
            self.now_ps = (0..flows_total)
                .map(|f| sh.sender(&sims, f).finish_ps)
                .max()
                .unwrap_or(now);
            self.done = true;
            return Ok(Plan::Yield);
        }
        if next > self.stop_ps && self.stop_ps != u64::MAX {
            self.now_ps = self.stop_ps;
            self.done = true;
            return Ok(Plan::Yield);
        }
        if now >= self.windows.next_deadlock_ps {
            let view: Vec<&Port> = (0..sims[0].ports.len())
                .map(|q| &sims[sh.port_owner[q] as usize].ports[q])
                .collect();
            let next_scan =
                super::pfc::scan_deadlocks(&view, &sims[0].switch_index, &mut self.deadlock, now);
            let pending = next_scan != u64::MAX && next != u64::MAX;
            self.windows.next_deadlock_ps = if pending { next_scan } else { u64::MAX };
            for sim in sims.iter_mut() {
                sim.deadlock.scan_pending = pending;
            }
        }
        if now >= self.windows.next_progress_ps && flows_open > 0 {
            let progress = super::Progress {
                now_ps: now,
                delivered_bytes: sims.iter().map(|s| s.metrics.delivered_bytes).sum(),
                drops: (sh.port_owner.iter().enumerate())
                    .map(|(q, &o)| sims[o as usize].ports[q].drops)
                    .sum(),
                started_open: (0..flows_total).any(|f| {
                    let fl = sh.sender(&sims, f);
                    !fl.finished && fl.start_ps < now
                }),
                deadlocked: !self.deadlock.found.is_empty(),
                flows_open,
            };
            let open = || super::open_flows((0..flows_total).map(|f| sh.sender(&sims, f)));
            if let Some(e) = self.watchdog.check(&progress, open) {
                return Err(e);
            }
            self.windows.next_progress_ps = now + self.watchdog.after_ps;
        }
        if next == u64::MAX {
            self.done = true;
            if flows_open > 0 && self.stop_ps == u64::MAX {
                let open = super::open_flows((0..flows_total).map(|f| sh.sender(&sims, f)));
                return Err(sims[0].stall_error(now, flows_open, &self.deadlock, open));
            }
            return Ok(Plan::Yield);
        }
        if events - start_events >= max_events {
            return Ok(Plan::Yield);
        }
        Ok(Plan::Run {
            end_ps: self.windows.end_from(next, now, self.stop_ps),
        })
    }
}

impl Shared {
    /// The slots window `window` sends into, and those of the window before it.
    fn halves(&self, window: u64) -> (&[Mutex<Batch>], &[Mutex<Batch>]) {
        let (a, b) = self.slots.split_at(self.slots.len() / 2);
        if window.is_multiple_of(2) {
            (a, b)
        } else {
            (b, a)
        }
    }

    fn part(&self, i: usize) -> std::sync::MutexGuard<'_, Simulation> {
        self.parts[i].lock().expect("a partition's thread panicked")
    }

    /// Flow `f` as its sender's partition keeps it.
    fn sender<'a>(&self, sims: &'a [std::sync::MutexGuard<'_, Simulation>], f: usize) -> &'a Flow {
        &sims[self.flow_owner[f].0 as usize].flows[f]
    }
}

/// Every flow of the run, for partition 0 (`parts[0]`) to hold at the end: each from its
/// sender's partition with the receiver's half from its receiver's, and both ends' scheme
/// states and random streams.
fn merge_flows(parts: &mut [Simulation], flow_owner: &[(u16, u16)]) {
    let n = flow_owner.len();
    let cc = parts[0].cc.clone();
    let (mut senders, mut receivers) = (cc.new_senders(n), cc.new_receivers(n));
    let mut tx_streams: Vec<Stream> = bytemuck::zeroed_vec(n);
    let mut rx_streams: Vec<Stream> = bytemuck::zeroed_vec(n);
    let mut flows: Vec<Option<Flow>> = vec![None; n];
    for (p, sim) in parts.iter_mut().enumerate() {
        let p = p as u16;
        for (i, (fid, mut f)) in std::mem::take(&mut sim.flows).into_held().enumerate() {
            let (so, ro) = flow_owner[fid];
            if so == p {
                senders.swap_at(fid, &mut sim.senders, i);
                tx_streams[fid] = sim.streams.senders[i];
            }
            if ro == p {
                receivers.swap_at(fid, &mut sim.receivers, i);
                rx_streams[fid] = sim.streams.receivers[i];
            }
            flows[fid] = Some(match flows[fid].take() {
                None => f,
                Some(mut sent) if ro == p => {
                    sent.take_receiver_half(&mut f);
                    sent
                }
                Some(mut received) => {
                    f.take_receiver_half(&mut received);
                    f
                }
            });
        }
    }
    let base = &mut parts[0];
    base.flows = Flows::from_all(flows.into_iter().map(|f| f.expect("a flow held by none")));
    (base.senders, base.receivers) = (senders, receivers);
    (base.streams.senders, base.streams.receivers) = (tx_streams, rx_streams);
}

/// The build's per-flow arrays, of which each partition holds the entries of the flows it
/// sends or receives (`Flows`).
struct FlowArrays {
    flows: Flows,
    senders: SenderStates,
    receivers: ReceiverStates,
    tx_streams: Vec<Stream>,
    rx_streams: Vec<Stream>,
}

impl FlowArrays {
    /// Take them out of the build `sim`.
    fn take(sim: &mut Simulation) -> FlowArrays {
        let (no_senders, no_receivers) = (sim.cc.new_senders(0), sim.cc.new_receivers(0));
        FlowArrays {
            flows: std::mem::take(&mut sim.flows),
            senders: std::mem::replace(&mut sim.senders, no_senders),
            receivers: std::mem::replace(&mut sim.receivers, no_receivers),
            tx_streams: std::mem::take(&mut sim.streams.senders),
            rx_streams: std::mem::take(&mut sim.streams.receivers),
        }
    }

    /// Give partition `me`, `sim`, the entries of the flows it sends or receives.
    fn give(&self, sim: &mut Simulation, flow_owner: &[(u16, u16)], me: usize) {
        let me = me as u16;
        let (flows, ids) = Flows::picked(self.flows.all(), |f| {
            flow_owner[f].0 == me || flow_owner[f].1 == me
        });
        let pick = |s: &[Stream]| ids.iter().map(|&f| s[f as usize]).collect();
        sim.flows = flows;
        sim.senders = self.senders.picked(&ids);
        sim.receivers = self.receivers.picked(&ids);
        sim.streams.senders = pick(&self.tx_streams);
        sim.streams.receivers = pick(&self.rx_streams);
    }
}

impl Parallel {
    /// The run as one `Simulation`, for its results: every port, host, switch and scheme state
    /// from the partition that owns it, each flow's halves from its two ends, the probes'
    /// samples in the single-run order, the counters summed.
    pub fn into_simulation(self) -> Simulation {
        drop(self.pool);
        let shared = Arc::into_inner(self.shared).expect("the threads have stopped");
        let port_owner = shared.port_owner;
        let mut parts: Vec<Simulation> = shared
            .parts
            .into_iter()
            .map(|m| m.into_inner().expect("a partition's thread panicked"))
            .collect();
        merge_flows(&mut parts, &shared.flow_owner);
        let (first, rest) = parts.split_at_mut(1);
        let base = &mut first[0];
        let other = |o: u16| o as usize - 1;
        // A huge page at a time, and each page of a partition's port array given back once its
        // ports are taken: partition 0's array becomes the only one that holds every port,
        // without the others' on top of it. What a partition gets in return is partition 0's
        // zeroed entries (it never touched the others' ports).
        for (i, from) in rest.iter_mut().enumerate() {
            let o = i as u16 + 1;
            for block in huge_page_blocks(&from.ports) {
                for q in block.clone().filter(|&q| port_owner[q] == o) {
                    std::mem::swap(&mut base.ports[q], &mut from.ports[q]);
                    if !base.sw_parts.is_empty() {
                        base.sw_parts.swap_at(q, &mut from.sw_parts, q);
                        base.port_timers[q] = from.port_timers[q];
                    }
                }
                zero_and_release(&mut from.ports[block]);
            }
            // SAFETY: length 0 is within the capacity. The entries are zero values, which own
            // nothing: they are freed without being read (reading faults the pages back in).
            unsafe { from.ports.set_len(0) };
        }
        let host_owner: Vec<u16> = base
            .hosts
            .iter()
            .map(|h| port_owner[h.port as usize])
            .collect();
        for (h, &o) in host_owner.iter().enumerate() {
            if o != 0 {
                let from = &mut rest[other(o)];
                std::mem::swap(&mut base.hosts[h], &mut from.hosts[h]);
                base.host_rx.swap_at(h, &mut from.host_rx, h);
            }
        }
        for node in 0..base.switch_index.len() {
            let si = base.switch_index[node];
            let o = self.node_owner[node];
            if si != u32::MAX && o != 0 {
                std::mem::swap(
                    &mut base.switches[si as usize],
                    &mut rest[other(o)].switches[si as usize],
                );
            }
        }
        for sim in rest.iter_mut() {
            base.events += sim.events;
            base.link_traversals += sim.link_traversals;
            base.flows_open += sim.flows_open;
        }
        let live: u64 = std::iter::once(&*base)
            .chain(rest.iter())
            .map(|s| s.pkts.capacity_used() as u64)
            .sum();
        let all: Vec<&mut Metrics> = std::iter::once(&mut base.metrics)
            .chain(rest.iter_mut().map(|s| &mut s.metrics))
            .collect();
        let mut merged = merge_metrics(all, &self.queue_order, self.rate_order.as_deref());
        merged.packets_live_max = Some(live);
        let mut stats = self.ctl.stats;
        stats.crossings = std::iter::once(&*base)
            .chain(rest.iter())
            .map(|s| s.part.as_ref().map_or(0, |p| p.received))
            .sum();
        merged.sync = Some(stats);
        base.metrics = merged;
        base.deadlock.found = self.ctl.deadlock.found;
        base.deadlock.scan_pending = false;
        base.now_ps = self.ctl.now_ps;
        base.part = None;
        parts.swap_remove(0)
    }
}

/// The partitions' metrics as one run's: queue and rate samples by time and then the single
/// run's port and flow order (PFC frames are ordered as a table, `pfc_events_table`).
fn merge_metrics(
    mut all: Vec<&mut Metrics>,
    queue_order: &[u32],
    rate_order: Option<&[u32]>,
) -> Metrics {
    let first = &mut *all[0];
    let mut m = Metrics {
        queue_ports: queue_order.to_vec(),
        queue_interval_ps: first.queue_interval_ps,
        queue_start_ps: first.queue_start_ps,
        queue_stop_ps: first.queue_stop_ps,
        rate_start_ps: first.rate_start_ps,
        rate_stop_ps: first.rate_stop_ps,
        queue_by_flow: first.queue_by_flow,
        rate_all_flows: rate_order.is_none(),
        rate_flows: rate_order.map(<[u32]>::to_vec).unwrap_or_default(),
        rate_interval_ps: first.rate_interval_ps,
        ..Metrics::default()
    };
    let port_rank: std::collections::HashMap<u32, usize> = queue_order
        .iter()
        .enumerate()
        .map(|(i, &p)| (p, i))
        .collect();
    let flow_rank: Option<std::collections::HashMap<u32, usize>> =
        rate_order.map(|o| o.iter().enumerate().map(|(i, &f)| (f, i)).collect());
    let mut pfc = Vec::new();
    let mut q = Vec::new();
    let mut fq = Vec::new();
    let mut r = Vec::new();
    for p in all.iter_mut() {
        m.delivered_bytes += p.delivered_bytes;
        pfc.append(&mut p.pfc_events);
        for i in 0..p.q_time_ps.len() {
            q.push((
                p.q_time_ps[i],
                port_rank[&p.q_port[i]],
                p.q_port[i],
                p.q_bytes[i],
                p.q_util[i],
            ));
        }
        for i in 0..p.fq_time_ps.len() {
            fq.push((
                p.fq_time_ps[i],
                port_rank[&p.fq_port[i]],
                p.fq_flow[i],
                p.fq_port[i],
                p.fq_bytes[i],
            ));
        }
        for i in 0..p.r_time_ps.len() {
            let f = p.r_flow[i];
            let rank = flow_rank.as_ref().map_or(f as usize, |k| k[&f]);
            r.push((p.r_time_ps[i], rank, f, p.r_rate_bps[i], p.r_tput_bps[i]));
        }
    }
    m.pfc_events = pfc;
    q.sort_by_key(|a| (a.0, a.1));
    for (t, _, port, bytes, util) in q {
        m.q_time_ps.push(t);
        m.q_port.push(port);
        m.q_bytes.push(bytes);
        m.q_util.push(util);
    }
    fq.sort_by_key(|a| (a.0, a.1, a.2));
    for (t, _, flow, port, bytes) in fq {
        m.fq_time_ps.push(t);
        m.fq_port.push(port);
        m.fq_flow.push(flow);
        m.fq_bytes.push(bytes);
    }
    r.sort_by_key(|a| (a.0, a.1));
    for (t, _, flow, rate, tput) in r {
        m.r_time_ps.push(t);
        m.r_flow.push(flow);
        m.r_rate_bps.push(rate);
        m.r_tput_bps.push(tput);
    }
    m
}

/// Events past which a run is refused unless allowed (`Run::refuse_endless`).
pub const LIFETIME_EVENTS: f64 = 1e12;

/// A run on one thread (the single-threaded engine) or many (`Parallel`).
pub enum Run {
    One(Box<Simulation>),
    Many(Box<Parallel>),
}

impl Run {
    /// Process about `max_events` events. Returns Ok(true) when the run is over.
    pub fn run_events(&mut self, max_events: u64) -> Result<bool, SimError> {
        match self {
            Run::One(s) => s.run_events(max_events),
            Run::Many(p) => p.run_events(max_events),
        }
    }
    /// Run to completion.
    pub fn run(&mut self) -> Result<(), SimError> {
        while !self.run_events(1 << 20)? {}
        Ok(())
    }
    pub fn now_ps(&self) -> u64 {
        match self {
            Run::One(s) => s.now_ps,
            Run::Many(p) => p.now_ps(),
        }
    }
    pub fn stop_ps(&self) -> u64 {
        match self {
            Run::One(s) => s.stop_ps,
            Run::Many(p) => p.stop_ps(),
        }
    }
    pub fn events(&self) -> u64 {
        match self {
            Run::One(s) => s.events,
            Run::Many(p) => p.events(),
        }
    }
    pub fn flows_open(&self) -> usize {
        match self {
            Run::One(s) => s.flows_open,
            Run::Many(p) => p.flows_open(),
        }
    }
    pub fn flows_total(&self) -> usize {
        match self {
            Run::One(s) => s.flows.len(),
            Run::Many(p) => p.flows_total(),
        }
    }
    /// The warnings the build left (the run adds more as it goes).
    pub fn warnings(&self) -> Vec<String> {
        match self {
            Run::One(s) => s.warnings.clone(),
            Run::Many(p) => p.shared.part(0).warnings.clone(),
        }
    }
    /// An error if building estimates the run needs over `LIFETIME_EVENTS` events
    /// (`Simulation::estimated_events`): days of computing, where a setting is likely a slip.
    /// `allow` (the user's explicit request) lets it run.
    pub fn refuse_endless(&self, allow: bool) -> Result<(), String> {
        let estimate = match self {
            Run::One(s) => &s.estimated_events,
            Run::Many(p) => &p.shared.part(0).estimated_events,
        };
        match estimate {
            Some((events, why)) if !allow && *events > LIFETIME_EVENTS => Err(format!(
                "{why}. Refused: the run needs some {events:.0e} events, over {LIFETIME_EVENTS:.0e} (a day or more at 10-20 M events/s); fix the setting, or allow a run that long (--allow-long on ccsim run, sweep or reproduce; allow_long=True in Python)"
            )),
            _ => Ok(()),
        }
    }
    /// The run as one simulation, for its results.
    pub fn into_simulation(self) -> Simulation {
        match self {
            Run::One(s) => *s,
            Run::Many(p) => p.into_simulation(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A partition's port array: its own ports as built, every other entry zeroed (no rate, no
    /// peer), whichever pages the array's huge pages were split into.
    #[test]
    fn a_partition_holds_only_its_own_ports() {
        let toml = crate::bench::scenario("fattree-k8").expect("a benchmark");
        let sc = crate::Scenario::load(&toml, std::path::Path::new("."), None, &[]).unwrap();
        let sim = sc.build().unwrap();
        let cut = partition(&sim.topo, 4);
        let owner: Vec<u16> = (sim.ports.iter())
            .map(|p| cut.node_owner[p.node as usize])
            .collect();
        for me in 0..cut.parts {
            let mine = owned_ports(&sim.ports, &owner, me);
            assert_eq!(mine.len(), sim.ports.len());
            let (mut own, mut other) = (0, 0);
            for (q, (p, built)) in mine.iter().zip(&sim.ports).enumerate() {
                if owner[q] as usize == me {
                    own += 1;
                    assert_eq!(
                        (p.node, p.peer, p.rate_bps),
                        (built.node, built.peer, built.rate_bps)
                    );
                    assert_eq!(
                        (p.delay_ps, p.kmin_bytes, p.txdone_at_ps),
                        (built.delay_ps, built.kmin_bytes, built.txdone_at_ps)
                    );
                } else {
                    other += 1;
                    assert_eq!(
                        (p.node, p.peer, p.rate_bps, p.delay_ps),
                        (0, 0, 0, 0),
                        "port {q}"
                    );
                }
            }
            assert!(
                own > 0 && other > 0,
                "partition {me}: {own} own ports, {other} others"
            );
        }
    }

    /// A partition holds the flows its hosts send or receive, found by id, and no other; the
    /// run as one simulation holds every flow again, in id order.
    #[test]
    fn a_partition_holds_only_the_flows_of_its_hosts() {
        let toml = crate::bench::scenario("fattree-k8").expect("a benchmark");
        let sc = crate::Scenario::load(&toml, std::path::Path::new("."), None, &[]).unwrap();
        let sim = sc.build().unwrap();
        let ends = sim.flow_ends.clone();
        let cut = partition(&sim.topo, 4);
        let host_part = |h: u32| cut.node_owner[sim.topo.hosts[h as usize] as usize];
        let owners: Vec<(u16, u16)> = ends
            .iter()
            .map(|&(s, d)| (host_part(s), host_part(d)))
            .collect();
        let run = Parallel::new(sim, cut.clone(), 1);
        for me in 0..cut.parts as u16 {
            let part = run.shared.part(me as usize);
            let mut held = 0;
            for (f, &(s, d)) in owners.iter().enumerate() {
                let mine = s == me || d == me;
                held += mine as usize;
                assert_eq!(
                    part.flows.get(f).is_some(),
                    mine,
                    "flow {f} in partition {me}"
                );
                if mine {
                    assert_eq!((part.flows[f].src, part.flows[f].dst), ends[f]);
                }
            }
            assert!(
                held > 0 && held < owners.len(),
                "partition {me}: {held} flows"
            );
            assert_eq!(part.flows.iter().count(), held);
        }
        let whole = run.into_simulation();
        let merged: Vec<(u32, u32)> = whole.flows.all().iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(merged, ends.to_vec());
    }

    /// Between windows a partition's outboxes hold no buffer: it sends into the slots
    /// themselves, so each pair of partitions keeps two buffers (one per half), and the slots
    /// hold what crossed.
    #[test]
    fn a_pair_of_partitions_keeps_two_buffers() {
        let toml = crate::bench::scenario("fattree-k8").expect("a benchmark");
        let toml = toml.replace("duration = \"0.5ms\"", "duration = \"0.05ms\"");
        let sc = crate::Scenario::load(&toml, std::path::Path::new("."), None, &[]).unwrap();
        let Run::Many(mut run) = sc.start_parallel(2).unwrap() else {
            panic!("a parallel run");
        };
        while !run.run_events(1 << 20).unwrap() {}
        let parts = run.shared.parts.len();
        for i in 0..parts {
            let sim = run.shared.part(i);
            let outbox = &sim.part.as_ref().expect("a partition").outbox;
            assert!(outbox
                .iter()
                .all(|b| b.pkts.capacity() == 0 && b.ints.capacity() == 0));
        }
        let held = (run.shared.slots.iter()).filter(|s| s.lock().unwrap().pkts.capacity() > 0);
        assert!(held.count() > 0, "no crossings");
    }

    /// The top layer's switches go to the partitions in runs of consecutive ids, as many to
    /// each as the count allows (16 core switches of a k = 8 fat-tree into 2, 3, 4 and 8).
    #[test]
    fn the_top_layer_is_dealt_in_even_runs() {
        let toml = crate::bench::scenario("fattree-k8").expect("a benchmark");
        let sc = crate::Scenario::load(&toml, std::path::Path::new("."), None, &[]).unwrap();
        let topo = sc.build().unwrap().topo;
        let top = top_layer(&topo);
        let tops: Vec<usize> = (0..topo.nodes.len())
            .filter(|&i| topo.nodes[i].layer == top)
            .collect();
        assert_eq!(tops.len(), 16);
        for parts in [2, 3, 4, 8] {
            let cut = partition(&topo, parts);
            assert_eq!(cut.parts, parts);
            let owners: Vec<u16> = tops.iter().map(|&i| cut.node_owner[i]).collect();
            assert!(owners.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1));
            let count = |p: usize| owners.iter().filter(|&&o| o as usize == p).count();
            let (least, most) = (0..parts)
                .map(count)
                .fold((16, 0), |(lo, hi), c| (lo.min(c), hi.max(c)));
            assert!(least > 0 && most - least <= 1, "{parts} parts: {owners:?}");
        }
    }
}
