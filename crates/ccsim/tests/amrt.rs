//! AMRT on a lossy fabric: anti-ECN filling idle slots one per round (§V). The physics every
//! receiver-driven scheme shares (a lone flow's FCT, conservation on an incast that drops) is
//! in `receiver_driven.rs`.

mod common;

use ccsim::cc::SenderStates;
use common::run;

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
