//! Traffic: flow-size CDFs (the published ones ship inside the crate), Poisson arrivals sized to
//! a target load (the HPCC simulator's generator: per host, mean gap = mean_size x 8 /
//! (link_rate x load), destination uniform over the other hosts), incast (once, periodic or
//! Poisson; a fixed or random in-cast ratio; a fixed size or one drawn per sender), long-lived
//! flows (optionally rate-limited), and the HPCC simulator's flow files. Output: flow specs.

pub mod config;

use crate::sim::input::ScenarioError;
use crate::sim::units::{MAX_SIZE_BYTES, MAX_TIME_PS};
use crate::sim::{Rng, PS_PER_S};
use config::{AllreduceAlgorithm, HostSet, SenderCount, WorkloadCfg};

/// A flow to create: endpoints are host ids; `size_bytes` None = long-lived.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size_bytes: Option<u64>,
    pub start_ps: u64,
    pub stop_ps: Option<u64>,
    /// A sender-side rate limiter (bits/s): the flow's line rate when below the host link's.
    pub rate_bps: Option<u64>,
    /// The rate the sender starts at (bits/s), below its line rate; None: the line rate.
    pub start_rate_bps: Option<u64>,
    /// The sender answers the receiver's control packets (false: an unresponsive sender).
    pub responsive: bool,
    /// The flows (indices among the specs of one source: a `[[flows]]` list or one generator's
    /// output, made global by the builder) that must all have reached their receivers before
    /// this flow starts, `after_delay_ps` after the last of them (and not before `start_ps`).
    pub after: Vec<u32>,
    pub after_delay_ps: u64,
}

impl FlowSpec {
    /// A flow of `bytes` from `src` to `dst` starting at `start_ps`, with no other setting.
    pub fn sized(src: u32, dst: u32, bytes: u64, start_ps: u64) -> Self {
        FlowSpec {
            src,
            dst,
            size_bytes: Some(bytes),
            start_ps,
            stop_ps: None,
            rate_bps: None,
            start_rate_bps: None,
            responsive: true,
            after: Vec::new(),
            after_delay_ps: 0,
        }
    }
}

/// One iteration of a collective workload, as the `collectives` table reports it.
#[derive(Clone, Debug)]
pub struct Collective {
    /// Its `[[workload]]` entry: the job.
    pub job: u32,
    pub kind: &'static str,
    pub iteration: u32,
    pub hosts: u32,
    /// Its flows are `first_flow..first_flow + flows`.
    pub first_flow: u32,
    pub flows: u32,
    /// The algorithm's bandwidth term on the job's bottleneck: the most payload bytes one of
    /// its hosts sends or receives in the iteration, at that host's link rate (headers, ACKs
    /// and latency excluded).
    pub ideal_ps: u64,
}

/// The iterations of workload `w` (job `job`) if it is a collective, from its generated
/// `flows`, the first of which is the run's flow `first_flow`.
pub fn collectives(
    w: &WorkloadCfg,
    job: u32,
    first_flow: u32,
    flows: &[FlowSpec],
    host_rate_bps: &[u64],
) -> Vec<Collective> {
    let (kind, iterations) = match w {
        WorkloadCfg::Allreduce(a) if a.algorithm == AllreduceAlgorithm::Ring => {
            ("allreduce_ring", a.iterations)
        }
        WorkloadCfg::Allreduce(a) => ("allreduce_halving_doubling", a.iterations),
        WorkloadCfg::Alltoall(a) => ("alltoall", a.iterations),
        _ => return Vec::new(),
    };
    let per = flows.len() / iterations as usize;
    (0..iterations as usize)
        .map(|it| {
            let block = &flows[it * per..(it + 1) * per];
            let mut bytes = std::collections::BTreeMap::<u32, (u64, u64)>::new();
            for f in block {
                bytes.entry(f.src).or_default().0 += f.size_bytes.unwrap_or(0);
                bytes.entry(f.dst).or_default().1 += f.size_bytes.unwrap_or(0);
            }
            let ideal_ps = bytes
                .iter()
                .map(|(&h, &(out, into))| {
                    (out.max(into) as u128 * 8 * PS_PER_S as u128
                        / host_rate_bps[h as usize] as u128) as u64
                })
                .max()
                .unwrap_or(0);
            Collective {
                job,
                kind,
                iteration: it as u32,
                hosts: bytes.len() as u32,
                first_flow: first_flow + (it * per) as u32,
                flows: per as u32,
                ideal_ps,
            }
        })
        .collect()
}

/// The hosts of a collective, with its size and iterations checked.
fn collective_hosts(
    e: &Entry,
    hosts: &HostSet,
    size: crate::sim::quantity::Size,
    iterations: u32,
) -> Result<Vec<u32>, ScenarioError> {
    let hs = hosts_of(hosts, e.hosts(), &e.field("hosts"))?;
    if hs.len() < 2 {
        return Err(ScenarioError::new(
            &e.field("hosts"),
            "a collective needs at least 2 hosts",
        ));
    }
    if size.0 < hs.len() as u64 || size.0 > MAX_SIZE_BYTES {
        return Err(ScenarioError::new(
            &e.field("size"),
            format!(
                "must be between one byte per host ({}) and {MAX_SIZE_BYTES} bytes",
                hs.len()
            ),
        ));
    }
    if iterations == 0 {
        return Err(ScenarioError::new(
            &e.field("iterations"),
            "must be at least 1",
        ));
    }
    Ok(hs)
}

