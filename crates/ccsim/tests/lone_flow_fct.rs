//! A lone flow's FCT equals its ideal FCT (DESIGN.md: the first packet and the last ACK
//! store-and-forwarded at every hop, the other bytes at the bottleneck) exactly, for sizes from
//! under one packet to 10 MB and paths through 1, 3 and 5 switches; and the HPCC simulator's
//! definition, kept as an option, is what it says.
mod common;

const STAR: &str = r#"kind = "star"
hosts = 2
link = { rate = "100Gbps", delay = "1us" }"#;
const LEAF_SPINE: &str = r#"kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_link = { rate = "100Gbps", delay = "1us" }
fabric_link = { rate = "400Gbps", delay = "1us" }"#;

#[test]
fn lone_flow_matches_ideal_fct() {
    // (topology, dst host, switches on the path)
    let paths = [
        (STAR, 1, 1),
        (LEAF_SPINE, 3, 3),
        (common::FATTREE_K4, 15, 5),
    ];
    for (topo, dst, switches) in paths {
        for size in [1u64, 999, 1_000, 1_500, 64_000, 1_000_000, 10_000_000] {
            for scheme in ["none", "dcqcn"] {
                let toml = format!("[topology]\n{topo}\n[cc]\nscheme = \"{scheme}\"\n[[flows]]\nsrc = 0\ndst = {dst}\nsize = {size}\n");
                let (_, _, r) = common::run(&toml);
                let fct = common::column(&r, "flows", "fct_ps")[0];
                let ideal = common::column(&r, "flows", "ideal_fct_ps")[0];
                assert_eq!(fct, ideal, "{switches}-switch path, {size} B, {scheme}");
            }
        }
    }
}

#[test]
fn a_flow_under_one_mtu_and_the_hpcc_definition() {
    // 1001 B with a 4000 B MTU on a star at 100G, 1 us links: data (1049 B) and ACK (60 B)
    // are store-and-forwarded at both links, so fct = 4 us + 2 x ser(1049) + 2 x ser(60).
    // The HPCC simulator's ideal charges a 4000 B payload per link and the bytes once more:
    // 4 us + 2 x ser(4000) + ser(1049), so it reads a slowdown of 0.78.
    let toml = |ideal: &str| {
        format!("[topology]\nkind = \"star\"\nhosts = 2\nlink = {{ rate = \"100Gbps\", delay = \"1us\" }}\n[host]\nmtu_payload_bytes = 4000\n[output]\nideal_fct = \"{ideal}\"\n[[flows]]\nsrc = 0\ndst = 1\nsize = 1001\n")
    };
    let ser = |b: u64| (b * 80) as f64; // ps at 100 Gb/s
    let fct = 4e6 + 2.0 * ser(1049) + 2.0 * ser(60);
    let (_, _, r) = common::run(&toml("exact"));
    assert_eq!(common::column(&r, "flows", "fct_ps")[0], fct);
    assert_eq!(common::column(&r, "flows", "ideal_fct_ps")[0], fct);
    assert_eq!(common::column(&r, "flows", "slowdown")[0], 1.0);
    let (_, _, r) = common::run(&toml("hpcc"));
    let hpcc = 4e6 + 2.0 * ser(4000) + ser(1049);
    assert_eq!(common::column(&r, "flows", "ideal_fct_ps")[0], hpcc);
    assert!((common::column(&r, "flows", "slowdown")[0] - fct / hpcc).abs() < 1e-9);
}

#[test]
fn window_limits_throughput_to_window_over_rtt() {
    // A 20 KB window on a path whose RTT (one packet + ACK store-and-forward, 4 x 2 us) is
    // ~8.2 us holds a lone flow to W / RTT ~ 19.5 Gb/s, far below the 100 Gb/s line rate.
    let toml = "[topology]\nkind = \"star\"\nhosts = 2\nlink = { rate = \"100Gbps\", delay = \"2us\" }\n[host]\nwindow = \"20KB\"\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"10MB\"\n";
    let (_, _, r) = common::run(toml);
    let fct_s = common::column(&r, "flows", "fct_ps")[0] / 1e12;
    let rtt_s = (8_000_000.0 + 2.0 * 1048.0 * 80.0 + 2.0 * 60.0 * 80.0) / 1e12;
    let expected_bps = 20_000.0 * 8.0 / rtt_s;
    let got_bps = 10e6 * 8.0 / fct_s;
    assert!(
        (got_bps - expected_bps).abs() < 0.05 * expected_bps,
        "throughput {got_bps} vs W/RTT {expected_bps}"
    );
}

#[test]
fn whole_ns_serialization_saves_the_fraction_on_every_packet() {
    // fabric.tx_time = "floor_ns" (ns-3): at 100G a 1048 B packet takes 83 ns, not 83.84, and a
    // 60 B ACK 4 ns, not 4.8. A lone n-packet flow on a star serializes n + 1 data packets
    // (the first at both links, the rest at the bottleneck) and 2 ACKs on its critical path.
    let n = 10u64;
    let toml = |tx: &str| {
        format!("[topology]\n{STAR}\n[fabric]\ntx_time = \"{tx}\"\n[[flows]]\nsrc = 0\ndst = 1\nsize = {}\n", n * 1000)
    };
    let fct = |tx: &str| common::column(&common::run(&toml(tx)).2, "flows", "fct_ps")[0];
    let saved = fct("exact") - fct("floor_ns");
    assert_eq!(saved, ((n + 1) * 840 + 2 * 800) as f64);
}

#[test]
fn a_rate_limited_flow_takes_its_wire_bytes_over_the_limit() {
    // 10 MB through a 10 Gb/s limiter on 100G links: 10,000 packets of 1048 wire bytes leave
    // one every 838.4 ns, so the last byte lands ~8.384 ms after the first (plus the path).
    let toml = "[topology]\nkind = \"star\"\nhosts = 2\nlink = { rate = \"100Gbps\", delay = \"1us\" }\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"10MB\"\nrate = \"10Gbps\"\n";
    let (_, _, r) = common::run(toml);
    let fct_ps = common::column(&r, "flows", "fct_ps")[0];
    let paced_ps = 9_999.0 * 1048.0 * 800.0;
    assert!(
        fct_ps > paced_ps && fct_ps < paced_ps + 10e6,
        "FCT {fct_ps} ps vs {paced_ps} ps of pacing"
    );
    // The limiter is the path's slowest hop for the ideal FCT: a lone limited flow is ideal.
    let slowdown = common::column(&r, "flows", "slowdown")[0];
    assert!((1.0..1.001).contains(&slowdown), "slowdown {slowdown}");
}
