//! Lossless fabric: conservation (every byte sent is delivered exactly once, no drop), PFC fires
//! where it belongs in an incast, the bottleneck stays at line rate, and buffer accounting
//! returns to zero. Includes a seeded invariant sweep over random small scenarios.
mod common;

const INCAST: &str = r#"
[topology]
kind = "star"
hosts = 17
link = { rate = "100Gbps", delay = "1us" }
[[workload]]
kind = "incast"
senders = 16
receiver = 16
size = "1MB"
at = "0us"
"#;

#[test]
fn incast_without_cc_conserves_bytes_and_pauses_senders() {
    let (_, sim, r) = common::run(INCAST);
    let s = &r.summary;
    assert_eq!(s["flows"]["finished"], 16);
    assert_eq!(s["flows"]["payload_bytes_delivered"], 16_000_000u64);
    assert_eq!(s["flows"]["payload_bytes_acked"], 16_000_000u64);
    common::assert_buffers_empty(&sim);
    // PFC fired: the switch paused the senders' links, and only those.
    let pauses = s["pfc"]["pauses_sent"].as_u64().unwrap();
    assert!(pauses > 0, "a 16:1 incast at line rate must trigger PFC");
    for p in &sim.ports {
        let node = &sim.topo.nodes[p.node as usize];
        let peer = &sim.topo.nodes[sim.ports[p.peer as usize].node as usize];
        if node.name == "sw0" {
            if peer.name == "h16" {
                assert_eq!(
                    p.pause_sent, 0,
                    "the receiver's link is not congested inbound"
                );
            } else {
                assert!(
                    p.pause_sent > 0,
                    "sender link {} was never paused",
                    peer.name
                );
            }
        }
        if node.name.starts_with('h') && node.name != "h16" {
            assert_eq!(
                p.pause_rx, sim.ports[p.peer as usize].pause_sent,
                "every PAUSE sent is received"
            );
        }
    }
    assert_eq!(s["pfc"]["by_layer"]["tor"]["pauses_sent"], pauses);
    assert_eq!(s["pfc"]["by_layer"]["host"]["pauses_received"], pauses);
}

#[test]
fn incast_without_cc_keeps_bottleneck_at_line_rate() {
    // Line rate at the bottleneck: the last byte reaches the receiver no later than the total
    // wire bytes at 100 Gb/s plus one path latency; the bottleneck port sent exactly that much.
    let (_, sim, r) = common::run(INCAST);
    let wire_bytes = 16 * 1000 * 1048u64;
    let line_ps = wire_bytes * 80;
    let finish = common::column(&r, "flows", "finish_ps")
        .into_iter()
        .fold(0.0, f64::max);
    let slack_ps = 2 * 2 * 1_000_000 + 10 * 1048 * 80; // RTT + a few packets of pipeline fill
    assert!(
        finish <= (line_ps + slack_ps) as f64,
        "finish {finish} ps vs line-rate bound {line_ps} ps"
    );
    let bottleneck = sim
        .ports
        .iter()
        .find(|p| {
            sim.topo.nodes[p.node as usize].name == "sw0"
                && sim.topo.nodes[sim.ports[p.peer as usize].node as usize].name == "h16"
        })
        .unwrap();
    assert_eq!(bottleneck.tx_bytes, wire_bytes);
}

#[test]
fn fat_tree_websearch_conserves_bytes() {
    // Every scheme that runs on a lossless fabric (the lossy-only ones have lossy.rs).
    let lossless = ccsim::cc::schemes().filter(|s| s.fabric != ccsim::cc::FabricMode::Lossy);
    for scheme in lossless.map(|s| s.name) {
        let toml = format!(
            "[topology]\n{}\n{}[cc]\nscheme = \"{scheme}\"\n[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.6\nstop = \"300us\"\n",
            common::FATTREE_K4,
            common::scheme_fabric(scheme)
        );
        let (_, sim, r) = common::run(&toml);
        let sizes: f64 = common::column(&r, "flows", "size_bytes").iter().sum();
        let s = &r.summary;
        assert!(s["flows"]["total"].as_u64().unwrap() > 10);
        assert_eq!(s["flows"]["unfinished"], 0, "{scheme}: every flow finishes");
        assert_eq!(
            s["flows"]["payload_bytes_delivered"].as_f64().unwrap(),
            sizes,
            "{scheme}: delivered == offered"
        );
        assert_eq!(s["flows"]["payload_bytes_acked"].as_f64().unwrap(), sizes);
        common::assert_buffers_empty(&sim);
        // Every slowdown is >= 1 up to the ACK/packet rounding of the ideal FCT.
        for sd in common::column(&r, "flows", "slowdown") {
            assert!(sd > 0.9, "{scheme}: slowdown {sd}");
        }
    }
}

