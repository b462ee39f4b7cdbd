//! Flows that wait for others (`after`), and the ring all-reduce built on them: a lone
//! all-reduce against its analytic time, delays, and DAGs that cannot run.
mod common;

use ccsim::Scenario;

const STAR: &str = r#"
[topology]
kind = "star"
hosts = 8
link = { rate = "100Gbps", delay = "1us" }
[cc]
scheme = "dcqcn"
"#;

const C_BPS: f64 = 100e9;
const D_S: f64 = 1e-6;

/// Seconds `bytes` of payload take on a 100G link, with a 48 B header per 1000 B packet.
fn wire_s(bytes: u64) -> f64 {
    (bytes + bytes.div_ceil(1000) * 48) as f64 * 8.0 / C_BPS
}

#[test]
fn a_lone_ring_allreduce_finishes_within_5_percent_of_its_analytic_time() {
    // RCC too: a flow that waits starts alone (its first window the line rate's BDP), not in
    // a cohort of every flow to its receiver configured to start at 0 (1193 us for 1 MB on two
    // hosts, 12x the analytic time, before that was so).
    let cases = [
        ("dcqcn", 256_000u64),
        ("dcqcn", 1_000_000),
        ("dcqcn", 8_000_000),
        ("rcc", 1_000_000),
    ];
    for (scheme, size) in cases {
        let toml =
            format!("{STAR}[[workload]]\nkind = \"allreduce\"\nsize = {size}\nhosts = \"0..7\"\n")
                .replace("\"dcqcn\"", &format!("\"{scheme}\""));
        let (_, _, r) = common::run(&toml);
        let (n, steps) = (8u64, 14.0);
        let finish = common::column(&r, "flows", "finish_ps");
        assert_eq!(finish.len() as f64, steps * n as f64);
        assert!(finish.iter().all(|&f| f > 0.0), "every chunk arrives");
        let measured = finish.iter().cloned().fold(0.0, f64::max) * 1e-12;
        // Each step: a chunk of size/N serialized at the sender, beside the 60 B ACK per packet
        // it sends for the chunk it receives on the same link; the last packet once more at
        // the switch, two links' delay; then the last chunk's ACK comes back (two links).
        let chunk = size.div_ceil(n);
        let last_pkt = chunk - (chunk - 1) / 1000 * 1000;
        let acks = chunk.div_ceil(1000) as f64 * 60.0 * 8.0 / C_BPS;
        let step = wire_s(chunk) + acks + wire_s(last_pkt) + 2.0 * D_S;
        let ideal = steps * step + 2.0 * (60.0 * 8.0 / C_BPS) + 2.0 * D_S;
        let gap = measured / ideal - 1.0;
        eprintln!(
            "{scheme}, {size} B: {measured:.4e} s, ideal {ideal:.4e} s ({:+.2}%)",
            100.0 * gap
        );
        assert!(
            gap.abs() < 0.05,
            "{scheme}, {size} B: {measured:.3e} s against the ideal {ideal:.3e} s ({:+.1}%)",
            100.0 * gap
        );
        // Every step sends every chunk, and each waits for the one before it.
        let start = common::column(&r, "flows", "start_ps");
        for k in 1..steps as usize {
            let before = (k - 1) * n as usize;
            assert!(start[k * n as usize] >= start[before], "step {k}");
        }
    }
}

#[test]
fn a_flow_starts_its_delay_after_the_last_flow_it_waits_for_arrives() {
    let toml = format!(
        r#"{STAR}
[[flows]]
src = 0
dst = 1
size = "100KB"
[[flows]]
src = 2
dst = 1
size = "50KB"
[[flows]]
src = 1
dst = 3
size = "10KB"
after = [0, 1]
delay = "7us"
start = "1us"
"#
    );
    let (_, sim, _) = common::run(&toml);
    let f = &sim.flows;
    assert!(f.iter().all(|f| f.finished));
    // Both share the link into host 1; flow 0, twice flow 1's size, arrives last. Its last
    // byte arrived one ACK trip (two 1 us links and 60 B at 100G, 2.01 us) before its FCT
    // ended: flow 2 starts 7 us after that, and its FCT counts from then.
    assert!(f[0].finish_ps > f[1].finish_ps);
    let arrived = f[0].finish_ps - 2_009_600;
    assert!(
        f[2].start_ps.abs_diff(arrived + 7_000_000) < 100_000,
        "flow 2 starts at {} ps, flow 0 arrived at about {arrived} ps",
        f[2].start_ps
    );
}

