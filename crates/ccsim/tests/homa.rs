//! Homa: a receiver grants the shortest message first, and its overcommitment bounds how many it
//! grants at once (its lossy incast is in lossy.rs).

mod common;

use common::run;

/// Four messages of 400, 100, 300 and 200 KB from four senders into one 10G receiver.
fn incast(overcommit: u32) -> String {
    format!(
        r#"
        [topology]
        kind = "star"
        hosts = 5
        link = {{ rate = "10Gbps", delay = "2us" }}
        [fabric]
        scheduler = "strict"
        pfc = {{ enabled = false }}
        loss = {{ mode = "drop_tail", queue_packets = 128 }}
        [cc]
        scheme = "homa"
        params = {{ overcommit = {overcommit} }}
        [[flows]]
        src = 0
        dst = 4
        size = "400KB"
        [[flows]]
        src = 1
        dst = 4
        size = "100KB"
        [[flows]]
        src = 2
        dst = 4
        size = "300KB"
        [[flows]]
        src = 3
        dst = 4
        size = "200KB"
        "#
    )
}

#[test]
fn an_incast_of_messages_finishes_shortest_first() {
    let (_, sim, r) = run(&incast(7));
    assert_eq!(r.summary["flows"]["unfinished"], 0);
    let finish: Vec<u64> = sim.flows.iter().map(|f| f.finish_ps).collect();
    // Sizes 400, 100, 300, 200 KB: order of finish 1, 3, 2, 0.
    assert!(finish[1] < finish[3] && finish[3] < finish[2] && finish[2] < finish[0]);
    // The receiver's link is the bottleneck and SRPT keeps it busy: the last message ends
    // within 10% of 1 MB of payload (1048 B frames) at 10 Gb/s plus a base RTT.
    let ideal = 1_000_000 * 1048 / 1000 * 8 * 100 + sim.flows[0].base_rtt_ps;
    assert!(
        (finish[0] as f64) < 1.1 * ideal as f64,
        "last finish {} ps, ideal {ideal} ps",
        finish[0]
    );
}

#[test]
fn overcommitment_bounds_the_messages_granted_at_once() {
    // Granting one message at a time, each message's scheduled bytes wait for the shorter
    // ones: the second shortest (200 KB) cannot end before the shortest has, plus the time of
    // its own scheduled bytes at the line rate.
    let (_, sim, _) = run(&incast(1));
    let f = &sim.flows;
    let unscheduled = f[1].bdp_bytes();
    let scheduled_200kb_ps = (200_000 - unscheduled) * 8 * 100;
    assert!(
        f[3].finish_ps >= f[1].finish_ps + scheduled_200kb_ps,
        "200 KB ended at {} ps, 100 KB at {} ps",
        f[3].finish_ps,
        f[1].finish_ps
    );
}
