//! RCC (seed 003) against the paper's claims that physics allows checking:
//! - EWA (section V-B-1): with 1 to 4 flows at one receiver, every flow gets C/N of the last
//!   hop (x payload / wire bytes) within a few RTTs of a join, Jain > 0.99, no queue; the
//!   sender-side and clock-jitter variants too;
//! - congestion types (Fig. 15): on the multi-bottleneck topology the flows sharing an
//!   in-network link go to PID, and the in-network queue settles near the PID's target delay;
//! - incast (Fig. 7): the last hop stays busy, aggregate goodput at its ceiling; the receiver
//!   that asks N senders at once assigns each C x RTT / N, so the first round puts one packet
//!   per sender in flight, not one BDP each.
mod common;

use ccsim::cc::ReceiverStates;

const C_BPS: f64 = 100e9;
/// Payload over wire bytes of a full packet: 1000 B + 48 B headers + RCC's 8 B.
const PAYLOAD_SHARE: f64 = 1000.0 / 1056.0;

/// (time_us, flow, goodput_bps) rows of the rates table.
fn rates(r: &ccsim::Results) -> Vec<(f64, usize, f64)> {
    let t = common::column(r, "rates", "time_ps");
    let f = common::column(r, "rates", "flow");
    let g = common::column(r, "rates", "throughput_bps");
    (0..t.len())
        .map(|i| (t[i] / 1e6, f[i] as usize, g[i]))
        .collect()
}

/// Mean goodput of each flow over samples in [from_us, to_us).
fn mean_goodputs(rows: &[(f64, usize, f64)], flows: usize, from_us: f64, to_us: f64) -> Vec<f64> {
    (0..flows)
        .map(|fl| {
            let xs: Vec<f64> = rows
                .iter()
                .filter(|r| r.1 == fl && r.0 >= from_us && r.0 < to_us)
                .map(|r| r.2)
                .collect();
            xs.iter().sum::<f64>() / xs.len() as f64
        })
        .collect()
}

#[test]
fn ewa_gives_each_of_n_flows_c_over_n() {
    for scheme in ["rcc", "rcc_sender", "rcc_async"] {
        // Four senders to one receiver over a 100G dumbbell (base RTT ~6.5 us); a flow joins
        // every 500 us.
        let toml = format!(
            r#"duration = "2ms"
[topology]
kind = "dumbbell"
left_hosts = 4
right_hosts = 1
host_link = {{ rate = "100Gbps", delay = "1us" }}
bottleneck = {{ rate = "100Gbps", delay = "1us" }}
[cc]
scheme = "{scheme}"
{}
[output]
queues = {{ interval = "1us", ports = ["swR->h4"] }}
rates = {{ interval = "10us" }}
"#,
            (0..4)
                .map(|i| format!(
                    "[[workload]]\nkind = \"long_lived\"\npairs = [[{i}, 4]]\nstart = \"{}us\"\n",
                    i * 500
                ))
                .collect::<String>()
        );
        let (_, _, r) = common::run(&toml);
        let rows = rates(&r);
        for n in 1..=4usize {
            // From 3 base RTTs after the join to the next join.
            let from = (n - 1) as f64 * 500.0 + 20.0;
            let g = mean_goodputs(&rows, n, from, n as f64 * 500.0);
            let share = C_BPS * PAYLOAD_SHARE / n as f64;
            for (f, x) in g.iter().enumerate() {
                assert!(
                    (x - share).abs() < 0.03 * share,
                    "{scheme}, N = {n}: flow {f} gets {:.2} Gb/s, C/N is {:.2}",
                    x / 1e9,
                    share / 1e9
                );
            }
            assert!(common::jain(&g) > 0.99, "{scheme}, N = {n}: {g:?}");
        }
        let q = common::column(&r, "queues", "queue_bytes");
        let mean_q = q.iter().sum::<f64>() / q.len() as f64;
        assert!(mean_q < 5_000.0, "{scheme}: mean last-hop queue {mean_q} B");
    }
}

