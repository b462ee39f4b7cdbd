//! ExpressPass: credits leave a port at no more than their share of it, and senders send no more
//! data than the credits they got (its lossy incast is in lossy.rs).

mod common;

use ccsim::cc::SenderStates;
use common::run;

#[test]
fn credits_stay_within_their_share_and_data_within_the_credits() {
    // Four long flows into one 10G receiver for 10 ms: every credit leaves the receiver's
    // port, rate-limited to 64 / (64 + 1048) of 10 Gb/s (a 64 B credit per full data packet).
    let (_, sim, _) = run(&common::four_flows_joining("expresspass", "10ms"));
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