/// The flows of a collective given as steps of (sender, receiver, bytes), indices into
/// `hosts`: a host's sends in one step wait for every flow it received in the step before;
/// every `per_iteration` steps an iteration begins, `gap_ps` after those arrivals. The first
/// step starts at `start_ps`.
fn stepped(
    hosts: &[u32],
    steps: &[Vec<(usize, usize, u64)>],
    per_iteration: usize,
    start_ps: u64,
    gap_ps: u64,
) -> Vec<FlowSpec> {
    let mut out = Vec::new();
    let mut received: Vec<Vec<u32>> = vec![Vec::new(); hosts.len()];
    for (k, step) in steps.iter().enumerate() {
        let delay = if k % per_iteration == 0 { gap_ps } else { 0 };
        let mut into = vec![Vec::new(); hosts.len()];
        for &(i, j, bytes) in step {
            into[j].push(out.len() as u32);
            out.push(FlowSpec {
                after_delay_ps: if received[i].is_empty() { 0 } else { delay },
                after: received[i].clone(),
                ..FlowSpec::sized(hosts[i], hosts[j], bytes, start_ps)
            });
        }
        received = into;
    }
    out
}

/// Refuse flows that wait, through `after`, for themselves (a cycle never starts), naming one
/// flow of the cycle.
pub fn check_acyclic(specs: &[FlowSpec]) -> Result<(), ScenarioError> {
    match on_cycle(specs) {
        Some(i) => Err(ScenarioError::new(
            "flows",
            format!("flow {i} ({} -> {}) waits, through `after`, for a flow that waits for it: a cycle never starts; remove one of its dependencies", specs[i].src, specs[i].dst),
        )),
        None => Ok(()),
    }
}

/// A flow on a cycle of `after`, if there is one.
fn on_cycle(specs: &[FlowSpec]) -> Option<usize> {
    // Kahn's algorithm: flows whose waits can all be met; any left over wait on a cycle.
    let mut waits: Vec<usize> = specs.iter().map(|s| s.after.len()).collect();
    let mut dependents = vec![Vec::new(); specs.len()];
    for (i, s) in specs.iter().enumerate() {
        for &a in &s.after {
            dependents[a as usize].push(i);
        }
    }
    let mut ready: Vec<usize> = (0..specs.len()).filter(|&i| waits[i] == 0).collect();
    let mut met = 0;
    while let Some(i) = ready.pop() {
        met += 1;
        for &d in &dependents[i] {
            waits[d] -= 1;
            if waits[d] == 0 {
                ready.push(d);
            }
        }
    }
    if met == specs.len() {
        return None;
    }
    // Walk back through flows left waiting until one repeats: it is on a cycle.
    let mut seen = vec![false; specs.len()];
    let mut i = waits.iter().position(|&w| w > 0)?;
    while !seen[i] {
        seen[i] = true;
        i = (specs[i].after.iter().map(|&a| a as usize))
            .find(|&a| waits[a] > 0)
            .unwrap_or(i);
    }
    Some(i)
}

/// A flow's `start_rate`: above 0 and, with a rate limiter, not above it (a host's line rate
/// is checked when the flows are built).
pub fn check_start_rate(
    start_rate: Option<crate::sim::quantity::Rate>,
    rate: Option<crate::sim::quantity::Rate>,
    field: &str,
) -> Result<(), ScenarioError> {
    match (start_rate, rate) {
        (Some(s), _) if s.0 == 0 => Err(ScenarioError::new(field, "must be > 0")),
        (Some(s), Some(r)) if s.0 > r.0 => Err(ScenarioError::new(
            field,
            format!("{} b/s is above the flow's `rate` limit of {} b/s: the flow could never send that fast; lower start_rate", s.0, r.0),
        )),
        _ => Ok(()),
    }
}

/// The built-in CDFs: (name, file text).
pub const BUILTIN_CDFS: &[(&str, &str)] = &[
    ("websearch", include_str!("../../workloads/websearch.cdf")),
    ("fb_hadoop", include_str!("../../workloads/fb_hadoop.cdf")),
    (
        "cache_follower",
        include_str!("../../workloads/cache_follower.cdf"),
    ),
    ("web_server", include_str!("../../workloads/web_server.cdf")),
    (
        "data_mining",
        include_str!("../../workloads/data_mining.cdf"),
    ),
    ("pcn_w1", include_str!("../../workloads/pcn_w1.cdf")),
    ("pcn_w2", include_str!("../../workloads/pcn_w2.cdf")),
    (
        "amrt_hadoop",
        include_str!("../../workloads/amrt_hadoop.cdf"),
    ),
    (
        "amrt_websearch",
        include_str!("../../workloads/amrt_websearch.cdf"),
    ),
    (
        "amrt_data_mining",
        include_str!("../../workloads/amrt_data_mining.cdf"),
    ),
];

/// A piecewise-linear flow-size CDF.
#[derive(Clone, Debug)]
pub struct Cdf {
    /// (size_bytes, cumulative probability), sizes non-decreasing, probabilities increasing to 1.
    pub points: Vec<(f64, f64)>,
}

/// Whether `name` is one of the built-in CDFs (not a file path).
pub fn is_builtin_cdf(name: &str) -> bool {
    BUILTIN_CDFS.iter().any(|(n, _)| *n == name)
}