#[test]
fn simultaneous_flows_into_one_port_are_last_hop_congestion_and_share_it() {
    // N long flows start together at line rate into one 100G port (ACC's 10-to-1 setting):
    // the start burst's high delays are one round, not n, so no flow is sent to PID, and each
    // gets C/N of the last hop (x payload / wire) within 3%.
    for n in [10usize, 4, 2] {
        let toml = format!(
            r#"duration = "3ms"
[topology]
kind = "star"
hosts = {}
link = {{ rate = "100Gbps", delay = "2us" }}
[cc]
scheme = "rcc"
[[workload]]
kind = "long_lived"
pairs = [{}]
[output]
rates = {{ interval = "100us" }}
"#,
            n + 1,
            (0..n)
                .map(|i| format!("[{i}, {n}]"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let (_, sim, r) = common::run(&toml);
        let ReceiverStates::Rcc(receivers) = &sim.receivers else {
            unreachable!("an RCC run")
        };
        assert!(
            receivers.iter().all(|r| !r.control().in_pid()),
            "N = {n}: a last-hop incast went to PID"
        );
        let g = mean_goodputs(&rates(&r), n, 1000.0, 3000.0);
        let share = C_BPS * PAYLOAD_SHARE / n as f64;
        for (f, x) in g.iter().enumerate() {
            assert!(
                (x - share).abs() < 0.03 * share,
                "N = {n}: flow {f} gets {:.2} Gb/s, C/N is {:.2}",
                x / 1e9,
                share / 1e9
            );
        }
    }
}

/// The multi-bottleneck scenario (RCC Figs. 1 and 15) run with `overrides`.
fn multi_bottleneck(overrides: &[&str]) -> (ccsim::Simulation, ccsim::Results) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/rcc");
    let text = std::fs::read_to_string(dir.join("multi-bottleneck.toml")).unwrap();
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let sc = ccsim::Scenario::load(&text, &dir, None, &ov).unwrap();
    let mut sim = sc.build().unwrap();
    sim.run().unwrap();
    let r = sc.results(&mut sim);
    (sim, r)
}

/// Mean and largest queue sample of the in-network link sw1 -> sw2 in [from_ps, to_ps).
fn in_network_queue(r: &ccsim::Results, from_ps: f64, to_ps: f64) -> (f64, f64) {
    let t = common::column(r, "queues", "time_ps");
    let link = common::strings(r, "queues", "link");
    let q = common::column(r, "queues", "queue_bytes");
    let settled: Vec<f64> = (0..t.len())
        .filter(|&i| link[i] == "sw1->sw2" && (from_ps..to_ps).contains(&t[i]))
        .map(|i| q[i])
        .collect();
    let mean = settled.iter().sum::<f64>() / settled.len() as f64;
    (mean, settled.iter().cloned().fold(0.0, f64::max))
}

#[test]
fn congestion_types_match_the_multi_bottleneck_construction() {
    let (sim, r) = multi_bottleneck(&[]);
    let ReceiverStates::Rcc(receivers) = &sim.receivers else {
        unreachable!("an RCC run")
    };
    let pid: Vec<bool> = receivers.iter().map(|r| r.control().in_pid()).collect();
    // The paper's definition: flows 0 and 1 share sw1 -> sw2, in-network congestion, PID;
    // flow 2 meets flow 0 only at r1's last hop, last-hop congestion, EWA.
    assert_eq!(pid, [true, true, false]);

    // The in-network queue settles near the PID's target: 0.1 x the base one-way delay of
    // flows 0 and 1 (4 links of 1 us + 1056 B at 100G each) at 100G, about 5.4 KB.
    let target_b = 0.1 * 4.0 * (1e-6 + 1056.0 * 8.0 / C_BPS) * C_BPS / 8.0;
    let (mean, max) = in_network_queue(&r, 2.5e9, 3e9);
    assert!(
        (mean - target_b).abs() < 0.3 * target_b,
        "mean in-network queue {mean:.0} B, target {target_b:.0} B"
    );
    assert!(max < 2.5 * target_b, "the queue swings to {max:.0} B");
}

#[test]
fn a_configured_base_delay_moves_the_pid_target() {
    // Section V-A's reading: RTT_base = 12 us for every flow, so the PID aims at a one-way
    // delay of 13.2 us. Flows 0 and 1 of the multi-bottleneck topology have an idle one-way
    // delay of 4 x (1 us + 1056 B at 100G) = 4.34 us: their shared queue at sw1 -> sw2 settles
    // near (13.2 - 4.34) us at 100G, about 111 KB (20x the per-flow reading's 5.4 KB).
    let (_, r) = multi_bottleneck(&["cc.params.base_delay=\"12us\""]);
    let owd_s = 4.0 * (1e-6 + 1056.0 * 8.0 / C_BPS);
    let target_b = (13.2e-6 - owd_s) * C_BPS / 8.0;
    let (mean, _) = in_network_queue(&r, 1.5e9, 2e9);
    assert!(
        (mean - target_b).abs() < 0.3 * target_b,
        "mean in-network queue {mean:.0} B, target {target_b:.0} B"
    );
}

#[test]
fn an_incast_keeps_the_last_hop_at_its_ceiling() {
    // 100 senders of 200 KB each to one receiver on one switch: 20 MB in all.
    let (_, _, r) = common::run(
        r#"
[topology]
kind = "star"
hosts = 101
link = { rate = "100Gbps", delay = "1us" }
[fabric]
pfc = { mode = "dynamic" }
[cc]
scheme = "rcc"
[[workload]]
kind = "incast"
senders = 100
receiver = 100
size = "200KB"
at = "10us"
"#,
    );
    let fin = common::column(&r, "flows", "finish_ps");
    assert_eq!(fin.len(), 100);
    let span_s = (fin.iter().cloned().fold(0.0, f64::max) - 10e6) / 1e12;
    let goodput = 100.0 * 200e3 * 8.0 / span_s;
    // The ceiling is C x payload / wire = 94.7 Gb/s; the paper reports 94.98 Gb/s.
    assert!(
        goodput > 0.98 * C_BPS * PAYLOAD_SHARE,
        "aggregate goodput {:.2} Gb/s",
        goodput / 1e9
    );
}

#[test]
fn a_requested_incast_starts_with_one_packet_per_sender_not_one_bdp() {
    // 400 senders asked at once beside a long flow: the request's window C x RTT / 400 is
    // 13 B (RTT 4.17 us), under one packet, so each sender sends one packet and then paces at
    // W / RTT; the switch holds at most the 400 first packets and the long flow's BDP (52 KB).
    // With every sender starting at its line-rate BDP the first round is 400 BDPs (21 MB).
    let toml = |first: &str| {
        format!(
            r#"duration = "1ms"
[topology]
kind = "star"
hosts = 402
link = {{ rate = "100Gbps", delay = "1us" }}
[fabric]
buffer = "64MB"
pfc = {{ mode = "dynamic" }}
[cc]
scheme = "rcc"
params = {{ first_window = "{first}" }}
[[workload]]
kind = "long_lived"
pairs = [[400, 401]]
[[workload]]
kind = "incast"
senders = 400
receiver = 401
hosts = "0..399"
size = "200KB"
at = "100us"
"#
        )
    };
    let (_, _, r) = common::run(&toml("request"));
    let peak = r.summary["switch_max_buffer_bytes"].as_f64().unwrap();
    let bound = 400.0 * 1056.0 + 52_200.0 + 2.0 * 1056.0;
    assert!(peak <= bound, "peak {peak} B, bound {bound} B");
    assert_eq!(r.summary["pfc"]["pauses_sent"], 0, "{}", r.summary["pfc"]);
    let (_, _, r) = common::run(&toml("line_rate"));
    let peak_lr = r.summary["switch_max_buffer_bytes"].as_f64().unwrap();
    assert!(peak_lr > 10.0 * bound, "line-rate start: peak {peak_lr} B");
}
