//! ExpressPass: credits leave a port at no more than their share of it, senders send no more
//! data than the credits they got, and a lossy incast delivers every byte exactly once.

mod common;

use ccsim::cc::SenderStates;
use common::{assert_buffers_account, run};

#[test]
fn credits_stay_within_their_share_and_data_within_the_credits() {
    // Four long flows into one 10G receiver for 10 ms: every credit leaves the receiver's
    // port, rate-limited to 64 / (64 + 1048) of 10 Gb/s (a 64 B credit per full data packet).
    let toml = r#"
        duration = "10ms"
        [topology]
        kind = "star"
        hosts = 5
        link = { rate = "10Gbps", delay = "5us" }
        [cc]
        scheme = "expresspass"
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
    "#;
    let (_, sim, _) = run(toml);
    let SenderStates::ExpressPass(tx) = &sim.senders else {
        unreachable!()
    };
    let credits: u64 = tx.iter().map(|s| s.credits).sum();
    let share = 64.0 / (64.0 + 1048.0);
    let most = share * 10e9 * 10e-3 / (64.0 * 8.0) + 8.0;
    assert!(
        (credits as f64) <= most,
        "{credits} credits, at most {most}"
    );
    assert!(
        credits as f64 > 0.9 * most,
        "{credits} credits: the receiver asks for all"
    );
    for (i, (f, s)) in sim.flows.iter().zip(tx).enumerate() {
        let packets = f.tx_bytes / 1048;
        assert!(
            packets <= s.credits - s.wasted,
            "flow {i}: {packets} packets"
        );
    }
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
        loss = { mode = "drop_tail", queue_packets = 32 }
        [cc]
        scheme = "expresspass"
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
    // The credits in excess of the receiver's share are what is dropped.
    assert!(
        r.summary["ctrl_drops"].as_u64().unwrap() > 0,
        "{}",
        r.summary
    );
}
