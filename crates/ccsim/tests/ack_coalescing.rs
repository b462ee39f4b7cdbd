//! ACK coalescing (`host.ack_every_packets` > 1) never holds back the ACK a sender's window
//! waits for: the packet that closes the window asks for an ACK at once (RoCE's AckReq).
mod common;

#[test]
fn hpcc_with_4kb_mtu_and_an_ack_every_2_packets_finishes_its_incast() {
    // HPCC's window here is under one 4 KB packet, so each flow has one packet in flight; an
    // ACK every 2 packets used to wait forever for the second (issue: 4 of 6 flows stuck).
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 7
        link = { rate = "25Gbps", delay = "1us" }
        [host]
        mtu_payload_bytes = 4000
        ack_every_packets = 2
        [cc]
        scheme = "hpcc"
        [[workload]]
        kind = "incast"
        senders = 6
        receiver = 6
        size = "500KB"
        at = "0us"
    "#;
    let (_, sim, r) = common::run(toml);
    assert!(sim.flows.iter().all(|f| f.finished && f.snd_una == 500_000));
    assert_eq!(r.summary["flows"]["payload_bytes_delivered"], 3_000_000);
    // 3 MB through one 25 Gb/s link takes 960 us at least.
    let last_ps = sim.flows.iter().map(|f| f.finish_ps).max().unwrap();
    assert!(last_ps > 960_000_000, "{last_ps} ps");
}

#[test]
fn a_window_smaller_than_the_ack_batch_still_draws_acks() {
    // 10 KB window, ACK every 1000 packets: each window of 10 packets ends with a request, so
    // the flow moves one window per round trip.
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 2
        link = { rate = "100Gbps", delay = "1us" }
        [host]
        ack_every_packets = 1000
        window = "10KB"
        [[flows]]
        src = 0
        dst = 1
        size = "100KB"
    "#;
    let (_, sim, _) = common::run(toml);
    let f = &sim.flows[0];
    assert!(f.finished && f.snd_una == 100_000);
    // Ten windows, each at least a base RTT (4 us of propagation): window-bound, not stalled.
    let fct_ps = f.finish_ps - f.start_ps;
    assert!((40_000_000..100_000_000).contains(&fct_ps), "{fct_ps} ps");
}