#[test]
fn random_scenarios_keep_invariants() {
    // Seeded random incasts and Poisson mixes on small fabrics: conservation, no loss, buffers
    // back to zero. A failure prints the seed that reproduces it.
    for seed in 1..=12u64 {
        let topo = if seed % 2 == 0 {
            common::FATTREE_K4.to_string()
        } else {
            "kind = \"leaf_spine\"\nleaves = 3\nspines = 2\nhosts_per_leaf = 4\nhost_link = { rate = \"100Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"100Gbps\", delay = \"2us\" }".to_string()
        };
        let schemes: Vec<_> = ccsim::cc::schemes().collect();
        let scheme = schemes[seed as usize % schemes.len()].name;
        let mode = if seed % 4 < 2 { "static" } else { "dynamic" };
        let toml = format!(
            "[topology]\n{topo}\n[cc]\nscheme = \"{scheme}\"\n[fabric.pfc]\nmode = \"{mode}\"\nxoff = \"64KB\"\n[[workload]]\nkind = \"poisson\"\ncdf = \"web_server\"\nload = 0.5\nstop = \"100us\"\n[[workload]]\nkind = \"incast\"\nsenders = 8\nsize = \"50KB\"\nat = \"20us\"\n"
        );
        let sc = ccsim::Scenario::load(&toml, std::path::Path::new("."), Some(seed), &[]).unwrap();
        let mut sim = sc.build().unwrap();
        if let Err(e) = sim.run() {
            panic!("seed {seed} ({scheme}): {e}");
        }
        let r = sc.results(&mut sim);
        let sizes: f64 = common::column(&r, "flows", "size_bytes").iter().sum();
        assert_eq!(
            r.summary["flows"]["unfinished"], 0,
            "seed {seed} ({scheme})"
        );
        assert_eq!(
            r.summary["flows"]["payload_bytes_delivered"]
                .as_f64()
                .unwrap(),
            sizes,
            "seed {seed}"
        );
        common::assert_buffers_empty(&sim);
    }
}

#[test]
fn headroom_overflow_fails_loudly() {
    // Headroom far below the in-flight bytes after a PAUSE: the run must stop with a lossless
    // violation instead of dropping silently.
    let toml = format!("{INCAST}\n[fabric.pfc]\nxoff = \"20KB\"\nheadroom = \"2KB\"\n");
    let err = common::run_error(&toml, &[]);
    assert!(
        err.contains("lossless violation") && err.contains("headroom"),
        "{err}"
    );
}

#[test]
fn go_back_n_recovers_from_a_gap_and_delivers_each_byte_once() {
    // Inject an out-of-order data packet at the receiver mid-flow: the receiver must NACK its
    // next expected byte, the sender go back to it, and the flow still deliver exactly its size.
    use ccsim::net::{Packet, PktKind};
    use ccsim::sim::Event;
    let toml = "[topology]\nkind = \"star\"\nhosts = 2\nlink = { rate = \"100Gbps\", delay = \"1us\" }\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"200KB\"\n";
    let sc = ccsim::Scenario::load(toml, std::path::Path::new("."), None, &[]).unwrap();
    let mut sim = sc.build().unwrap();
    while sim.flows[0].rcv_nxt < 50_000 {
        assert!(!sim.run_events(1).unwrap());
    }
    let sent_before = sim.flows[0].snd_nxt;
    let mut fake = Packet::new(PktKind::Data, 0, 1, 1048, 3);
    (fake.seq, fake.ts_ps, fake.payload_bytes) = (150_000, sim.now_ps, 1000);
    let pkt = sim.pkts.alloc(fake);
    let rx_port = sim.hosts[1].port;
    let link_seq = 0;
    let ev = Event::Arrive {
        port: rx_port,
        pkt,
        link_seq,
    };
    sim.q.push(sim.now_ps, ev);
    let mut went_back = false;
    while !sim.run_events(1).unwrap() {
        went_back |= sim.flows[0].snd_nxt < sent_before;
    }
    assert!(went_back, "the NACK must move the sender back");
    let r = sc.results(&mut sim);
    assert_eq!(r.summary["flows"]["finished"], 1);
    assert_eq!(r.summary["flows"]["payload_bytes_delivered"], 200_000u64);
    assert!(
        sim.flows[0].tx_bytes > 200 * 1048,
        "go-back-N retransmitted data"
    );
}

