//! DCQCN: 10 long flows into one 100G port converge to C/10 each with a bounded queue, for
//! both reaction-point models; and the control law itself (rate cut by alpha/2, alpha EWMA).
mod common;

#[test]
fn ten_flows_converge_to_fair_share_with_bounded_queue() {
    // The paper model (CNPs at most every 50 us, hyper increase) wanders +-15% over 10 ms
    // windows, so it is measured over a longer converged window; the algorithm is not tuned.
    for (scheme, duration_ms, from_ms) in [("dcqcn", 40, 15.0), ("dcqcn_paper", 100, 20.0)] {
        let (_, _, r) = common::run(&common::ten_to_one(scheme, duration_ms, None));
        // Goodput per flow over [from_ms, duration] from the rate probe (payload bytes acked).
        let t = common::column(&r, "rates", "time_ps");
        let f = common::column(&r, "rates", "flow");
        let tp = common::column(&r, "rates", "throughput_bps");
        let mut per = [0.0f64; 10];
        let mut n = [0usize; 10];
        for i in 0..t.len() {
            if t[i] > from_ms * 1e9 {
                per[f[i] as usize] += tp[i];
                n[f[i] as usize] += 1;
            }
        }
        let wire: Vec<f64> = (0..10)
            .map(|i| per[i] / n[i] as f64 * 1048.0 / 1000.0)
            .collect();
        let fair = 100e9 / 10.0;
        for (i, w) in wire.iter().enumerate() {
            assert!(
                (w - fair).abs() <= 0.15 * fair,
                "{scheme}: flow {i} at {:.2} Gb/s, fair share 10 Gb/s",
                w / 1e9
            );
        }
        assert!(
            common::jain(&wire) > 0.99,
            "{scheme}: Jain index {}",
            common::jain(&wire)
        );
        // The bottleneck is busy and its queue stays bounded once converged.
        let qt = common::column(&r, "queues", "time_ps");
        let qb = common::column(&r, "queues", "queue_bytes");
        let qu = common::column(&r, "queues", "utilization");
        let late: Vec<usize> = (0..qt.len()).filter(|&i| qt[i] > from_ms * 1e9).collect();
        let util = late.iter().map(|&i| qu[i]).sum::<f64>() / late.len() as f64;
        let qmax = late.iter().map(|&i| qb[i]).fold(0.0, f64::max);
        eprintln!(
            "{scheme}: per-flow {:?} Gb/s, utilization {util:.3}, max queue {qmax} B",
            wire.iter()
                .map(|w| (w / 1e7).round() / 100.0)
                .collect::<Vec<_>>()
        );
        assert!(util > 0.9, "{scheme}: bottleneck utilization {util}");
        assert!(
            qmax < 1_600_000.0,
            "{scheme}: queue {qmax} B is not bounded below Kmax"
        );
    }
}

#[test]
fn rate_cut_follows_the_control_law() {
    // One flow into a port whose ECN thresholds are tiny: the first CNP arrives with alpha = 1
    // (mlx model: first decrease at +4us+1ns), so the first cut halves the rate:
    // R = R_line x (1 - alpha/2) = 50 Gb/s, and the rate probe sees it.
    let toml = r#"duration = "30us"
[topology]
kind = "dumbbell"
left_hosts = 1
right_hosts = 1
host_link = { rate = "100Gbps", delay = "1us" }
bottleneck = { rate = "50Gbps", delay = "1us" }
[cc]
scheme = "dcqcn"
[fabric.ecn]
kmin = "1KB"
kmax = "2KB"
pmax = 1.0
[[flows]]
src = 0
dst = 1
[output]
rates = { interval = "1us" }
"#;
    let (_, _, r) = common::run(toml);
    let rates = common::column(&r, "rates", "rate_bps");
    let first_cut = rates
        .iter()
        .copied()
        .find(|&x| x < 100e9)
        .expect("a rate cut");
    assert_eq!(first_cut, 50e9, "first cut with alpha = 1 halves the rate");
    // Later cuts use alpha updated by alpha <- (1-g) alpha + g every 1us while marked, so
    // the rate keeps falling but never below min_rate (1 Gb/s).
    assert!(rates.iter().all(|&x| x >= 1e9));
    assert!(*rates.last().unwrap() < 50e9);
}