#[test]
fn dags_that_cannot_run_are_refused_naming_the_flow() {
    let flows = |after: [&str; 3]| {
        let mut t = String::from(STAR);
        for (i, a) in after.iter().enumerate() {
            t += &format!(
                "[[flows]]\nsrc = {i}\ndst = {}\nsize = \"10KB\"\n{a}\n",
                i + 1
            );
        }
        t
    };
    let error = |toml: String| {
        Scenario::load(&toml, std::path::Path::new("."), None, &[])
            .and_then(|s| s.build().map(|_| ()))
            .expect_err("refused")
            .to_string()
    };
    let cycle = error(flows(["after = [2]", "after = [0]", "after = [1]"]));
    assert!(
        cycle.contains("cycle") && cycle.contains("flow "),
        "{cycle}"
    );
    let unknown = error(flows(["", "after = [5]", ""]));
    assert!(
        unknown.contains("flows[1].after") && unknown.contains("flow 5"),
        "{unknown}"
    );
    let itself = error(flows(["", "", "after = [2]"]));
    assert!(
        itself.contains("flows[2].after") && itself.contains("itself"),
        "{itself}"
    );
    let delay = error(flows(["", "delay = \"1us\"", ""]));
    assert!(delay.contains("flows[1].delay"), "{delay}");
    let ring = format!("{STAR}[[workload]]\nkind = \"allreduce\"\nsize = 100\nhosts = [3]\n");
    assert!(error(ring).contains("workload[0].hosts"));
}

#[test]
fn a_flow_waiting_for_one_that_arrives_elsewhere_runs_on_one_thread() {
    // Flow 1 sends from host 3 but waits for flow 0, which arrives at host 1.
    let toml = format!(
        "threads = 2\n{STAR}[[flows]]\nsrc = 0\ndst = 1\nsize = \"10KB\"\n[[flows]]\nsrc = 3\ndst = 4\nsize = \"10KB\"\nafter = [0]\n"
    );
    let sc = Scenario::load(&toml, std::path::Path::new("."), None, &[]).unwrap();
    let e = sc.start().err().expect("refused").to_string();
    assert!(
        e.contains("flow 1 waits for flow 0") && e.contains("threads = 1"),
        "{e}"
    );
}

/// The `collectives` table's rows: (completion_ps, ideal_ps, slowdown).
fn collectives(r: &ccsim::metrics::Results) -> Vec<(f64, f64, f64)> {
    let c = |col| common::column(r, "collectives", col);
    let (t, i, s) = (c("completion_ps"), c("ideal_ps"), c("slowdown"));
    (0..t.len()).map(|k| (t[k], i[k], s[k])).collect()
}

#[test]
fn the_collectives_table_measures_each_iteration_against_its_bandwidth_term() {
    // Ring all-reduce of 8 MB on 8 hosts, twice, 20 us of compute between: each iteration's
    // bandwidth term is 2(N-1)/N x 8 MB at 100G = 1120 us; the second starts 20 us after a
    // host's last chunk of the first arrived.
    let toml = format!(
        "{STAR}[[workload]]\nkind = \"allreduce\"\nsize = \"8MB\"\niterations = 2\ngap = \"20us\"\n"
    );
    let (_, sim, r) = common::run(&toml);
    let rows = collectives(&r);
    assert_eq!(rows.len(), 2);
    for &(t, ideal, slowdown) in &rows {
        assert_eq!(ideal, 1_120_000_000.0);
        assert!((slowdown - t / ideal).abs() < 1e-9);
        // Headers (4.8%) and ACKs (5.7% of the packets) ride the same links; latency is small.
        assert!((1.05..1.15).contains(&slowdown), "slowdown {slowdown}");
    }
    let start = common::column(&r, "collectives", "start_ps");
    let first_end = sim.flows.all()[..112]
        .iter()
        .map(|f| f.finish_ps)
        .max()
        .unwrap() as f64;
    assert!(
        start[1] > first_end + 20e6 - 2.1e6,
        "the gap: {} vs {first_end}",
        start[1]
    );
    assert_eq!(r.summary["collectives"]["0"]["completed"], 2);
    assert_eq!(r.summary["collectives"]["0"]["kind"], "allreduce_ring");
}

#[test]
fn halving_doubling_moves_the_ring_s_bytes_in_fewer_steps() {
    // 8 hosts: 3 halving steps (4, 2, 1 MB of 8 MB, partners 4, 2, 1 apart) and 3 doubling
    // steps (1, 2, 4 MB, partners 1, 2, 4 apart): 2(N-1)/N x size per host, as the ring, in 6
    // steps instead of 14.
    let toml = format!(
        "{STAR}[[workload]]\nkind = \"allreduce\"\nalgorithm = \"halving_doubling\"\nsize = \"8MB\"\n"
    );
    let (_, sim, r) = common::run(&toml);
    assert_eq!(sim.flows.len(), 6 * 8);
    let sizes: Vec<u64> = sim.flows.iter().step_by(8).map(|f| f.size_bytes).collect();
    assert_eq!(
        sizes,
        [4_000_000, 2_000_000, 1_000_000, 1_000_000, 2_000_000, 4_000_000]
    );
    assert_eq!((sim.flows[0].src, sim.flows[0].dst), (0, 4));
    assert_eq!((sim.flows[24].src, sim.flows[24].dst), (0, 1));
    assert_eq!((sim.flows[40].src, sim.flows[40].dst), (0, 4));
    let (t, ideal, _) = collectives(&r)[0];
    assert_eq!(ideal, 1_120_000_000.0);
    // Each step a chunk plus its headers and the ACKs of the chunk coming in, as the ring.
    let analytic: f64 = sizes
        .iter()
        .map(|&b| wire_s(b) + b.div_ceil(1000) as f64 * 60.0 * 8.0 / C_BPS + 2.0 * D_S)
        .sum();
    let gap = t * 1e-12 / analytic - 1.0;
    assert!(
        gap.abs() < 0.05,
        "{t} ps against {analytic} s ({:+.1}%)",
        100.0 * gap
    );
    let e = Scenario::load(
        &toml.replace("8MB\"\n", "8MB\"\nhosts = \"0..5\"\n"),
        std::path::Path::new("."),
        None,
        &[],
    )
    .and_then(|s| s.build().map(|_| ()))
    .expect_err("6 hosts")
    .to_string();
    assert!(
        e.contains("power of 2") && e.contains("workload[0].hosts"),
        "{e}"
    );
}