impl Cdf {
    /// Parse `size cumulative_probability` lines (`#` comments). `what` names the source in errors.
    pub fn parse(text: &str, what: &str) -> Result<Cdf, ScenarioError> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap().trim();
            if line.is_empty() {
                continue;
            }
            let e = |m: String| ScenarioError::new(&format!("{what}: line {}", i + 1), m);
            let mut it = line.split_whitespace();
            let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) else {
                return Err(e("expected `size_bytes cumulative_probability`".into()));
            };
            let x: f64 = a
                .parse()
                .map_err(|_| e(format!("size `{a}` is not a number")))?;
            let mut y: f64 = b
                .parse()
                .map_err(|_| e(format!("probability `{b}` is not a number")))?;
            if y > 1.0 + 1e-9 && y <= 100.0 {
                return Err(e(format!(
                    "probability {y} > 1; write probabilities in [0, 1], not percent"
                )));
            }
            if !(x.is_finite() && x <= MAX_SIZE_BYTES as f64) {
                return Err(e(format!(
                    "size {x} must be a finite number of bytes, at most {MAX_SIZE_BYTES}"
                )));
            }
            if x.fract() != 0.0 {
                return Err(e(format!(
                    "size {x} is not a whole number of bytes; write sizes in bytes"
                )));
            }
            if !(0.0..=1.0 + 1e-9).contains(&y) || x < 0.0 {
                return Err(e(format!(
                    "({x}, {y}) out of range: sizes must be >= 0 and probabilities in [0, 1]"
                )));
            }
            y = y.min(1.0);
            if let Some(&(px, py)) = points.last() {
                if x < px || y < py {
                    return Err(e(format!("not monotone: ({x}, {y}) after ({px}, {py}); sizes and probabilities must not decrease")));
                }
            }
            points.push((x, y));
        }
        match points.last() {
            None => Err(ScenarioError::new(what, "the CDF has no points")),
            Some(&(x, _)) if x < 1.0 => Err(ScenarioError::new(
                what,
                "every size of the CDF is 0 bytes; flows need at least 1 byte",
            )),
            Some(&(_, y)) if (y - 1.0).abs() > 1e-6 => Err(ScenarioError::new(
                what,
                format!(
                    "the CDF ends at probability {y}, not 1; add a last point with probability 1"
                ),
            )),
            _ => Ok(Cdf { points }),
        }
    }

    /// A built-in CDF by name, or a file relative to `base_dir`.
    pub fn load(
        name_or_path: &str,
        base_dir: &std::path::Path,
        field: &str,
    ) -> Result<Cdf, ScenarioError> {
        if let Some((_, text)) = BUILTIN_CDFS.iter().find(|(n, _)| *n == name_or_path) {
            return Cdf::parse(text, name_or_path);
        }
        let path = base_dir.join(name_or_path);
        let text = crate::sim::input::read_input(&path).map_err(|e| {
            let names: Vec<&str> = BUILTIN_CDFS.iter().map(|c| c.0).collect();
            ScenarioError::new(
                field,
                format!(
                    "`{name_or_path}` is neither a built-in CDF ({}) nor a readable file: {e}",
                    names.join(", ")
                ),
            )
        })?;
        Cdf::parse(&text, name_or_path)
    }

    /// Mean size of the flows drawn (`sample`): of the piecewise-linear distribution with every
    /// size under 1 byte drawn as 1 byte (an initial jump counts as a point mass). Loads are
    /// offered with it, so a CDF with sizes under a byte still offers the load asked for.
    pub fn mean(&self) -> f64 {
        let (x0, y0) = self.points[0];
        let mut m = x0.max(1.0) * y0;
        for w in self.points.windows(2) {
            let ((xa, ya), (xb, yb)) = (w[0], w[1]);
            // The mean of max(1, x) for x uniform on [xa, xb].
            let seg = if xb <= 1.0 {
                1.0
            } else if xa >= 1.0 {
                (xa + xb) / 2.0
            } else {
                let below = (1.0 - xa) / (xb - xa);
                below + (1.0 - below) * (1.0 + xb) / 2.0
            };
            m += (yb - ya) * seg;
        }
        m
    }

    /// Inverse-CDF sample by linear interpolation (at least 1 byte).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.uniform();
        self.quantile(u)
    }

    /// The size at cumulative probability `u`.
    pub fn quantile(&self, u: f64) -> u64 {
        let p = &self.points;
        if u <= p[0].1 {
            return (p[0].0.round() as u64).max(1);
        }
        for w in p.windows(2) {
            let ((xa, ya), (xb, yb)) = (w[0], w[1]);
            if u <= yb && yb > ya {
                let x = xa + (xb - xa) * (u - ya) / (yb - ya);
                return (x.round() as u64).max(1);
            }
        }
        (p[p.len() - 1].0.round() as u64).max(1)
    }

    /// Cumulative probability at `x` (for goodness-of-fit tests).
    pub fn cdf_at(&self, x: f64) -> f64 {
        let p = &self.points;
        if x < p[0].0 {
            return 0.0;
        }
        for w in p.windows(2) {
            let ((xa, ya), (xb, yb)) = (w[0], w[1]);
            if x < xb {
                return if xb > xa {
                    ya + (yb - ya) * (x - xa) / (xb - xa)
                } else {
                    yb
                };
            }
        }
        1.0
    }
}

fn hosts_of(set: &HostSet, n_hosts: u32, field: &str) -> Result<Vec<u32>, ScenarioError> {
    match set {
        HostSet::All(s) if s == "all" => Ok((0..n_hosts).collect()),
        HostSet::All(s) => match parse_range(s) {
            Some((a, b)) if a < b && b < n_hosts => Ok((a..=b).collect()),
            Some(_) => Err(ScenarioError::new(
                field,
                format!(
                    "`{s}`: a range A..B needs A < B <= {} (hosts are 0..{})",
                    n_hosts - 1,
                    n_hosts - 1
                ),
            )),
            None => Err(ScenarioError::new(
                field,
                format!(
                    "`{s}`: write \"all\", a range \"A..B\" (both included) or a list of host ids"
                ),
            )),
        },
        HostSet::List(v) => {
            for &h in v {
                if h >= n_hosts {
                    return Err(ScenarioError::new(
                        field,
                        format!("unknown host {h}; hosts are 0..{}", n_hosts - 1),
                    ));
                }
            }
            let mut distinct = v.clone();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() != v.len() {
                return Err(ScenarioError::new(
                    field,
                    "lists a host twice; list each host once",
                ));
            }
            if v.len() < 2 {
                return Err(ScenarioError::new(field, "needs at least 2 distinct hosts"));
            }
            Ok(v.clone())
        }
    }
}

