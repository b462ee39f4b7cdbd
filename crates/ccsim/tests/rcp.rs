//! RCP: flows that share one link converge to its fair share C/N with a short queue, and a
//! lossy incast that overflows the buffer still delivers every byte exactly once.

mod common;

use common::{assert_buffers_account, column, run};

#[test]
fn flows_joining_one_link_converge_to_c_over_n() {
    // Four long flows into one 10G port, joining at 0, 0, 2 and 4 ms. From 6 ms each gets a
    // quarter of the link: 9.54 Gb/s of goodput (1000 B payloads in 1048 B frames) / 4.
    let toml = r#"
        duration = "12ms"
        [topology]
        kind = "star"
        hosts = 5
        link = { rate = "10Gbps", delay = "5us" }
        [cc]
        scheme = "rcp"
        [[flows]]
        src = 0
        dst = 4
        [[flows]]
        src = 1
        dst = 4
        [[flows]]
        src = 2
        dst = 4
        start = "2ms"
        [[flows]]
        src = 3
        dst = 4
        start = "4ms"
        [output]
        rates = { interval = "500us", flows = [0, 1, 2, 3] }
        queues = { interval = "10us", ports = ["sw0->h4"] }
    "#;
    let (_, _, r) = run(toml);
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

#[test]
fn a_lossy_incast_delivers_every_byte_once() {
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 17
        link = { rate = "100Gbps", delay = "1us" }
        [fabric]
        pfc = { enabled = false }
        loss = { mode = "drop_tail", queue_packets = 64 }
        [host]
        recovery = { mode = "irn" }
        [cc]
        scheme = "rcp"
        [[workload]]
        kind = "incast"
        senders = 16
        receiver = 16
        size = "1MB"
        at = "0us"
    "#;
    let (_, sim, r) = run(toml);
    assert_buffers_account(&sim).unwrap();
    let f = &r.summary["flows"];
    assert_eq!(f["unfinished"], 0, "{}", r.summary);
    assert_eq!(f["payload_bytes_delivered"], 16_000_000);
    assert!(
        r.summary["loss"]["drops"].as_u64().unwrap() > 0,
        "{}",
        r.summary["loss"]
    );
}
