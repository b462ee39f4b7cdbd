//! Topologies: builders for star, dumbbell, leaf-spine, fat-tree and the ACC chain, readers for
//! ccsim's own topology file and the HPCC simulator's format, and shortest-path ECMP routing.
//! A `Topology` is plain data (nodes, links); `Routes` maps (switch, destination host) to the
//! equal-cost egress choices.

pub mod config;

use crate::sim::input::ScenarioError;
use config::{LinkCfg, TopologyCfg};
use std::collections::VecDeque;

/// Where a node sits in the fabric, for per-layer metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    Host,
    Tor,
    Agg,
    Core,
}

impl Layer {
    /// Every layer, bottom up (the order outputs use).
    pub const ALL: [Layer; 4] = [Layer::Host, Layer::Tor, Layer::Agg, Layer::Core];

    /// Lower-case name used in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Host => "host",
            Layer::Tor => "tor",
            Layer::Agg => "agg",
            Layer::Core => "core",
        }
    }
    fn parse(s: &str) -> Option<Layer> {
        Some(match s {
            "host" => Layer::Host,
            "tor" => Layer::Tor,
            "agg" => Layer::Agg,
            "core" => Layer::Core,
            _ => return None,
        })
    }
}

/// A node: a host (one NIC port) or a switch.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    pub name: String,
    pub layer: Layer,
}

/// A full-duplex link between two nodes.
#[derive(Clone, Copy, Debug)]
pub struct LinkInfo {
    pub a: u32,
    pub b: u32,
    pub rate_bps: u64,
    pub delay_ps: u64,
}

/// Nodes and links. Hosts are numbered by `hosts` (host id -> node id).
#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<NodeInfo>,
    pub links: Vec<LinkInfo>,
    pub hosts: Vec<u32>,
}

fn err(field: &str, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(field, msg)
}

/// The fat-tree's shape from `k` (the classic k-ary fat-tree) or from the explicit
/// `[pods, tors_per_pod, aggs_per_pod, cores, hosts_per_tor]`.
fn fat_tree_shape(
    k: Option<u32>,
    [pods, tors_per_pod, aggs_per_pod, cores, hosts_per_tor]: [Option<u32>; 5],
) -> Result<(u32, u32, u32, u32, u32), ScenarioError> {
    let pos = |f: &str, v: u32| {
        if v == 0 {
            Err(err(f, "must be at least 1"))
        } else {
            Ok(v)
        }
    };
    let dims = match k {
        Some(k) => {
            if k < 2 || !k.is_multiple_of(2) {
                return Err(err(
                    "topology.k",
                    format!("must be an even number >= 2, got {k}; use e.g. 4, 8 or 16"),
                ));
            }
            if pods.is_some()
                || tors_per_pod.is_some()
                || aggs_per_pod.is_some()
                || cores.is_some()
                || hosts_per_tor.is_some()
            {
                return Err(err("topology.k", "give either `k` or the explicit shape (pods, tors_per_pod, aggs_per_pod, cores, hosts_per_tor), not both"));
            }
            (k, k / 2, k / 2, (k / 2) * (k / 2), k / 2)
        }
        None => {
            let need = |f: &str, v: Option<u32>| -> Result<u32, ScenarioError> {
                let v = v.ok_or_else(|| err(&format!("topology.{f}"), "missing; give `k` or all of pods, tors_per_pod, aggs_per_pod, cores, hosts_per_tor"))?;
                pos(&format!("topology.{f}"), v)
            };
            (
                need("pods", pods)?,
                need("tors_per_pod", tors_per_pod)?,
                need("aggs_per_pod", aggs_per_pod)?,
                need("cores", cores)?,
                need("hosts_per_tor", hosts_per_tor)?,
            )
        }
    };
    Ok(dims)
}

/// Most nodes a topology may have. Each node costs routing tables and ports (about 1 KB and
/// more for switches), and building is not linear in size: past this, refuse up front with the
/// count instead of running out of memory.
pub const MAX_NODES: u64 = 1_000_000;

/// Refuse a topology of `nodes` nodes (computed from `field`) before allocating it.
fn check_size(field: &str, nodes: u64) -> Result<(), ScenarioError> {
    if nodes > MAX_NODES {
        return Err(err(
            field,
            format!("gives {nodes} nodes; ccsim builds at most {MAX_NODES} (about 1 KB of memory each, more for switches): use a smaller fabric"),
        ));
    }
    Ok(())
}