/// "A..B" as (A, B).
fn parse_range(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once("..")?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// An incast's sender count as (min, max), both within 1..=`pool`.
fn sender_range(n: &SenderCount, pool: usize, field: &str) -> Result<(u32, u32), ScenarioError> {
    let (a, b) = match n {
        SenderCount::Fixed(k) => (*k, *k),
        SenderCount::Range(s) => parse_range(s).ok_or_else(|| {
            ScenarioError::new(field, format!("`{s}`: write a number or a range \"A..B\""))
        })?,
    };
    if a == 0 || a > b || b as usize > pool {
        return Err(ScenarioError::new(
            field,
            format!("must be between 1 and {pool} (hosts available minus the receiver), a range A..B with A <= B"),
        ));
    }
    Ok((a, b))
}

fn load_ok(load: f64, field: &str) -> Result<(), ScenarioError> {
    if !(load > 0.0 && load <= 1.0) {
        return Err(ScenarioError::new(
            field,
            format!("load {load} must be in (0, 1]"),
        ));
    }
    Ok(())
}

/// Most flows one workload may generate (each costs about 1 KB of state during a run).
pub const MAX_FLOWS: f64 = 10_000_000.0;

/// Refuse a workload expected to generate `expected` flows, before generating them.
fn check_flow_count(field: &str, expected: f64) -> Result<(), ScenarioError> {
    if expected.is_nan() || expected > MAX_FLOWS {
        return Err(ScenarioError::new(
            field,
            format!("would generate about {expected:.3e} flows; ccsim takes at most {MAX_FLOWS:.0e} per workload (about 1 KB each): shorten the arrival window, lower the load or use larger flows"),
        ));
    }
    Ok(())
}

/// Generate the flows of one `[[workload]]` entry (index `wi`), with host link rates known.
pub fn generate(
    w: &WorkloadCfg,
    wi: usize,
    host_rate_bps: &[u64],
    base_dir: &std::path::Path,
    rng: &mut Rng,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let e = Entry {
        wi,
        host_rate_bps,
        base_dir,
    };
    match w {
        WorkloadCfg::Poisson(p) => poisson(&e, p, rng),
        WorkloadCfg::Incast(i) => incast(&e, i, rng),
        WorkloadCfg::LongLived(l) => long_lived(&e, l, rng),
        WorkloadCfg::FlowFile(f) => read_hpcc_flows(&base_dir.join(&f.path), &f.path, e.hosts()),
        WorkloadCfg::Dag(d) => {
            let text = crate::sim::input::read_input(&base_dir.join(&d.path)).map_err(|err| {
                ScenarioError::new(&e.field("path"), format!("cannot read `{}`: {err}", d.path))
            })?;
            parse_dag(&text, &d.path, e.hosts(), d.start.0)
        }
        WorkloadCfg::Allreduce(a) => allreduce(&e, a),
        WorkloadCfg::Alltoall(a) => alltoall(&e, a, rng),
    }
}

/// One `[[workload]]` entry's context: its index (for field names), the hosts' link rates and
/// the scenario's directory (for files).
struct Entry<'a> {
    wi: usize,
    host_rate_bps: &'a [u64],
    base_dir: &'a std::path::Path,
}

impl Entry<'_> {
    fn field(&self, f: &str) -> String {
        format!("workload[{}].{f}", self.wi)
    }
    fn hosts(&self) -> u32 {
        self.host_rate_bps.len() as u32
    }
}

/// Poisson arrivals per host at `load` of its link, sizes from a CDF (`kind = "poisson"`).
fn poisson(e: &Entry, w: &config::Poisson, rng: &mut Rng) -> Result<Vec<FlowSpec>, ScenarioError> {
    let config::Poisson {
        cdf,
        load,
        start,
        stop,
        flows,
        hosts,
    } = w;
    let mut out = Vec::new();
    load_ok(*load, &e.field("load"))?;
    if stop.0 <= start.0 {
        return Err(ScenarioError::new(
            &e.field("stop"),
            "must be after `start`",
        ));
    }
    let cdf = Cdf::load(cdf, e.base_dir, &e.field("cdf"))?;
    let hs = hosts_of(hosts, e.hosts(), &e.field("hosts"))?;
    let mean = cdf.mean();
    let window_s = (stop.0 - start.0) as f64 / PS_PER_S as f64;
    let expected: f64 = hs
        .iter()
        .map(|&h| window_s * e.host_rate_bps[h as usize] as f64 * load / (mean * 8.0))
        .sum();
    check_flow_count(&e.field("load"), expected)?;
    for &src in &hs {
        let gap_s = mean * 8.0 / (e.host_rate_bps[src as usize] as f64 * load);
        let mut t = start.0 as f64 + rng.exponential(gap_s) * PS_PER_S as f64;
        while t < stop.0 as f64 {
            let mut dst = hs[rng.below(hs.len() as u64 - 1) as usize];
            if dst == src {
                dst = hs[hs.len() - 1];
            }
            let size = cdf.sample(rng);
            out.push(FlowSpec::sized(src, dst, size, t as u64));
            t += rng.exponential(gap_s) * PS_PER_S as f64;
        }
    }
    if let Some(n) = *flows {
        if n == 0 || n > out.len() as u64 {
            return Err(ScenarioError::new(
                &e.field("flows"),
                format!(
                    "{n} flows asked, {} arrive before `stop`: give 1 to {0}, or a later `stop`",
                    out.len()
                ),
            ));
        }
        // The first n arrivals over all hosts (ties in host order).
        out.sort_by_key(|f| f.start_ps);
        out.truncate(n as usize);
    }
    Ok(out)
}

