//! ECMP spreads flows over every equal-cost uplink; runs are deterministic (same seed, same
//! bytes) and seeds matter; generated load and sizes follow the request and the CDF.
mod common;

use ccsim::sim::Rng;
use ccsim::workload::{generate, Cdf};

#[test]
fn ecmp_uses_every_equal_cost_uplink() {
    // 4 hosts on leaf0 each send 16 flows to hosts on leaf1: with 4 spines, every leaf0 uplink
    // must carry data.
    let mut flows = String::new();
    for src in 0..4 {
        for k in 0..16 {
            flows.push_str(&format!(
                "[[flows]]\nsrc = {src}\ndst = {}\nsize = \"20KB\"\nstart = \"{k}us\"\n",
                4 + (k % 4)
            ));
        }
    }
    let toml = format!("[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 4\nhosts_per_leaf = 4\nhost_link = {{ rate = \"100Gbps\", delay = \"1us\" }}\nfabric_link = {{ rate = \"100Gbps\", delay = \"1us\" }}\n{flows}");
    let (_, sim, _) = common::run(&toml);
    let uplinks: Vec<u64> = sim
        .ports
        .iter()
        .filter(|p| {
            sim.topo.nodes[p.node as usize].name == "leaf0"
                && sim.topo.nodes[sim.ports[p.peer as usize].node as usize]
                    .name
                    .starts_with("spine")
        })
        .map(|p| p.tx_bytes)
        .collect();
    assert_eq!(uplinks.len(), 4);
    let total: u64 = uplinks.iter().sum();
    for (i, b) in uplinks.iter().enumerate() {
        assert!(
            *b as f64 > 0.1 * total as f64,
            "uplink {i} carries {b} of {total} bytes: {uplinks:?}"
        );
    }
}

fn websearch_run(seed: u64) -> ccsim::Results {
    let toml = format!("[topology]\n{}\n[cc]\nscheme = \"dcqcn\"\n[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nstop = \"200us\"\n[output]\nqueues = {{ interval = \"5us\", ports = [\"all\"] }}\nrates = {{ interval = \"20us\" }}\n", common::FATTREE_K4);
    common::run_with(&toml, Some(seed), &[]).2
}

#[test]
fn same_seed_gives_byte_identical_outputs() {
    let (a, b) = (websearch_run(7), websearch_run(7));
    for (ta, tb) in a.tables.iter().zip(&b.tables) {
        assert_eq!(
            ta.to_csv(),
            tb.to_csv(),
            "table {} differs between identical runs",
            ta.name
        );
    }
    assert_eq!(a.summary.to_string(), b.summary.to_string());
    assert_eq!(a.config_toml, b.config_toml);
    let c = websearch_run(8);
    assert_ne!(
        a.tables[0].to_csv(),
        c.tables[0].to_csv(),
        "a different seed must give different arrivals"
    );
}

#[test]
fn resolved_config_reruns_identically() {
    let a = websearch_run(3);
    let sc = ccsim::Scenario::load(&a.config_toml, std::path::Path::new("."), None, &[]).unwrap();
    assert_eq!(
        sc.resolved_toml(),
        a.config_toml,
        "resolving a resolved config is a fixed point"
    );
    let mut sim = sc.build().unwrap();
    sim.run().unwrap();
    let b = sc.results(&mut sim);
    assert_eq!(a.tables[0].to_csv(), b.tables[0].to_csv());
}

#[test]
fn poisson_load_matches_request() {
    // 64 hosts at 100G, 40% load, 50 ms of arrivals: offered bytes / capacity within 5%.
    let rates = vec![100_000_000_000u64; 64];
    for (cdf, load) in [("websearch", 0.4), ("fb_hadoop", 0.5), ("web_server", 0.8)] {
        let w: ccsim::scenario::config::WorkloadCfg = toml::from_str(&format!(
            "kind = \"poisson\"\ncdf = \"{cdf}\"\nload = {load}\nstop = \"50ms\"\n"
        ))
        .unwrap();
        let flows = generate(
            &w,
            0,
            &rates,
            std::path::Path::new("."),
            &mut Rng::new(11, 1),
        )
        .unwrap();
        let bytes: u64 = flows.iter().map(|f| f.size_bytes.unwrap()).sum();
        let capacity = 64.0 * 100e9 / 8.0 * 0.05;
        let got = bytes as f64 / capacity;
        eprintln!(
            "{cdf}: requested load {load}, generated {got:.4} ({} flows)",
            flows.len()
        );
        assert!(
            (got - load).abs() <= 0.05 * load,
            "{cdf}: generated load {got} vs {load}"
        );
        assert!(flows
            .iter()
            .all(|f| f.src != f.dst && f.start_ps < 50_000_000_000));
    }
}

