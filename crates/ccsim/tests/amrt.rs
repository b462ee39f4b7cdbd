//! AMRT on a lossy fabric: a lone flow's ideal FCT, conservation on an incast that drops, the
//! grant law (one packet per grant, two per grant with room) and anti-ECN filling a gap.

mod common;

use ccsim::cc::{ReceiverStates, SenderStates};
use common::{assert_buffers_empty, run};

/// Every flow finished and every payload byte was delivered exactly once.
fn assert_conserved(r: &ccsim::Results, bytes: u64) {
    let f = &r.summary["flows"];
    assert_eq!(f["unfinished"], 0, "{}", r.summary);
    assert_eq!(f["payload_bytes_delivered"], bytes);
    assert_eq!(f["payload_bytes_acked"], bytes);
}

fn lossy(topology: &str, flows: &str) -> String {
    format!(
        r#"
        {topology}
        [fabric]
        pfc = {{ enabled = false }}
        loss = {{ mode = "drop_tail", queue_packets = 128 }}
        [cc]
        scheme = "amrt"
        {flows}
        "#
    )
}

#[test]
fn a_lone_flow_meets_its_ideal_fct_within_one_rtt() {
    let toml = lossy(
        r#"[topology]
        kind = "star"
        hosts = 2
        link = { rate = "10Gbps", delay = "10us" }"#,
        "[[flows]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n",
    );
    let (_, sim, r) = run(&toml);
    assert_conserved(&r, 1_000_000);
    let f = &sim.flows[0];
    let (fct, ideal) = (f.finish_ps - f.start_ps, f.ideal_fct_ps);
    // Base RTT: 4 links of 10 us plus serialization.
    assert!(
        fct >= ideal && fct - ideal <= f.base_rtt_ps,
        "FCT {fct} ps, ideal {ideal} ps"
    );
}

#[test]
fn a_lossy_16_to_1_incast_drops_and_delivers_every_byte_once() {
    let toml = lossy(
        r#"[topology]
        kind = "star"
        hosts = 17
        link = { rate = "100Gbps", delay = "1us" }"#,
        r#"[[workload]]
        kind = "incast"
        senders = 16
        receiver = 16
        size = "1MB"
        at = "0us""#,
    );
    let (_, sim, r) = run(&toml);
    assert_buffers_empty(&sim);
    assert_conserved(&r, 16_000_000);
    assert!(
        r.summary["loss"]["drops"].as_u64().unwrap() > 0,
        "{}",
        r.summary["loss"]
    );
    let ReceiverStates::Amrt(rx) = &sim.receivers else {
        unreachable!()
    };
    assert!(
        rx.iter().map(|r| r.regrants).sum::<u64>() > 0,
        "lost packets granted again"
    );
}

#[test]
fn anti_ecn_fills_k_idle_slots_in_k_rtts_one_room_grant_a_round() {
    // §V, Eq. 3: a lone flow whose first RTT carries u packets of a pipe of n leaves k = n - u
    // consecutive idle slots; each round only the packet after the gap finds room, so each
    // round adds one packet: k room grants, then none (the link is full).
    let toml = lossy(
        r#"[topology]
        kind = "star"
        hosts = 2
        link = { rate = "10Gbps", delay = "5us" }"#,
        "[cc.params]\nunscheduled = \"5KB\"\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"3MB\"\n",
    );
    let (_, sim, r) = run(&toml);
    assert_conserved(&r, 3_000_000);
    let f = &sim.flows[0];
    // The pipe in full packets (1048 B on the wire each): one base RTT at 10 Gb/s.
    let n = (f.base_rtt_ps * 10 / 8 / 1048 / 1000) as i64;
    let SenderStates::Amrt(tx) = &sim.senders else {
        unreachable!()
    };
    let k = n - 5;
    let room = tx[0].room_grants as i64;
    assert!(
        (room - k).abs() <= 2,
        "{room} room grants; k = {k} idle slots (n = {n})"
    );
}