impl Topology {
    fn add(&mut self, name: String, layer: Layer) -> u32 {
        let id = self.nodes.len() as u32;
        if layer == Layer::Host {
            self.hosts.push(id);
        }
        self.nodes.push(NodeInfo { name, layer });
        id
    }
    fn link(&mut self, a: u32, b: u32, l: LinkCfg) {
        self.links.push(LinkInfo {
            a,
            b,
            rate_bps: l.rate.0,
            delay_ps: l.delay.0,
        });
    }

    /// Node id of a name.
    pub fn node_by_name(&self, name: &str) -> Option<u32> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as u32)
    }

    /// Build the topology a scenario describes; `base_dir` resolves file paths.
    pub fn build(cfg: &TopologyCfg, base_dir: &std::path::Path) -> Result<Topology, ScenarioError> {
        let mut t = Topology::default();
        let pos = |f: &str, v: u32| {
            if v == 0 {
                Err(err(f, "must be at least 1"))
            } else {
                Ok(v)
            }
        };
        match cfg {
            TopologyCfg::Star { hosts, link } => {
                pos("topology.hosts", *hosts)?;
                if *hosts < 2 {
                    return Err(err("topology.hosts", "a star needs at least 2 hosts"));
                }
                check_size("topology.hosts", *hosts as u64 + 1)?;
                let hs: Vec<u32> = (0..*hosts)
                    .map(|i| t.add(format!("h{i}"), Layer::Host))
                    .collect();
                let sw = t.add("sw0".into(), Layer::Tor);
                for h in hs {
                    t.link(h, sw, *link);
                }
            }
            TopologyCfg::Dumbbell {
                left_hosts,
                right_hosts,
                host_link,
                bottleneck,
            } => {
                pos("topology.left_hosts", *left_hosts)?;
                pos("topology.right_hosts", *right_hosts)?;
                check_size("topology", *left_hosts as u64 + *right_hosts as u64 + 2)?;
                let l: Vec<u32> = (0..*left_hosts)
                    .map(|i| t.add(format!("h{i}"), Layer::Host))
                    .collect();
                let r: Vec<u32> = (0..*right_hosts)
                    .map(|i| t.add(format!("h{}", left_hosts + i), Layer::Host))
                    .collect();
                let sl = t.add("swL".into(), Layer::Tor);
                let sr = t.add("swR".into(), Layer::Tor);
                for h in l {
                    t.link(h, sl, *host_link);
                }
                for h in r {
                    t.link(h, sr, *host_link);
                }
                t.link(sl, sr, *bottleneck);
            }
            TopologyCfg::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                host_link,
                fabric_link,
            } => {
                pos("topology.leaves", *leaves)?;
                pos("topology.spines", *spines)?;
                pos("topology.hosts_per_leaf", *hosts_per_leaf)?;
                let (l, h) = (*leaves as u64, *hosts_per_leaf as u64);
                check_size("topology", l * h + l + *spines as u64)?;
                let n = leaves * hosts_per_leaf;
                let hs: Vec<u32> = (0..n)
                    .map(|i| t.add(format!("h{i}"), Layer::Host))
                    .collect();
                let lv: Vec<u32> = (0..*leaves)
                    .map(|i| t.add(format!("leaf{i}"), Layer::Tor))
                    .collect();
                let sp: Vec<u32> = (0..*spines)
                    .map(|i| t.add(format!("spine{i}"), Layer::Agg))
                    .collect();
                for (i, h) in hs.iter().enumerate() {
                    t.link(*h, lv[i / *hosts_per_leaf as usize], *host_link);
                }
                for &l in &lv {
                    for &s in &sp {
                        t.link(l, s, *fabric_link);
                    }
                }
            }
            TopologyCfg::FatTree {
                k,
                pods,
                tors_per_pod,
                aggs_per_pod,
                cores,
                hosts_per_tor,
                host_link,
                fabric_link,
            } => {
                let shape = [*pods, *tors_per_pod, *aggs_per_pod, *cores, *hosts_per_tor];
                let dims = fat_tree_shape(*k, shape)?;
                let (p, t_, a, c, h) = (
                    dims.0 as u64,
                    dims.1 as u64,
                    dims.2 as u64,
                    dims.3 as u64,
                    dims.4 as u64,
                );
                let field = if k.is_some() {
                    "topology.k"
                } else {
                    "topology"
                };
                check_size(field, p * (t_ * (h + 1) + a) + c)?;
                t.fat_tree(dims, *host_link, *fabric_link)?;
            }
            TopologyCfg::Chain { bursts, link } => {
                check_size("topology.bursts", *bursts as u64 + 8)?;
                let s0 = t.add("S0".into(), Layer::Host);
                let s1 = t.add("S1".into(), Layer::Host);
                let r0 = t.add("R0".into(), Layer::Host);
                let r1 = t.add("R1".into(), Layer::Host);
                let hs: Vec<u32> = (1..=*bursts)
                    .map(|i| t.add(format!("H{i}"), Layer::Host))
                    .collect();
                let sw: Vec<u32> = (1..=4)
                    .map(|i| t.add(format!("SW{i}"), Layer::Tor))
                    .collect();
                t.link(s0, sw[0], *link);
                t.link(s1, sw[0], *link);
                t.link(sw[0], sw[1], *link);
                t.link(sw[1], sw[2], *link);
                t.link(sw[2], sw[3], *link);
                t.link(r0, sw[3], *link);
                t.link(sw[3], r1, *link);
                for h in hs {
                    t.link(h, sw[3], *link);
                }
            }
            TopologyCfg::ParkingLot { bottlenecks, link } => {
                pos("topology.bottlenecks", *bottlenecks)?;
                let n = *bottlenecks;
                check_size("topology.bottlenecks", 3 * n as u64 + 3)?;
                let hosts: Vec<u32> = (0..2 * (n + 1))
                    .map(|i| t.add(format!("h{i}"), Layer::Host))
                    .collect();
                let sw: Vec<u32> = (0..=n)
                    .map(|i| t.add(format!("sw{i}"), Layer::Tor))
                    .collect();
                for i in 1..=n as usize {
                    t.link(sw[i - 1], sw[i], *link);
                    t.link(hosts[2 * i], sw[i - 1], *link);
                    t.link(hosts[2 * i + 1], sw[i], *link);
                }
                t.link(hosts[0], sw[0], *link);
                t.link(hosts[1], sw[n as usize], *link);
            }
            TopologyCfg::File { path } => {
                t = parse_ccsim_file(&read_text(&base_dir.join(path), path)?, path)?
            }
            TopologyCfg::Hpcc { path } => {
                t = parse_hpcc_file(&read_text(&base_dir.join(path), path)?, path)?
            }
        }
        t.check()?;
        Ok(t)
    }

    /// Add a fat-tree of `(pods, tors_per_pod, aggs_per_pod, cores, hosts_per_tor)`: hosts,
    /// then ToRs, aggregation and core switches; each ToR to every agg of its pod, each agg to
    /// its share of the cores.
    fn fat_tree(
        &mut self,
        (p, tp, ap, c, hpt): (u32, u32, u32, u32, u32),
        host_link: LinkCfg,
        fabric_link: LinkCfg,
    ) -> Result<(), ScenarioError> {
        let t = self;
        if !c.is_multiple_of(ap) {
            return Err(err("topology.cores", format!("{c} cores cannot be split evenly over {ap} aggregation switches per pod; use a multiple of {ap}")));
        }
        let ntor = p * tp;
        let hs: Vec<u32> = (0..ntor * hpt)
            .map(|i| t.add(format!("h{i}"), Layer::Host))
            .collect();
        let tors: Vec<u32> = (0..ntor)
            .map(|i| t.add(format!("tor{i}"), Layer::Tor))
            .collect();
        let aggs: Vec<u32> = (0..p * ap)
            .map(|i| t.add(format!("agg{i}"), Layer::Agg))
            .collect();
        let cs: Vec<u32> = (0..c)
            .map(|i| t.add(format!("core{i}"), Layer::Core))
            .collect();
        for (i, h) in hs.iter().enumerate() {
            t.link(*h, tors[i / hpt as usize], host_link);
        }
        let per_agg = c / ap;
        for pod in 0..p {
            for ti in 0..tp {
                for ai in 0..ap {
                    t.link(
                        tors[(pod * tp + ti) as usize],
                        aggs[(pod * ap + ai) as usize],
                        fabric_link,
                    );
                }
            }
            for ai in 0..ap {
                for ci in 0..per_agg {
                    t.link(
                        aggs[(pod * ap + ai) as usize],
                        cs[(ai * per_agg + ci) as usize],
                        fabric_link,
                    );
                }
            }
        }
        Ok(())
    }

    /// Structural checks (at least two hosts, connected, ...), as every topology gets.
    pub fn check(&self) -> Result<(), ScenarioError> {
        if self.hosts.len() < 2 {
            return Err(err("topology", "needs at least 2 hosts"));
        }
        let mut host_degree = vec![0u32; self.nodes.len()];
        for (i, l) in self.links.iter().enumerate() {
            if l.rate_bps == 0 {
                return Err(err(&format!("topology.links[{i}].rate"), "must be > 0"));
            }
            if l.a == l.b {
                return Err(err(
                    &format!("topology.links[{i}]"),
                    format!("links node `{}` to itself", self.nodes[l.a as usize].name),
                ));
            }
            for n in [l.a, l.b] {
                if self.nodes[n as usize].layer == Layer::Host {
                    host_degree[n as usize] += 1;
                }
            }
            if self.nodes[l.a as usize].layer == Layer::Host
                && self.nodes[l.b as usize].layer == Layer::Host
            {
                return Err(err(
                    &format!("topology.links[{i}]"),
                    "connects two hosts directly; put a switch between them",
                ));
            }
        }
        for &h in &self.hosts {
            if host_degree[h as usize] != 1 {
                return Err(err(
                    "topology",
                    format!(
                        "host `{}` has {} links; every host needs exactly one NIC link",
                        self.nodes[h as usize].name, host_degree[h as usize]
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// ccsim's topology file: TOML with `[[node]] name, layer` and `[[link]] a, b, rate, delay`.
/// A topology file's text; `shown` is the path as the scenario wrote it.
fn read_text(path: &std::path::Path, shown: &str) -> Result<String, ScenarioError> {
    crate::sim::input::read_input(path)
        .map_err(|e| err("topology.path", format!("cannot read `{shown}`: {e}")))
}

/// ccsim's own topology file (TOML `[[node]]` and `[[link]]`), named `shown` in errors.
pub fn parse_ccsim_file(text: &str, shown: &str) -> Result<Topology, ScenarioError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct N {
        name: String,
        layer: String,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct L {
        a: String,
        b: String,
        rate: crate::sim::quantity::Rate,
        delay: crate::sim::quantity::Time,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct F {
        node: Vec<N>,
        link: Vec<L>,
    }
    let f: F = crate::sim::input::parse_toml_as(text, &format!("topology file {shown}"))?;
    let mut t = Topology::default();
    for (i, n) in f.node.iter().enumerate() {
        let layer = Layer::parse(&n.layer).ok_or_else(|| {
            err(
                &format!("{shown}: node[{i}].layer"),
                format!("unknown layer `{}`; use host, tor, agg or core", n.layer),
            )
        })?;
        let bad_name = n.name.trim().is_empty() || n.name.contains("->");
        if bad_name {
            return Err(err(
                &format!("{shown}: node[{i}].name"),
                format!(
                    "`{}`: give each node a name, without \"->\" (ports are named \"from->to\")",
                    n.name
                ),
            ));
        }
        if t.node_by_name(&n.name).is_some() {
            return Err(err(
                &format!("{shown}: node[{i}].name"),
                format!("duplicate node name `{}`", n.name),
            ));
        }
        t.add(n.name.clone(), layer);
    }
    for (i, l) in f.link.iter().enumerate() {
        let find = |s: &str, f: &str| {
            t.node_by_name(s).ok_or_else(|| {
                err(
                    &format!("{shown}: link[{i}].{f}"),
                    format!("unknown node `{s}`; declare it in a [[node]]"),
                )
            })
        };
        let (a, b) = (find(&l.a, "a")?, find(&l.b, "b")?);
        t.links.push(LinkInfo {
            a,
            b,
            rate_bps: l.rate.0,
            delay_ps: l.delay.0,
        });
    }
    Ok(t)
}

/// Route-table entries (switch x attachment-switch pairs, `Routes::ENTRY_BYTES` each) a
/// topology may need: 1.2 GB.
const MAX_ROUTE_ENTRIES: u64 = 300_000_000;

/// The HPCC simulator's topology file: `nodes switches links`, the switch ids, then
/// `src dst rate delay error_rate` per link. Switch layers are inferred from distance to hosts.
pub fn parse_hpcc_file(text: &str, shown: &str) -> Result<Topology, ScenarioError> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let f = |line: usize, m: String| err(&format!("{shown}: line {line}"), m);
    let head: Vec<u64> = lines
        .next()
        .ok_or_else(|| f(1, "empty file".into()))?
        .split_whitespace()
        .map(|x| x.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| f(1, "expected `nodes switches links` as integers".into()))?;
    if head.len() != 3 {
        return Err(f(1, "expected `nodes switches links`".into()));
    }
    check_size(&format!("{shown}: line 1"), head[0])?;
    let (n, ns, nl) = (head[0] as usize, head[1] as usize, head[2] as usize);
    let sw_line = if ns > 0 {
        lines.next().unwrap_or("")
    } else {
        ""
    };
    let mut is_sw = vec![false; n];
    let mut listed = 0;
    for x in sw_line.split_whitespace() {
        let id: usize = x
            .parse()
            .map_err(|_| f(2, format!("switch id `{x}` is not an integer")))?;
        if id >= n {
            return Err(f(2, format!("switch id {id} >= node count {n}")));
        }
        if is_sw[id] {
            return Err(f(2, format!("switch id {id} is listed twice")));
        }
        is_sw[id] = true;
        listed += 1;
    }
    if listed != ns {
        return Err(f(
            2,
            format!("line 1 says {ns} switches, this line lists {listed}"),
        ));
    }
    let mut links = Vec::new();
    for i in 0..nl {
        let ln = i + 3;
        let l = lines
            .next()
            .ok_or_else(|| f(ln, format!("expected {nl} links, found {i}")))?;
        let p: Vec<&str> = l.split_whitespace().collect();
        if p.len() < 4 {
            return Err(f(ln, "expected `src dst rate delay error_rate`".into()));
        }
        if p.len() > 5 {
            return Err(f(ln, format!("{} fields, where a link is `src dst rate delay error_rate`; ccsim would ignore `{}`: remove it", p.len(), p[5..].join(" "))));
        }
        let a: usize = p[0]
            .parse()
            .map_err(|_| f(ln, format!("bad node id `{}`", p[0])))?;
        let b: usize = p[1]
            .parse()
            .map_err(|_| f(ln, format!("bad node id `{}`", p[1])))?;
        if a >= n || b >= n {
            return Err(f(ln, format!("node id out of range (nodes = {n})")));
        }
        let rate = crate::sim::parse_rate_bps(p[2]).map_err(|e| f(ln, e))?;
        let delay = crate::sim::parse_time_ps(p[3]).map_err(|e| f(ln, e))?;
        match p.get(4).map(|x| x.parse::<f64>()) {
            None | Some(Ok(0.0)) => {}
            Some(_) => {
                return Err(f(ln, format!("error_rate `{}`: ccsim does not model random link errors; set it to 0 (use a lossy fabric for drops)", p[4])));
            }
        }
        links.push((a, b, rate, delay));
    }
    if let Some(extra) = lines.next() {
        return Err(f(
            nl + 3,
            format!(
                "line 1 says {nl} links, but the file goes on (`{}`); fix the count",
                extra.trim()
            ),
        ));
    }
    // Layers: distance (in switch hops) from the nearest host.
    let mut adj = vec![Vec::new(); n];
    for &(a, b, _, _) in &links {
        adj[a].push(b);
        adj[b].push(a);
    }
    let mut dist = vec![u32::MAX; n];
    let mut q = VecDeque::new();
    for i in 0..n {
        if !is_sw[i] {
            dist[i] = 0;
            q.push_back(i);
        }
    }
    while let Some(u) = q.pop_front() {
        for &v in &adj[u] {
            if dist[v] == u32::MAX {
                dist[v] = dist[u] + 1;
                q.push_back(v);
            }
        }
    }
    let mut t = Topology::default();
    let mut map = vec![0u32; n];
    for i in 0..n {
        let layer = if !is_sw[i] {
            Layer::Host
        } else {
            match dist[i] {
                1 => Layer::Tor,
                2 => Layer::Agg,
                _ => Layer::Core,
            }
        };
        map[i] = t.add(
            if is_sw[i] {
                format!("n{i}")
            } else {
                format!("h{}", t.hosts.len())
            },
            layer,
        );
    }
    for (a, b, rate, delay) in links {
        t.links.push(LinkInfo {
            a: map[a],
            b: map[b],
            rate_bps: rate,
            delay_ps: delay,
        });
    }
    Ok(t)
}

/// Shortest-path next hops. A host has one link, so every host behind the same switch (its
/// "attachment") is reached through the same ports from anywhere else: the table has one
/// entry per (switch, attachment switch), linear in the fabric, and identical port lists are
/// stored once. ECMP picks among a list by flow hash.
#[derive(Clone)]
pub struct Routes {
    /// Index = switch_index * num_attach + attachment index -> the one egress port, or with
    /// `ROUTE_LIST` set a list in `ports` (its length and offset packed), or `ROUTE_TO_HOST`
    /// at the attachment switch itself, whose next hop is the host's own port. Four bytes,
    /// and no second load for a single next hop: at 8k hosts the table is 2.6 MB, read on
    /// every switch hop.
    entries: Vec<u32>,
    ports: Vec<u32>,
    num_attach: usize,
    /// Per host: the attachment index of its switch, and that switch's port to it.
    host_attach: Vec<u32>,
    host_down_port: Vec<u32>,
    /// Per attachment index: the switch's node.
    attach_node: Vec<u32>,
}

/// A route entry naming a list of equal-cost ports: its length in the bits above
/// `ROUTE_OFFSET_BITS`, its offset in `Routes::ports` below.
const ROUTE_LIST: u32 = 1 << 31;
const ROUTE_OFFSET_BITS: u32 = 21;
/// Most equal-cost next hops a route entry can name (10 bits).
const MAX_ECMP_PORTS: usize = (1 << (31 - ROUTE_OFFSET_BITS)) - 1;
/// A route table this large is prefetched hop by hop (`Routes::worth_prefetching`); a smaller
/// one stays in cache, where the prefetch only adds instructions. Measured: the prefetch takes
/// 3% more instructions and 4% more time at k = 8 (10 KB), 2% less time at k = 16 over 5 ms
/// (164 KB), 8% less at k = 32 (2.6 MB).
const ROUTE_PREFETCH_MIN_BYTES: u64 = 128 << 10;
/// The route entry of an attachment switch toward its own hosts.
const ROUTE_TO_HOST: u32 = u32::MAX;

impl Routes {
    /// Bytes of one route-table entry.
    pub const ENTRY_BYTES: u64 = std::mem::size_of::<u32>() as u64;

    /// Compute routes. `node_ports[n]` lists (port id, peer node) of node n; `switch_index[n]`
    /// is the dense index of switch n (u32::MAX for hosts). One breadth-first search over the
    /// switches per attachment switch: O(attachment switches x switch links).
    pub fn compute(
        t: &Topology,
        node_ports: &[Vec<(u32, u32)>],
        switch_index: &[u32],
    ) -> Result<Routes, ScenarioError> {
        let n = t.nodes.len();
        let is_switch = |v: u32| switch_index[v as usize] != u32::MAX;
        let mut attach_of_node = vec![u32::MAX; n];
        // Each host's port on its switch: the switch's first port toward it, found in one pass
        // over each attachment switch's ports (a search per host made a star of N hosts cost
        // N^2 / 2 steps: 8e10 at 400,000 hosts).
        let mut down_of_host = vec![u32::MAX; n];
        let (mut attach_node, mut host_attach, mut host_down_port) = (vec![], vec![], vec![]);
        for &h in &t.hosts {
            let sw = node_ports[h as usize][0].1;
            if attach_of_node[sw as usize] == u32::MAX {
                attach_of_node[sw as usize] = attach_node.len() as u32;
                attach_node.push(sw);
                for &(p, v) in &node_ports[sw as usize] {
                    let (first, own) = (down_of_host[v as usize] == u32::MAX, !is_switch(v));
                    if first && own && node_ports[v as usize][0].1 == sw {
                        down_of_host[v as usize] = p;
                    }
                }
            }
            host_attach.push(attach_of_node[sw as usize]);
            assert_ne!(down_of_host[h as usize], u32::MAX, "a link has two ends");
            host_down_port.push(down_of_host[h as usize]);
        }
        let na = attach_node.len();
        let nsw = switch_index.iter().filter(|&&x| x != u32::MAX).count();
        let table = nsw as u64 * na as u64;
        if table > MAX_ROUTE_ENTRIES {
            return Err(err(
                "topology",
                format!(
                    "{nsw} switches x {na} switches with hosts need a {:.1} GB route table; at most {MAX_ROUTE_ENTRIES} entries ({:.1} GB): use a smaller topology",
                    (table * Self::ENTRY_BYTES) as f64 / 1e9,
                    (MAX_ROUTE_ENTRIES * Self::ENTRY_BYTES) as f64 / 1e9
                ),
            ));
        }
        let mut entries = vec![ROUTE_TO_HOST; nsw * na];
        let mut ports = Vec::new();
        let mut lists: std::collections::HashMap<Box<[u32]>, u32> = Default::default();
        let mut hops = Vec::new();
        let mut dist = vec![u32::MAX; n];
        let mut q = VecDeque::new();
        for (a, &root) in attach_node.iter().enumerate() {
            if a % 64 == 0 && crate::sim::interrupt::requested() {
                return Err(ScenarioError::interrupted());
            }
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[root as usize] = 0;
            q.clear();
            q.push_back(root);
            while let Some(u) = q.pop_front() {
                for &(_, v) in &node_ports[u as usize] {
                    if is_switch(v) && dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[u as usize] + 1;
                        q.push_back(v);
                    }
                }
            }
            for s in (0..n as u32).filter(|&s| is_switch(s) && s != root) {
                if dist[s as usize] == u32::MAX {
                    let h = t.hosts[host_attach
                        .iter()
                        .position(|&x| x == a as u32)
                        .expect("attached")];
                    return Err(err(
                        "topology",
                        format!(
                            "switch `{}` cannot reach host `{}`; the topology is not connected",
                            t.nodes[s as usize].name, t.nodes[h as usize].name
                        ),
                    ));
                }
                hops.clear();
                hops.extend(node_ports[s as usize].iter().filter_map(|&(p, v)| {
                    (is_switch(v) && dist[v as usize].wrapping_add(1) == dist[s as usize])
                        .then_some(p)
                }));
                entries[switch_index[s as usize] as usize * na + a] =
                    Self::entry(&hops, &mut lists, &mut ports)?;
            }
        }
        Ok(Routes {
            entries,
            ports,
            num_attach: na,
            host_attach,
            host_down_port,
            attach_node,
        })
    }

    /// The entry for next hops `hops` (a list is stored once in `ports`, found through `lists`).
    fn entry(
        hops: &[u32],
        lists: &mut std::collections::HashMap<Box<[u32]>, u32>,
        ports: &mut Vec<u32>,
    ) -> Result<u32, ScenarioError> {
        if let [port] = hops {
            // Port ids stay below 2^31: the memory check refuses such fabrics long before.
            debug_assert!(port & ROUTE_LIST == 0);
            return Ok(*port);
        }
        if hops.len() > MAX_ECMP_PORTS {
            return Err(err(
                "topology",
                format!("a switch with {} equal-cost next hops; at most {MAX_ECMP_PORTS}: use fewer parallel links", hops.len()),
            ));
        }
        let off = *lists.entry(hops.into()).or_insert_with(|| {
            ports.extend_from_slice(hops);
            (ports.len() - hops.len()) as u32
        });
        if off >= 1 << ROUTE_OFFSET_BITS {
            return Err(err(
                "topology",
                format!("the distinct equal-cost port lists take more than {} entries: use a smaller topology", 1 << ROUTE_OFFSET_BITS),
            ));
        }
        Ok(ROUTE_LIST | (hops.len() as u32) << ROUTE_OFFSET_BITS | off)
    }

    /// True when the table is too large to stay cached between hops
    /// (`ROUTE_PREFETCH_MIN_BYTES`), so its entries are worth prefetching.
    pub fn worth_prefetching(&self) -> bool {
        self.entries.len() as u64 * Self::ENTRY_BYTES >= ROUTE_PREFETCH_MIN_BYTES
    }

    /// Start loading the table entry `next_hops(si, dst)` reads (`dst` may be any number: a
    /// PFC frame's is none).
    #[inline(always)]
    pub fn prefetch(&self, si: u32, dst: u32) {
        if let Some(&a) = self.host_attach.get(dst as usize) {
            let at = si as usize * self.num_attach + a as usize;
            crate::sim::prefetch(self.entries.as_ptr().wrapping_add(at));
        }
    }

    /// Equal-cost egress ports at switch `si` toward host `dst`.
    #[inline]
    pub fn next_hops(&self, si: u32, dst: u32) -> &[u32] {
        let a = self.host_attach[dst as usize] as usize;
        let e = &self.entries[si as usize * self.num_attach + a];
        match *e {
            ROUTE_TO_HOST => std::slice::from_ref(&self.host_down_port[dst as usize]),
            port if port & ROUTE_LIST == 0 => std::slice::from_ref(e),
            list => {
                let off = (list & ((1 << ROUTE_OFFSET_BITS) - 1)) as usize;
                let len = ((list & !ROUTE_LIST) >> ROUTE_OFFSET_BITS) as usize;
                &self.ports[off..off + len]
            }
        }
    }

    /// The switches hosts hang off (nodes, in the order of their first host), and per host the
    /// index of its own among them.
    pub fn attachments(&self) -> (&[u32], &[u32]) {
        (&self.attach_node, &self.host_attach)
    }

    /// The node of the switch host `h` hangs off, and that switch's port to it.
    pub fn attachment(&self, h: u32) -> (u32, u32) {
        let a = self.host_attach[h as usize];
        (
            self.attach_node[a as usize],
            self.host_down_port[h as usize],
        )
    }
}

/// Topology kinds for `ccsim list`.
pub const CATALOG: &[(&str, &str)] = &[
    ("star", "N hosts on one switch (hosts, link)"),
    ("dumbbell", "two switches and one bottleneck link (left_hosts, right_hosts, host_link, bottleneck)"),
    ("leaf_spine", "two-tier Clos (leaves, spines, hosts_per_leaf, host_link, fabric_link)"),
    ("fat_tree", "three-tier fat-tree: k-ary (k) or explicit (pods, tors_per_pod, aggs_per_pod, cores, hosts_per_tor); the ACC/RCC fabric is 5 x (4+4), 16 cores, 16 hosts/ToR"),
    ("chain", "ACC Figure 1(a): S0,S1 -> SW1..SW4; R0, R1 and H1..HN on SW4 (bursts, link)"),
    ("parking_lot", "PCN Figure 19(a): sw0..swN in a line; h0 -> h1 crosses all N links, h(2i) -> h(2i+1) link i only (bottlenecks, link)"),
    ("file", "ccsim topology file: TOML [[node]] name/layer, [[link]] a/b/rate/delay (path)"),
    ("hpcc", "HPCC ns-3 simulator topology file (path)"),
];

#[cfg(test)]
mod tests {
    use super::parse_hpcc_file;

    const OK: &str = "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n";

    #[test]
    fn an_hpcc_file_whose_counts_disagree_with_its_body_is_refused() {
        assert!(parse_hpcc_file(OK, "t").is_ok());
        let cases = [
            (
                "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n0 1 100Gbps 1us 0\n",
                "says 2 links",
            ),
            (
                "3 2 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n",
                "says 2 switches, this line lists 1",
            ),
            (
                "3 2 2\n2 2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n",
                "listed twice",
            ),
            (
                "3 1 2\n2\n0 2 100Gbps 1us 0 5\n1 2 100Gbps 1us 0\n",
                "line 3: 6 fields, where a link is `src dst rate delay error_rate`; ccsim would ignore `5`",
            ),
        ];
        for (text, why) in cases {
            let e = parse_hpcc_file(text, "t").unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
