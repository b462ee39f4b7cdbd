//! A seeded swarm of random scenarios, each checked against invariants that hold for any
//! correct run (issue: reliability):
//! - conservation: every flow's bytes reach the receiver once, in order, and are all acked when
//!   it finishes; an unfinished flow needs a reason (a PFC deadlock the detector reports);
//! - buffer accounting: switch buffers never exceed their size (an underflow would show as a
//!   huge count), a switch charges exactly the bytes it queues, and an empty fabric holds
//!   nothing;
//! - no drop under PFC;
//! - determinism: the same scenario runs twice to identical tables and summary, and the
//!   parallel engine gives the same bytes on any thread count and partitioning.
//!
//! Scenarios draw every topology kind and scheme, lossless and lossy fabrics, tight and loose
//! PFC and buffer settings, coalesced ACKs, windows, and MTUs from 256 B to 9 KB. A scenario the
//! loader rejects, or whose PFC settings let the buffer overflow (the engine stops with a
//! "lossless violation" naming the fix), or a lossy run that collapses (the watchdog names the
//! drops), must say so in one line, and few may.
//!
//! `CCSIM_SWARM=N` sets the count (CI: 300), `CCSIM_SWARM_SEED=S` the first seed. A failure
//! prints its seed and the scenario, which `ccsim run` takes as it is.
mod common;

use ccsim::cc::FabricMode;
use ccsim::{Scenario, Simulation};

/// splitmix64: a tiny deterministic generator, independent of the engine's own.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn scenarios_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// A random topology as TOML, and its host count.
fn topology(d: &mut Draw) -> (String, u64) {
    let rate = *d.pick(&["10Gbps", "25Gbps", "40Gbps", "100Gbps"]);
    let link = format!("{{ rate = \"{rate}\", delay = \"{}us\" }}", d.range(1, 5));
    match d.below(7) {
        0 => {
            let n = d.range(2, 8);
            (format!("kind = \"star\"\nhosts = {n}\nlink = {link}"), n)
        }
        1 => {
            let (l, r) = (d.range(1, 4), d.range(1, 4));
            let bottleneck = format!(
                "{{ rate = \"{}\", delay = \"2us\" }}",
                d.pick(&["10Gbps", rate])
            );
            (format!("kind = \"dumbbell\"\nleft_hosts = {l}\nright_hosts = {r}\nhost_link = {link}\nbottleneck = {bottleneck}"), l + r)
        }
        2 => {
            let (leaves, spines, per) = (d.range(2, 3), d.range(1, 2), d.range(1, 3));
            (format!("kind = \"leaf_spine\"\nleaves = {leaves}\nspines = {spines}\nhosts_per_leaf = {per}\nhost_link = {link}\nfabric_link = {link}"), leaves * per)
        }
        3 => (
            format!("kind = \"fat_tree\"\nk = 4\nhost_link = {link}\nfabric_link = {link}"),
            16,
        ),
        4 => {
            let bursts = d.range(1, 3);
            (
                format!("kind = \"chain\"\nbursts = {bursts}\nlink = {link}"),
                4 + bursts,
            )
        }
        5 => {
            let p = scenarios_dir().join("topologies/triangle.toml");
            (
                format!("kind = \"file\"\npath = {:?}", p.display().to_string()),
                3,
            )
        }
        _ => {
            let p = scenarios_dir().join("topologies/hpcc-fat-320.txt");
            (
                format!("kind = \"hpcc\"\npath = {:?}", p.display().to_string()),
                320,
            )
        }
    }
}