/// h1 and h2 send 2 MB each to h0 from t = 0 (no CC, so the switch's port to h0 holds about
/// 1 MB once PFC stops them); at 100 us h0 sends one packet to h3, whose ACK comes back
/// through that port. Returns the probe flow's FCT.
fn probe_fct_behind_incast(switch_ack_priority: u8) -> f64 {
    let toml = format!(
        r#"
[topology]
kind = "star"
hosts = 4
link = {{ rate = "100Gbps", delay = "1us" }}
[fabric]
ack_priority = {switch_ack_priority}
[[flows]]
src = 1
dst = 0
size = "2MB"
[[flows]]
src = 2
dst = 0
size = "2MB"
[[flows]]
src = 0
dst = 3
size = 1000
start = "100us"
"#
    );
    let (_, sim, r) = common::run(&toml);
    common::assert_buffers_empty(&sim);
    common::column(&r, "flows", "fct_ps")[2]
}

#[test]
fn acks_queued_with_data_at_switches_wait_behind_it() {
    // The NIC sends ACKs at priority 0 either way. In the control class at the switch the
    // probe's ACK overtakes the incast queue: FCT = 4 x 1 us + 2 x ser(1048) + 2 x ser(60),
    // plus at most the rest of the data packet being sent to h0 when it arrives.
    let high = probe_fct_behind_incast(0);
    let lone = 4e6 + 2.0 * 1048.0 * 80.0 + 2.0 * 60.0 * 80.0;
    assert!(
        (lone..=lone + 1048.0 * 80.0).contains(&high),
        "FCT {high} ps"
    );
    // In the data class it waits behind the queue: each sender's ingress queue reached XOFF
    // (512 KB) by ~82 us and holds at most XOFF + headroom (39.6 KB), so the ACK waits
    // 2 x 512 KB to 2 x 551.6 KB at 100 Gb/s: 81.9 to 88.3 us.
    let wait_us = (probe_fct_behind_incast(3) - high) / 1e6;
    assert!((81.0..=88.3).contains(&wait_us), "ACK waited {wait_us} us");
}

#[test]
fn reserved_bytes_per_ingress_queue_move_the_pause_point() {
    // Two senders at line rate into one port, static XOFF 512 KB: each ingress queue pauses
    // its sender at XOFF; with 100 KB reserved per queue, at XOFF + 100 KB. The bottleneck's
    // peak queue grows by the two reserves (give or take the packets in flight).
    let peak = |reserve: &str| {
        let toml = format!(
            "[topology]\nkind = \"star\"\nhosts = 3\nlink = {{ rate = \"100Gbps\", delay = \"1us\" }}\n[fabric.pfc]\nreserve = \"{reserve}\"\n[[flows]]\nsrc = 0\ndst = 2\nsize = \"2MB\"\n[[flows]]\nsrc = 1\ndst = 2\nsize = \"2MB\"\n"
        );
        let (_, sim, r) = common::run(&toml);
        common::assert_buffers_empty(&sim);
        assert_eq!(r.summary["flows"]["payload_bytes_delivered"], 4_000_000u64);
        let port = (0..sim.ports.len() as u32)
            .find(|&p| sim.link_name(p) == "sw0->h2")
            .unwrap();
        sim.ports[port as usize].max_queue_bytes as f64
    };
    let grown = peak("100KB") - peak("0B");
    assert!(
        (grown - 200_000.0).abs() <= 4.0 * 1048.0,
        "peak queue grew by {grown} B"
    );
}

#[test]
fn hpcc_sim_compat_sets_the_simulators_fabric() {
    // Its PFC alpha doubles per doubling of a port's rate (1/8 at the 100G host links, 1/2 at
    // 400G) and its headroom is 3 x rate x delay, without ccsim's 2 extra packets.
    let toml = r#"
compat = "hpcc-sim"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_link = { rate = "100Gbps", delay = "1us" }
fabric_link = { rate = "400Gbps", delay = "1us" }
[fabric.pfc]
mode = "dynamic"
[[flows]]
src = 0
dst = 3
size = 1000
"#;
    let (sc, sim, _) = common::run(toml);
    let resolved = sc.resolved_toml();
    for line in [
        "tx_time = \"floor_ns\"",
        "reserve = \"4096B\"",
        "headroom_mtus = 0",
        "alpha_per_rate = true",
        "base_rtt_bytes = \"payload\"",
    ] {
        assert!(
            resolved.contains(line),
            "resolved config lacks {line}:\n{resolved}"
        );
    }
    let mut seen = 0;
    for p in sim
        .ports
        .iter()
        .filter(|p| sim.switch_index[p.node as usize] != u32::MAX)
    {
        let (alpha, hdrm) = match p.rate_bps {
            100_000_000_000 => (0.125, 37_500),
            400_000_000_000 => (0.5, 150_000),
            r => panic!("unexpected rate {r}"),
        };
        assert_eq!((p.pfc_alpha, p.hdrm_reserve_bytes), (alpha, hdrm));
        seen += 1;
    }
    assert_eq!(seen, 12);
}
