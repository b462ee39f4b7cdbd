//! RCP: flows that share one link converge to its fair share C/N with a short queue (its lossy
//! incast is in lossy.rs).

mod common;

use common::{column, run};

#[test]
fn flows_joining_one_link_converge_to_c_over_n() {
    // Four long flows into one 10G port, joining at 0, 0, 2 and 4 ms. From 6 ms each gets a
    // quarter of the link: 9.54 Gb/s of goodput (1000 B payloads in 1048 B frames) / 4.
    let (_, _, r) = run(&common::four_flows_joining("rcp", "12ms"));
    let (t, flow, gbps) = (
        column(&r, "rates", "time_ps"),
        column(&r, "rates", "flow"),
        column(&r, "rates", "throughput_bps"),
    );
    for f in 0..4 {
        let late: Vec<f64> = (0..t.len())
            .filter(|&i| t[i] >= 6e9 && flow[i] == f as f64)
            .map(|i| gbps[i] / 1e9)
            .collect();
        let mean = late.iter().sum::<f64>() / late.len() as f64;
        assert!(
            (mean / (9.54 / 4.0) - 1.0).abs() < 0.05,
            "flow {f}: {mean} Gb/s, fair share {}",
            9.54 / 4.0
        );
    }
    let (qt, qb) = (
        column(&r, "queues", "time_ps"),
        column(&r, "queues", "queue_bytes"),
    );
    let late_q: Vec<f64> = (0..qt.len())
        .filter(|&i| qt[i] >= 6e9)
        .map(|i| qb[i])
        .collect();
    let mean_q = late_q.iter().sum::<f64>() / late_q.len() as f64;
    assert!(mean_q < 10_000.0, "standing queue {mean_q} B");
}
