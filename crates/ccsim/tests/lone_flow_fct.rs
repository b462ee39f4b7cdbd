//! A lone flow's FCT equals its ideal FCT (DESIGN.md: base RTT + wire bytes / bottleneck rate)
//! within one full packet's serialization per link, for sizes from one packet to 10 MB and
//! paths through 1, 3 and 5 switches.
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
    // (topology, dst host, switches on the path, links on the path)
    let paths = [
        (STAR, 1, 1, 2),
        (LEAF_SPINE, 3, 3, 4),
        (common::FATTREE_K4, 15, 5, 6),
    ];
    let full_pkt_ps_at_100g = 1048 * 80; // 1048 B at 100 Gb/s
    for (topo, dst, switches, links) in paths {
        for size in [1_000u64, 1_500, 64_000, 1_000_000, 10_000_000] {
            for scheme in ["none", "dcqcn"] {
                let toml = format!("[topology]\n{topo}\n[cc]\nscheme = \"{scheme}\"\n[[flows]]\nsrc = 0\ndst = {dst}\nsize = {size}\n");
                let (_, _, r) = common::run(&toml);
                let fct = common::column(&r, "flows", "fct_ps")[0];
                let ideal = common::column(&r, "flows", "ideal_fct_ps")[0];
                let residual = fct - ideal;
                eprintln!("{switches} switches, {size:>9} B, {scheme:>5}: fct {fct} ps, ideal {ideal} ps, residual {residual} ps");
                assert!(
                    residual.abs() <= (links * full_pkt_ps_at_100g) as f64,
                    "{switches}-switch path, {size} B: residual {residual} ps exceeds one packet per link"
                );
            }
        }
    }
}

#[test]
fn single_packet_residual_is_ack_serialization_minus_one_packet() {
    // Exact: data + ACK are store-and-forwarded at every link; the ideal counts a full packet
    // per link plus the bytes once at the bottleneck. For a 1000 B flow on a star:
    // fct = 2 x ser(1048) + 4 us + 2 x ser(60); ideal = 4 us + 2 x ser(1048) + ser(1048).
    let toml = "[topology]\nkind = \"star\"\nhosts = 2\nlink = { rate = \"100Gbps\", delay = \"1us\" }\n[[flows]]\nsrc = 0\ndst = 1\nsize = 1000\n";
    let (_, _, r) = common::run(toml);
    let fct = common::column(&r, "flows", "fct_ps")[0];
    let ideal = common::column(&r, "flows", "ideal_fct_ps")[0];
    assert_eq!(fct, (2 * 1048 * 80 + 4_000_000 + 2 * 60 * 80) as f64);
    assert_eq!(ideal, (4_000_000 + 3 * 1048 * 80) as f64);
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