/// A random scenario for `seed`, as TOML.
fn scenario(seed: u64) -> String {
    let mut d = Draw(seed);
    let schemes: Vec<_> = ccsim::cc::schemes().collect();
    let info = *d.pick(&schemes);
    let lossless = match info.fabric {
        FabricMode::Lossless => true,
        FabricMode::Lossy => false,
        FabricMode::Any => d.chance(60),
    };
    let (topo, hosts) = topology(&mut d);
    let mut s = format!(
        "name = \"swarm-{seed}\"\nseed = {}\n[topology]\n{topo}\n",
        seed % 1000
    );
    s += &format!("[cc]\nscheme = \"{}\"\n", info.name);
    if info.name == "phost" && d.chance(50) {
        s += "params = { clock = \"arrival\" }\n";
    }
    if info.name == "amrt" && d.chance(50) {
        s += "params = { fair_marks = true }\n";
    }
    s += &format!(
        "[fabric]\nbuffer = \"{}\"\n",
        d.pick(&["2MB", "4MB", "12MB", "32MB"])
    );
    if info.strict_priority {
        s += "scheduler = \"strict\"\n";
    }
    if lossless {
        if d.chance(50) {
            s += &format!(
                "pfc = {{ xoff = \"{}\" }}\n",
                d.pick(&["20KB", "100KB", "512KB"])
            );
        } else {
            s += &format!(
                "pfc = {{ mode = \"dynamic\", alpha = {} }}\n",
                d.pick(&[0.0625, 0.125, 1.0])
            );
        }
    } else {
        s += "pfc = { enabled = false }\n";
        if d.chance(50) {
            s += &format!(
                "loss = {{ mode = \"drop_tail\", queue_packets = {} }}\n",
                d.pick(&[8, 32, 256])
            );
        } else {
            s += &format!(
                "loss = {{ mode = \"dynamic\", alpha = {} }}\n",
                d.pick(&[0.5, 1.0, 4.0])
            );
        }
    }
    let mtu = *d.pick(&[256u64, 512, 1000, 1500, 4000, 9000]);
    s += &format!(
        "[host]\nmtu_payload_bytes = {mtu}\nack_every_packets = {}\n",
        d.pick(&[1, 1, 2, 4, 16])
    );
    if d.chance(30) {
        s += &format!("window = \"{}B\"\n", mtu * d.range(1, 64));
    }
    for _ in 0..d.range(1, 10) {
        let src = d.below(hosts);
        let dst = (src + d.range(1, hosts - 1)) % hosts;
        let size = *d.pick(&[
            "1B", "100B", "999B", "1000B", "4096B", "20KB", "100KB", "1MB",
        ]);
        s += &format!(
            "[[flows]]\nsrc = {src}\ndst = {dst}\nsize = \"{size}\"\nstart = \"{}ns\"\n",
            d.range(0, 50_000)
        );
    }
    if d.chance(60) && hosts >= 3 {
        let senders = d.range(2, (hosts - 1).min(15));
        s += &format!(
            "[[workload]]\nkind = \"incast\"\nsenders = {senders}\nsize = \"{}\"\nat = \"20us\"\n",
            d.pick(&["10KB", "64KB", "500KB", "2MB"])
        );
    }
    if d.chance(30) {
        let stop = if hosts > 100 { "20us" } else { "100us" };
        s += &format!(
            "[[workload]]\nkind = \"poisson\"\ncdf = \"{}\"\nload = {}\nstop = \"{stop}\"\n",
            d.pick(&[
                "websearch",
                "fb_hadoop",
                "cache_follower",
                "web_server",
                "data_mining"
            ]),
            d.pick(&[0.2, 0.5, 0.8])
        );
    }
    // Sometimes a cut into fewer partitions than the fabric's shape gives (parallel runs).
    if d.chance(30) {
        s = format!("partitions = {}\n{s}", d.range(1, 16));
    }
    s
}

/// The run's whole output as text (determinism compares all of it), and its summary.
fn output(sc: &Scenario, sim: &mut Simulation) -> (String, serde_json::Value) {
    let r = sc.results(sim);
    let mut out = r.summary.to_string();
    for t in &r.tables {
        out += &t.to_csv();
    }
    (out, r.summary)
}

/// Run `toml` and check every invariant: Ok(summary), Ok(None) if rejected or stopped with a
/// one-line error, or Err saying which invariant failed.
fn check(toml: &str) -> Result<Option<serde_json::Value>, String> {
    let dir = std::env::temp_dir();
    // A scenario the loader or builder rejects must say so in one line.
    let reject = |e: ccsim::ScenarioError| match e.to_string() {
        m if m.contains('\n') => Err(format!("error of more than one line: {m}")),
        m => {
            eprintln!("rejected: {m}");
            Ok(None)
        }
    };
    let sc = match Scenario::load(toml, &dir, None, &[]) {
        Ok(sc) => sc,
        Err(e) => return reject(e),
    };
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mut sim = match sc.build() {
            Ok(sim) => sim,
            Err(e) => return reject(e),
        };
        match sim.run() {
            // Static XOFF thresholds that add up past the buffer (tight settings) can overflow
            // it: the engine stops with this one-line error rather than drop under PFC.
            Err(e) if e.to_string().starts_with("lossless violation") => {
                eprintln!("stopped: {e}");
                return Ok(None);
            }
            // A lossy fabric whose scheme cannot slow the senders (e.g. DCQCN with a drop-tail
            // queue shorter than its ECN threshold) can collapse under go-back-N: physics, which
            // the watchdog tells from a stuck sender by the drops during the stall.
            Err(e) if e.to_string().contains("congestion collapse") => {
                eprintln!("stopped: {e}");
                return Ok(None);
            }
            r => r.map_err(|e| format!("run failed: {e}"))?,
        }
        let (text, summary) = output(&sc, &mut sim);
        runs.push((sim, text, summary));
    }
    let (sim, text, summary) = &runs[0];
    if *text != runs[1].1 {
        return Err("two runs of the same scenario differ".into());
    }
    invariants(&sc, sim, summary)?;
    // The parallel engine: one simulation's bytes on 1 and 3 threads
    // (`common::thread_counts`), however the scenario cuts the fabric.
    for threads in [1].into_iter().chain(common::thread_counts(&[3])) {
        let mut run = match sc.start_parallel(threads) {
            Ok(run) => run,
            // A trace, or a zero-delay link between partitions: refused, naming `threads`;
            // anything else that built on one thread must build in partitions too.
            Err(e) if e.field == "threads" && !e.to_string().contains('\n') => {
                eprintln!("parallel refused: {e}");
                return Ok(Some(summary.clone()));
            }
            Err(e) => return Err(format!("parallel: {e}")),
        };
        run.run()
            .map_err(|e| format!("parallel run on {threads} threads failed: {e}"))?;
        let (ptext, _) = output(&sc, &mut run.into_simulation());
        if ptext != *text {
            return Err(format!(
                "the parallel engine on {threads} threads differs from one simulation"
            ));
        }
    }
    Ok(Some(summary.clone()))
}

