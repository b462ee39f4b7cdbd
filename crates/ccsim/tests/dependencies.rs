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
    for size in [256_000u64, 1_000_000, 8_000_000] {
        let toml =
            format!("{STAR}[[workload]]\nkind = \"allreduce\"\nsize = {size}\nhosts = \"0..7\"\n");
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
            "{size} B: {measured:.4e} s, ideal {ideal:.4e} s ({:+.2}%)",
            100.0 * gap
        );
        assert!(
            gap.abs() < 0.05,
            "{size} B: {measured:.3e} s against the ideal {ideal:.3e} s ({:+.1}%)",
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
fn waiting_flows_run_on_one_thread_and_say_why_when_more_are_asked() {
    let toml = format!("threads = 2\n{STAR}[[workload]]\nkind = \"allreduce\"\nsize = \"64KB\"\n");
    let sc = Scenario::load(&toml, std::path::Path::new("."), None, &[]).unwrap();
    let e = sc.start().err().expect("refused").to_string();
    assert!(e.contains("after") && e.contains("threads = 1"), "{e}");
}