/// Incasts: once, periodic or Poisson (`kind = "incast"`).
fn incast(e: &Entry, w: &config::Incast, rng: &mut Rng) -> Result<Vec<FlowSpec>, ScenarioError> {
    let config::Incast {
        senders,
        size,
        cdf,
        same_size,
        receiver,
        at,
        every,
        load,
        start,
        stop,
        hosts,
    } = w;
    let mut out = Vec::new();
    let hs = hosts_of(hosts, e.hosts(), &e.field("hosts"))?;
    if let Some(r) = receiver {
        if *r >= e.hosts() {
            return Err(ScenarioError::new(
                &e.field("receiver"),
                format!("unknown host {r}; hosts are 0..{}", e.hosts() - 1),
            ));
        }
    }
    // Senders come from `hosts` minus the receiver (a fixed receiver may lie outside).
    let pool = match receiver {
        Some(r) if !hs.contains(r) => hs.len(),
        _ => hs.len() - 1,
    };
    let (k_min, k_max) = sender_range(senders, pool, &e.field("senders"))?;
    let (fixed_bytes, cdf) = match (size, cdf) {
        (Some(s), None) if s.0 == 0 => {
            return Err(ScenarioError::new(&e.field("size"), "must be > 0"))
        }
        (Some(s), None) => (s.0, None),
        (None, Some(c)) => (0, Some(Cdf::load(c, e.base_dir, &e.field("cdf"))?)),
        _ => return Err(ScenarioError::new(&e.field("size"), "give either `size` (every flow's size) or `cdf` (a size drawn per sender), not both or neither")),
    };
    if *same_size && cdf.is_none() {
        return Err(ScenarioError::new(
            &e.field("same_size"),
            "draws one size per incast from `cdf`; with a fixed `size` every flow has it already: remove same_size or give `cdf`",
        ));
    }
    let one = |t: u64, rng: &mut Rng, out: &mut Vec<FlowSpec>| {
        let dst = receiver.unwrap_or_else(|| hs[rng.below(hs.len() as u64) as usize]);
        let k = match k_max - k_min {
            0 => k_min,
            span => k_min + rng.below(u64::from(span) + 1) as u32,
        };
        // Choose `k` distinct hosts other than the receiver (partial Fisher-Yates); with
        // a CDF each sender's flow draws its own size, or all send one (`same_size`).
        let shared = match &cdf {
            Some(c) if *same_size => Some(c.sample(rng)),
            _ => None,
        };
        let mut pool: Vec<u32> = hs.iter().copied().filter(|&h| h != dst).collect();
        for i in 0..k as usize {
            let j = i + rng.below((pool.len() - i) as u64) as usize;
            pool.swap(i, j);
            let bytes =
                shared.unwrap_or_else(|| cdf.as_ref().map_or(fixed_bytes, |c| c.sample(rng)));
            out.push(FlowSpec::sized(pool[i], dst, bytes, t));
        }
    };
    let window = |what: &str| {
        let stop = stop
            .ok_or_else(|| ScenarioError::new(&e.field("stop"), format!("{what} needs `stop`")))?;
        if stop.0 <= start.0 {
            return Err(ScenarioError::new(
                &e.field("stop"),
                "must be after `start`",
            ));
        }
        Ok(stop.0)
    };
    let mean_k = f64::from(k_min + k_max) / 2.0;
    match (at, every, load) {
        (Some(t), None, None) => one(t.0, rng, &mut out),
        (None, Some(gap), None) => {
            let stop = window("a periodic incast (with `every`)")?;
            if gap.0 == 0 {
                return Err(ScenarioError::new(&e.field("every"), "must be > 0"));
            }
            check_flow_count(
                &e.field("every"),
                (stop - start.0) as f64 / gap.0 as f64 * mean_k,
            )?;
            for t in (start.0..stop).step_by(gap.0 as usize) {
                one(t, rng, &mut out);
            }
        }
        (None, None, Some(l)) => {
            load_ok(*l, &e.field("load"))?;
            let stop = window("a recurring incast (with `load`)")?;
            // Incast bytes per second = load x the total host link capacity of the set.
            let cap_bps: f64 = hs.iter().map(|&h| e.host_rate_bps[h as usize] as f64).sum();
            let mean_bytes = cdf.as_ref().map_or(fixed_bytes as f64, Cdf::mean);
            let gap_s = mean_k * mean_bytes * 8.0 / (cap_bps * l);
            let window_s = (stop - start.0) as f64 / PS_PER_S as f64;
            check_flow_count(&e.field("load"), window_s / gap_s * mean_k)?;
            let mut t = start.0 as f64 + rng.exponential(gap_s) * PS_PER_S as f64;
            while t < stop as f64 {
                one(t as u64, rng, &mut out);
                t += rng.exponential(gap_s) * PS_PER_S as f64;
            }
        }
        _ => return Err(ScenarioError::new(
            &e.field("at"),
            "give one of `at` (one incast), `every` (periodic incasts) or `load` (Poisson incasts)",
        )),
    }
    Ok(out)
}

/// Long-lived flows between host pairs (`kind = "long_lived"`).
fn long_lived(
    e: &Entry,
    w: &config::LongLived,
    rng: &mut Rng,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let config::LongLived {
        pairs,
        start,
        stop,
        rate,
        start_rate,
        responsive,
    } = w;
    let mut out = Vec::new();
    if responsive.is_some_and(|r| !(0.0..=1.0).contains(&r)) {
        return Err(ScenarioError::new(
            &e.field("responsive"),
            "a share of the senders, from 0 to 1",
        ));
    }
    if stop.is_some_and(|t| t.0 <= start.0) {
        return Err(ScenarioError::new(
            &e.field("stop"),
            "must be after `start`",
        ));
    }
    if rate.is_some_and(|r| r.0 == 0) {
        return Err(ScenarioError::new(&e.field("rate"), "must be > 0"));
    }
    check_start_rate(*start_rate, *rate, &e.field("start_rate"))?;
    for (i, [s, d]) in pairs.iter().enumerate() {
        for h in [s, d] {
            if *h >= e.hosts() {
                return Err(ScenarioError::new(
                    &e.field(&format!("pairs[{i}]")),
                    format!("unknown host {h}; hosts are 0..{}", e.hosts() - 1),
                ));
            }
        }
        if s == d {
            return Err(ScenarioError::new(
                &e.field(&format!("pairs[{i}]")),
                "source and destination are the same host",
            ));
        }
        out.push(FlowSpec {
            src: *s,
            dst: *d,
            size_bytes: None,
            start_ps: start.0,
            stop_ps: stop.map(|t| t.0),
            rate_bps: rate.map(|r| r.0),
            start_rate_bps: start_rate.map(|r| r.0),
            responsive: true,
            after: Vec::new(),
            after_delay_ps: 0,
        });
    }
    if let Some(share) = responsive {
        // round(share x senders) of the distinct senders respond, drawn without
        // replacement; the others' flows do not.
        let mut senders: Vec<u32> = pairs.iter().map(|p| p[0]).collect();
        senders.sort_unstable();
        senders.dedup();
        let keep = (share * senders.len() as f64).round() as usize;
        for i in 0..keep {
            let j = i + rng.below((senders.len() - i) as u64) as usize;
            senders.swap(i, j);
        }
        let deaf = &senders[keep..];
        let first = out.len() - pairs.len();
        for f in &mut out[first..] {
            f.responsive = !deaf.contains(&f.src);
        }
    }
    Ok(out)
}