/// Conservation, buffers and PFC's promise on a finished run.
fn invariants(sc: &Scenario, sim: &Simulation, summary: &serde_json::Value) -> Result<(), String> {
    // Conservation.
    let mut delivered = 0;
    for (i, f) in sim.flows.iter().enumerate() {
        delivered += f.rcv_nxt;
        if f.rcv_nxt > f.size_bytes || f.snd_una > f.rcv_nxt {
            return Err(format!(
                "flow {i}: {} B delivered, {} acked, of {}",
                f.rcv_nxt, f.snd_una, f.size_bytes
            ));
        }
        if f.finished && (f.rcv_nxt != f.size_bytes || f.snd_una != f.size_bytes) {
            return Err(format!(
                "flow {i} finished with {} B delivered, {} acked, of {}",
                f.rcv_nxt, f.snd_una, f.size_bytes
            ));
        }
    }
    if delivered != sim.metrics.delivered_bytes {
        return Err(format!(
            "{} B delivered in all, but flows hold {delivered}",
            sim.metrics.delivered_bytes
        ));
    }
    let unfinished = sim.flows.iter().filter(|f| !f.finished).count();
    if unfinished > 0 && summary["pfc"]["deadlock"] != true {
        return Err(format!(
            "{unfinished} flows unfinished with no deadlock to explain them"
        ));
    }
    if unfinished > 0 {
        return Ok(()); // a deadlocked fabric keeps its buffers full
    }
    // Buffers.
    let buffer = sc.cfg.fabric.buffer.0;
    for sw in &sim.switches {
        if sw.max_used_bytes > buffer {
            return Err(format!(
                "switch {} held {} B of a {buffer} B buffer",
                sw.node, sw.max_used_bytes
            ));
        }
    }
    common::assert_buffers_account(sim)?;
    if sc.cfg.fabric.pfc.enabled && summary["loss"]["drops"].as_u64().unwrap_or(0) > 0 {
        return Err("a packet was dropped under PFC".into());
    }
    Ok(())
}

#[test]
fn random_scenarios_keep_the_invariants() {
    let env = |k: &str, default: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (n, first) = (env("CCSIM_SWARM", 300), env("CCSIM_SWARM_SEED", 1));
    let (mut ran, mut rejected, mut failed) = (0, Vec::new(), Vec::new());
    let (mut paused, mut dropped, mut deadlocked) = (0, 0, 0);
    for seed in first..first + n {
        let toml = scenario(seed);
        match check(&toml) {
            Ok(Some(summary)) => {
                ran += 1;
                paused += (summary["pfc"]["pauses_sent"].as_u64() > Some(0)) as u32;
                dropped += (summary["loss"]["drops"].as_u64() > Some(0)) as u32;
                deadlocked += (summary["pfc"]["deadlock"] == true) as u32;
            }
            Ok(None) => rejected.push(seed),
            Err(why) => {
                eprintln!("swarm seed {seed} FAILED: {why}\n--- scenario ---\n{toml}--- end ---");
                failed.push(seed);
            }
        }
    }
    eprintln!(
        "swarm: {n} scenarios from seed {first}: {ran} ran and kept every invariant ({paused} with PFC pauses, {dropped} with drops, {deadlocked} deadlocked), {} rejected or stopped cleanly, {} failed",
        rejected.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "failed seeds: {failed:?}");
    assert!(
        rejected.len() as u64 * 10 <= n,
        "too many scenarios rejected: {rejected:?}"
    );
}