#[test]
fn sampled_sizes_follow_the_cdf() {
    // One-sample Kolmogorov-Smirnov against the piecewise-linear CDF, n = 20000, alpha = 0.01.
    for (name, _) in ccsim::workload::BUILTIN_CDFS {
        let cdf = Cdf::load(name, std::path::Path::new("."), "cdf").unwrap();
        let mut rng = Rng::new(5, 9);
        let n = 20_000;
        let mut xs: Vec<f64> = (0..n).map(|_| cdf.sample(&mut rng) as f64).collect();
        xs.sort_by(|a, b| a.total_cmp(b));
        let mut d: f64 = 0.0;
        for (i, &x) in xs.iter().enumerate() {
            let f = cdf.cdf_at(x);
            d = d
                .max((f - i as f64 / n as f64).abs())
                .max(((i + 1) as f64 / n as f64 - f).abs());
        }
        let crit = 1.63 / (n as f64).sqrt();
        // Sizes are rounded to whole bytes: allow the CDF's mass within half a byte of a jump.
        assert!(d < crit + 1e-3, "{name}: KS statistic {d} >= {crit}");
    }
}

#[test]
fn hpcc_topology_file_gives_the_acc_fabric() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/topologies/hpcc-fat-320.txt");
    let t = ccsim::topo::Topology::build(
        &ccsim::scenario::config::TopologyCfg::Hpcc {
            path: path.to_string_lossy().into(),
        },
        std::path::Path::new("."),
    )
    .unwrap();
    use ccsim::topo::Layer;
    let count = |l: Layer| t.nodes.iter().filter(|n| n.layer == l).count();
    assert_eq!(
        (
            count(Layer::Host),
            count(Layer::Tor),
            count(Layer::Agg),
            count(Layer::Core)
        ),
        (320, 20, 20, 16)
    );
    assert_eq!(t.links.len(), 480);
}

#[test]
fn recurring_incast_adds_the_requested_load() {
    // 64 hosts, 16-to-1 incasts of 20 KB at 20% of the hosts' total capacity over 20 ms.
    let rates = vec![100_000_000_000u64; 64];
    let w: ccsim::scenario::config::WorkloadCfg = toml::from_str(
        "kind = \"incast\"\nsenders = 16\nsize = \"20KB\"\nload = 0.2\nstop = \"20ms\"\n",
    )
    .unwrap();
    let flows = generate(
        &w,
        0,
        &rates,
        std::path::Path::new("."),
        &mut Rng::new(3, 1),
    )
    .unwrap();
    let bytes: u64 = flows.iter().map(|f| f.size_bytes.unwrap()).sum();
    let got = bytes as f64 / (64.0 * 100e9 / 8.0 * 0.02);
    assert!((got - 0.2).abs() <= 0.05 * 0.2, "incast load {got}");
    assert_eq!(flows.len() % 16, 0);
    for burst in flows.chunks(16) {
        let dst = burst[0].dst;
        assert!(burst
            .iter()
            .all(|f| f.dst == dst && f.src != dst && f.start_ps == burst[0].start_ps));
        let mut srcs: Vec<u32> = burst.iter().map(|f| f.src).collect();
        srcs.sort();
        srcs.dedup();
        assert_eq!(srcs.len(), 16, "senders of one incast are distinct");
    }
}

#[test]
fn hpcc_flow_file_is_read_as_written() {
    let dir = std::env::temp_dir();
    std::fs::write(
        dir.join("ccsim-flows.txt"),
        "2\n0 5 3 100 12345 2.000001\n7 1 3 100 1000 2.5\n",
    )
    .unwrap();
    let flows = ccsim::workload::read_hpcc_flows(&dir.join("ccsim-flows.txt"), "f", 8).unwrap();
    assert_eq!(flows.len(), 2);
    assert_eq!(
        (
            flows[0].src,
            flows[0].dst,
            flows[0].size_bytes,
            flows[0].start_ps
        ),
        (0, 5, Some(12345), 2_000_001_000_000)
    );
    assert_eq!(
        (flows[1].src, flows[1].dst, flows[1].start_ps),
        (7, 1, 2_500_000_000_000)
    );
    std::fs::write(dir.join("ccsim-flows-bad.txt"), "3\n0 5 3 100 12345 2.0\n").unwrap();
    let e = ccsim::workload::read_hpcc_flows(&dir.join("ccsim-flows-bad.txt"), "f", 8).unwrap_err();
    assert!(
        e.to_string().contains("declares 3 flows but lists 1"),
        "{e}"
    );
}