/// An all-reduce's steps as flows (`kind = "allreduce"`).
fn allreduce(e: &Entry, w: &config::Allreduce) -> Result<Vec<FlowSpec>, ScenarioError> {
    let config::Allreduce {
        size,
        algorithm,
        hosts,
        start,
        iterations,
        gap,
    } = w;
    let hs = collective_hosts(e, hosts, *size, *iterations)?;
    let n = hs.len();
    let per_iteration = match algorithm {
        AllreduceAlgorithm::Ring => {
            let chunk = size.0.div_ceil(n as u64);
            let step: Vec<_> = (0..n).map(|i| (i, (i + 1) % n, chunk)).collect();
            vec![step; 2 * (n - 1)]
        }
        AllreduceAlgorithm::HalvingDoubling if !n.is_power_of_two() => {
            return Err(ScenarioError::new(&e.field("hosts"), format!("halving-doubling needs a power of 2 of hosts, not {n}; use algorithm = \"ring\" or change the host set")));
        }
        AllreduceAlgorithm::HalvingDoubling => {
            // Halving: partners n/2, n/4, ... 1 apart exchange size/2, size/4, ...;
            // doubling: the same in reverse.
            let m = n.trailing_zeros() as usize;
            let step = |d: usize, div: u64| -> Vec<(usize, usize, u64)> {
                (0..n).map(|i| (i, i ^ d, size.0.div_ceil(div))).collect()
            };
            let halving = (0..m).map(|k| step(n >> (k + 1), 2 << k));
            let doubling = (0..m).map(|k| step(1 << k, (n >> k) as u64));
            halving.chain(doubling).collect()
        }
    };
    let steps = per_iteration.len();
    let all: Vec<_> = (0..*iterations)
        .flat_map(|_| per_iteration.clone())
        .collect();
    Ok(stepped(&hs, &all, steps, start.0, gap.0))
}