#[test]
fn an_all_to_all_delivers_every_pair_and_a_skewed_one_loads_its_hot_hosts() {
    let run = |skew: f64| {
        common::run(&format!(
            "{STAR}[[workload]]\nkind = \"alltoall\"\nsize = \"100KB\"\nskew = {skew}\n"
        ))
    };
    // Two iterations: each of a host's 7 sends of the second waits for all 7 flows into it.
    let (_, sim, _) = common::run(&format!(
        "{STAR}[[workload]]\nkind = \"alltoall\"\nsize = \"100KB\"\niterations = 2\n"
    ));
    for f in &sim.flows.all()[56..] {
        let last_in = (sim.flows.all()[..56].iter())
            .filter(|g| g.dst == f.src)
            .map(|g| g.finish_ps)
            .max()
            .unwrap();
        // It started once its last input arrived, a little before that input's last ACK.
        assert!(
            f.start_ps + 2_100_000 > last_in && f.start_ps < last_in,
            "{f:?}"
        );
    }
    let (_, sim, r) = run(0.0);
    assert_eq!(sim.flows.len(), 56);
    common::assert_conserved("alltoall", &r, 56 * 100_000);
    // Uniform: each host sends and receives 7 x 100 KB, 56 us at 100G.
    assert_eq!(collectives(&r)[0].1, 56e6);
    let (_, sim, r) = run(1.0);
    let total: u64 = sim.flows.iter().map(|f| f.size_bytes).sum();
    assert!(total.abs_diff(56 * 100_000) < 56, "total {total}");
    let mut into = [0u64; 8];
    sim.flows
        .iter()
        .for_each(|f| into[f.dst as usize] += f.size_bytes);
    // Zipf 1 over 8 ranks: the hottest host gets 1/H_8 = 37% of the bytes, 2.94x the mean.
    let hot = *into.iter().max().unwrap() as f64;
    assert!((hot / (total as f64 / 8.0) - 2.94).abs() < 0.05, "{into:?}");
    assert_eq!(collectives(&r)[0].1, hot * 8.0 / C_BPS * 1e12);
    assert!(collectives(&r)[0].2 >= 1.0);
}

#[test]
fn a_dag_file_runs_as_the_same_flows_written_out_and_names_its_bad_lines() {
    let dir = std::env::temp_dir().join(format!("ccsim-dag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dag = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).unwrap();
        format!(
            "{STAR}[[workload]]\nkind = \"dag\"\npath = \"{}\"\n",
            dir.join(name).display()
        )
    };
    // Two chunks into host 1, then host 1 sends on 7 us after the later one arrived.
    let good = dag(
        "good.txt",
        "# id src dst size after delay\nb 2 1 50KB - -\na 0 1 100KB - -\nc 1 3 10KB a,b 7us\n",
    );
    let flows = format!(
        "{STAR}[[flows]]\nsrc = 2\ndst = 1\nsize = \"50KB\"\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"100KB\"\n[[flows]]\nsrc = 1\ndst = 3\nsize = \"10KB\"\nafter = [1, 0]\ndelay = \"7us\"\n"
    );
    let (a, b) = (common::run(&good).2, common::run(&flows).2);
    assert_eq!(
        common::column(&a, "flows", "start_ps"),
        common::column(&b, "flows", "start_ps")
    );
    assert_eq!(
        common::column(&a, "flows", "finish_ps"),
        common::column(&b, "flows", "finish_ps")
    );
    let error = |toml: String| {
        Scenario::load(&toml, std::path::Path::new("."), None, &[])
            .and_then(|s| s.build().map(|_| ()))
            .expect_err("refused")
            .to_string()
    };
    for (text, want) in [
        ("a 0 1 1KB - -\nb 1 2 1KB a,x -\n", "line 2"),
        ("a 0 1 1KB - -\nb 1 2 1KB b -\n", "waits for itself"),
        ("a 0 1 1KB c -\nb 1 2 1KB a -\nc 2 3 1KB b -\n", "cycle"),
        (
            "a 0 1 1KB - -\na 1 2 1KB - -\n",
            "already the flow of line 1",
        ),
        ("a 0 9 1KB - -\n", "host `9`"),
        ("a 0 1 1KB -\n", "5 fields"),
        ("a 0 1 1KB - 5us\n", "delay"),
    ] {
        let msg = error(dag("bad.txt", text));
        assert!(msg.contains("bad.txt: line") && msg.contains(want), "{msg}");
    }
}