/// All-to-all iterations as flows (`kind = "alltoall"`).
fn alltoall(
    e: &Entry,
    w: &config::Alltoall,
    rng: &mut Rng,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let config::Alltoall {
        size,
        hosts,
        start,
        iterations,
        gap,
        skew,
    } = w;
    let hs = collective_hosts(e, hosts, *size, *iterations)?;
    if !skew.is_finite() || *skew < 0.0 {
        return Err(ScenarioError::new(
            &e.field("skew"),
            format!("{skew} is not a Zipf exponent: give 0 (uniform) or more"),
        ));
    }
    let n = hs.len();
    let steps: Vec<Vec<(usize, usize, u64)>> = (0..*iterations)
        .map(|_| {
            // Destination j's weight 1 / rank_j^skew, ranks drawn per iteration.
            let mut rank: Vec<usize> = (1..=n).collect();
            for i in (1..n).rev() {
                rank.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let w: Vec<f64> = rank.iter().map(|&r| (r as f64).powf(-skew)).collect();
            let mean = w.iter().sum::<f64>() / n as f64;
            let bytes = |j: usize| ((size.0 as f64 * w[j] / mean).round() as u64).max(1);
            (0..n)
                .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
                .map(|(i, j)| (i, j, bytes(j)))
                .collect()
        })
        .collect();
    Ok(stepped(&hs, &steps, 1, start.0, gap.0))
}

/// The HPCC simulator's flow file: first line the count, then `src dst priority dport size start_s`.
/// Node ids are taken as host ids (hosts come first in the HPCC topology numbering).
pub fn read_hpcc_flows(
    path: &std::path::Path,
    shown: &str,
    n_hosts: u32,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let text = crate::sim::input::read_input(path)
        .map_err(|e| ScenarioError::new("workload.path", format!("cannot read `{shown}`: {e}")))?;
    parse_hpcc_flows(&text, shown, n_hosts)
}

/// The text of a DAG file (`WorkloadCfg::Dag`), named `shown` in errors: one flow per line,
/// `id src dst size after delay`, `#` starts a comment. Ids are any words, each once; `after`
/// names flows of the file, listed before or after, and a cycle is refused naming an id on it.
pub fn parse_dag(
    text: &str,
    shown: &str,
    n_hosts: u32,
    start_ps: u64,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let e = |ln: usize, m: String| ScenarioError::new(&format!("{shown}: line {}", ln + 1), m);
    let lines: Vec<(usize, Vec<&str>)> = (text.lines().enumerate())
        .map(|(ln, l)| {
            (
                ln,
                l.split('#')
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .collect(),
            )
        })
        .filter(|(_, p): &(usize, Vec<&str>)| !p.is_empty())
        .collect();
    let mut ids = std::collections::HashMap::new();
    for (k, (ln, p)) in lines.iter().enumerate() {
        if p.len() != 6 {
            return Err(e(*ln, format!("{} fields, where a flow is `id src dst size after delay` (after: ids joined by commas, or -; delay: e.g. 5us, or -)", p.len())));
        }
        if let Some(first) = ids.insert(p[0], k) {
            return Err(e(
                *ln,
                format!(
                    "id `{}` is already the flow of line {}; give each flow its own id",
                    p[0],
                    lines[first].0 + 1
                ),
            ));
        }
    }
    let mut out = Vec::with_capacity(lines.len());
    for (ln, p) in &lines {
        let host = |s: &str| match s.parse::<u32>() {
            Ok(h) if h < n_hosts => Ok(h),
            _ => Err(e(
                *ln,
                format!("host `{s}` is not one of the hosts 0..{}", n_hosts - 1),
            )),
        };
        let (src, dst) = (host(p[1])?, host(p[2])?);
        if src == dst {
            return Err(e(*ln, "source and destination are the same host".into()));
        }
        let size =
            crate::sim::units::parse_size_bytes(p[3]).map_err(|m| e(*ln, format!("size: {m}")))?;
        if size == 0 || size > MAX_SIZE_BYTES {
            return Err(e(*ln, format!("size must be 1 to {MAX_SIZE_BYTES} bytes")));
        }
        let after = match p[4] {
            "-" => Vec::new(),
            list => (list.split(','))
                .map(|id| match ids.get(id) {
                    None => Err(e(
                        *ln,
                        format!("`after` names `{id}`, which no line of the file is"),
                    )),
                    Some(_) if id == p[0] => Err(e(*ln, format!("flow `{id}` waits for itself"))),
                    Some(&k) => Ok(k as u32),
                })
                .collect::<Result<_, _>>()?,
        };
        let delay = match p[5] {
            "-" => 0,
            t => crate::sim::units::parse_time_ps(t).map_err(|m| e(*ln, format!("delay: {m}")))?,
        };
        if delay > 0 && after.is_empty() {
            return Err(e(*ln, "a delay counts from the flows in `after`, and there are none: write - for either both or neither".into()));
        }
        out.push(FlowSpec {
            after,
            after_delay_ps: delay,
            ..FlowSpec::sized(src, dst, size, start_ps)
        });
    }
    if let Some(k) = on_cycle(&out) {
        return Err(e(lines[k].0, format!("flow `{}` waits, through `after`, for a flow that waits for it: a cycle never starts; remove one of its dependencies", lines[k].1[0])));
    }
    Ok(out)
}

/// The text of an HPCC simulator flow file (see `read_hpcc_flows`), named `shown` in errors.
pub fn parse_hpcc_flows(
    text: &str,
    shown: &str,
    n_hosts: u32,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let e = |ln: usize, m: String| ScenarioError::new(&format!("{shown}: line {}", ln + 1), m);
    let (ln, first) = lines.next().ok_or_else(|| e(0, "empty flow file".into()))?;
    let n: usize = first
        .trim()
        .parse()
        .map_err(|_| e(ln, "first line must be the number of flows".into()))?;
    // The header's count is checked against the lines, never trusted for an allocation.
    let mut out = Vec::new();
    for (ln, l) in lines {
        let p: Vec<&str> = l.split_whitespace().collect();
        if p.len() < 6 {
            return Err(e(
                ln,
                "expected `src dst priority dport size_bytes start_seconds`".into(),
            ));
        }
        if p.len() > 6 {
            return Err(e(ln, format!("{} fields, where a flow is `src dst priority dport size_bytes start_seconds`; ccsim would ignore `{}`: remove it", p.len(), p[6..].join(" "))));
        }
        let src: u32 = p[0]
            .parse()
            .map_err(|_| e(ln, format!("bad src `{}`", p[0])))?;
        let dst: u32 = p[1]
            .parse()
            .map_err(|_| e(ln, format!("bad dst `{}`", p[1])))?;
        match p[2].parse::<u8>() {
            Ok(prio) if (prio as usize) < crate::net::NUM_PRIO => {}
            _ => {
                return Err(e(
                    ln,
                    format!("priority `{}` is not a PFC class (0-7)", p[2]),
                ))
            }
        }
        let size: u64 = p[4]
            .parse()
            .map_err(|_| e(ln, format!("bad size `{}`", p[4])))?;
        let start: f64 = p[5]
            .parse()
            .map_err(|_| e(ln, format!("bad start time `{}`", p[5])))?;
        if src >= n_hosts || dst >= n_hosts {
            return Err(e(
                ln,
                format!("host id out of range: hosts are 0..{}", n_hosts - 1),
            ));
        }
        if src == dst {
            return Err(e(ln, "source and destination are the same host".into()));
        }
        if size == 0 {
            return Err(e(ln, "size must be > 0 bytes".into()));
        }
        if !(0.0..=(MAX_TIME_PS / PS_PER_S) as f64).contains(&start) {
            return Err(e(
                ln,
                format!(
                    "start time `{}` must be between 0 and {} seconds",
                    p[5],
                    MAX_TIME_PS / PS_PER_S
                ),
            ));
        }
        if size > MAX_SIZE_BYTES {
            return Err(e(
                ln,
                format!("size must be at most {MAX_SIZE_BYTES} bytes"),
            ));
        }
        let start_ps = (start * PS_PER_S as f64).round() as u64;
        out.push(FlowSpec::sized(src, dst, size, start_ps));
    }
    if out.len() != n {
        return Err(e(0, format!("declares {n} flows but lists {}", out.len())));
    }
    Ok(out)
}

/// Workload kinds and built-in CDFs for `ccsim list`.
pub const CATALOG: &[(&str, &str)] = &[
    ("poisson", "Poisson arrivals per host at a target load of the host link, sizes from a CDF (cdf, load, start, stop, flows, hosts)"),
    ("incast", "N senders x size to one receiver, once (at) or recurring at a target load (load, start, stop)"),
    ("long_lived", "long-lived flows between host pairs (pairs, start, stop)"),
    ("flow_file", "HPCC ns-3 simulator flow file (path)"),
    ("dag", "a DAG of flows from a file, `id src dst size after delay` per line (path, start)"),
    ("allreduce", "all-reduce, ring (2(N-1) steps of size/N to the next host) or halving_doubling, each step waiting for the chunk it needs (size, algorithm, hosts, start, iterations, gap)"),
    ("alltoall", "every host sends size to every other at once; skew > 0: Zipf-weighted destinations, a mixture-of-experts exchange (size, hosts, start, iterations, gap, skew)"),
    ("cdf:websearch", "WebSearch, DCTCP SIGCOMM'10 (mean ~1.7 MB)"),
    ("cdf:fb_hadoop", "Facebook Hadoop, Roy et al. SIGCOMM'15 (mean ~120 KB)"),
    ("cdf:cache_follower", "Facebook Cache Follower (mean ~0.7 MB)"),
    ("cdf:web_server", "Facebook Web Server (mean ~64 KB)"),
    ("cdf:data_mining", "VL2 data mining (mean ~7.4 MB)"),
    ("cdf:pcn_w1", "PCN's W1, Facebook web server, built from PCN Table 1 (mean 80 KB)"),
    ("cdf:pcn_w2", "PCN's W2, Facebook Hadoop, built from PCN Table 1 (mean 500 KB)"),
    ("cdf:amrt_hadoop", "AMRT's Hadoop Cluster: fb_hadoop reweighted to AMRT Table I (mean 1.05 MB)"),
    ("cdf:amrt_websearch", "AMRT's Web Search: websearch reweighted to AMRT Table I (mean 1.6 MB)"),
    ("cdf:amrt_data_mining", "AMRT's Data Mining: data_mining reweighted to AMRT Table I (mean 7.41 MB)"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_lists_every_built_in_cdf() {
        for (name, _) in BUILTIN_CDFS {
            let key = format!("cdf:{name}");
            assert!(CATALOG.iter().any(|(k, _)| *k == key), "{key} missing");
        }
    }

    #[test]
    fn the_mean_is_the_mean_of_the_sizes_drawn() {
        // Sizes under a byte are drawn as 1 byte: uniform on [0, 2] draws 1 B (x < 1.5) three
        // times in four and 2 B once, a mean of 1.25 B (the distribution's own mean is 1).
        let sub_byte = Cdf::parse("0 0\n2 1\n", "t").unwrap();
        assert!((sub_byte.mean() - 1.25).abs() < 1e-12);
        let mut rng = Rng::new(7, 0);
        for cdf in [sub_byte, Cdf::parse("1 0.5\n3 0.9\n1000 1\n", "t").unwrap()] {
            let n = 200_000;
            let drawn = (0..n).map(|_| cdf.sample(&mut rng) as f64).sum::<f64>() / n as f64;
            assert!(
                (drawn / cdf.mean() - 1.0).abs() < 0.01,
                "{drawn} vs {}",
                cdf.mean()
            );
        }
    }

    #[test]
    fn a_flow_count_keeps_the_first_arrivals_over_all_hosts() {
        let poisson = |flows: Option<u64>| {
            let w: WorkloadCfg = toml::from_str(&format!(
                "kind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nstop = \"1ms\"\n{}",
                flows.map_or(String::new(), |n| format!("flows = {n}\n"))
            ))
            .unwrap();
            generate(
                &w,
                0,
                &[100_000_000_000; 8],
                std::path::Path::new("."),
                &mut Rng::new(3, 0),
            )
        };
        let all = poisson(None).unwrap();
        let mut starts: Vec<u64> = all.iter().map(|f| f.start_ps).collect();
        starts.sort_unstable();
        let first = poisson(Some(10)).unwrap();
        assert_eq!(first.len(), 10);
        // The same draws, cut at the 10th arrival in time over the 8 hosts.
        let kept: Vec<u64> = first.iter().map(|f| f.start_ps).collect();
        assert_eq!(kept, starts[..10]);
        for n in [0, all.len() as u64 + 1] {
            let e = poisson(Some(n)).unwrap_err().to_string();
            assert!(e.contains("workload[0].flows"), "{e}");
        }
    }

    #[test]
    fn synchronous_incast_senders_send_one_size_per_incast() {
        let incast = |same: bool| {
            let w: WorkloadCfg = toml::from_str(&format!(
                "kind = \"incast\"\nsenders = 5\nreceiver = 0\ncdf = \"websearch\"\nevery = \"10us\"\nstop = \"100us\"\nsame_size = {same}\n"
            ))
            .unwrap();
            generate(
                &w,
                0,
                &[100_000_000_000; 8],
                std::path::Path::new("."),
                &mut Rng::new(3, 0),
            )
        };
        let per_burst = |flows: &[FlowSpec]| {
            let mut bursts = std::collections::BTreeMap::<u64, Vec<u64>>::new();
            for f in flows {
                bursts
                    .entry(f.start_ps)
                    .or_default()
                    .push(f.size_bytes.unwrap());
            }
            bursts.into_values().collect::<Vec<_>>()
        };
        let same = per_burst(&incast(true).unwrap());
        assert_eq!(same.len(), 10);
        assert!(same
            .iter()
            .all(|b| b.len() == 5 && b.iter().all(|&x| x == b[0])));
        // Sizes differ from one incast to the next, and within an incast without same_size.
        assert!(same.windows(2).any(|w| w[0][0] != w[1][0]));
        let own = per_burst(&incast(false).unwrap());
        assert!(own.iter().any(|b| b.iter().any(|&x| x != b[0])));
        let fixed: WorkloadCfg = toml::from_str(
            "kind = \"incast\"\nsenders = 2\nreceiver = 0\nsize = \"1KB\"\nat = \"0us\"\nsame_size = true\n",
        )
        .unwrap();
        let e = generate(
            &fixed,
            0,
            &[1; 4],
            std::path::Path::new("."),
            &mut Rng::new(1, 0),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("workload[0].same_size") && e.contains("cdf"),
            "{e}"
        );
    }
}
