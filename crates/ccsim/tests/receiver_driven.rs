//! The receiver-driven schemes on a lossy fabric (AMRT, pHost, NDP): a lone flow meets its ideal FCT
//! within one RTT, and a 16-to-1 incast that overflows the buffer delivers every byte exactly
//! once.

mod common;

use common::{assert_buffers_empty, run};

const SCHEMES: &[&str] = &["amrt", "phost", "ndp"];

/// Every flow finished and every payload byte was delivered exactly once.
fn assert_conserved(scheme: &str, r: &ccsim::Results, bytes: u64) {
    let f = &r.summary["flows"];
    assert_eq!(f["unfinished"], 0, "{scheme}: {}", r.summary);
    assert_eq!(f["payload_bytes_delivered"], bytes, "{scheme}");
    assert_eq!(f["payload_bytes_acked"], bytes, "{scheme}");
}

fn lossy(scheme: &str, topology: &str, flows: &str) -> String {
    format!(
        r#"
        {topology}
        [fabric]
        pfc = {{ enabled = false }}
        loss = {{ mode = "drop_tail", queue_packets = 128 }}
        [cc]
        scheme = "{scheme}"
        {flows}
        "#
    )
}

#[test]
fn a_lone_flow_meets_its_ideal_fct_within_one_rtt() {
    for scheme in SCHEMES {
        let toml = lossy(
            scheme,
            r#"[topology]
            kind = "star"
            hosts = 2
            link = { rate = "10Gbps", delay = "10us" }"#,
            "[[flows]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n",
        );
        let (_, sim, r) = run(&toml);
        assert_conserved(scheme, &r, 1_000_000);
        let f = &sim.flows[0];
        let (fct, ideal) = (f.finish_ps - f.start_ps, f.ideal_fct_ps);
        assert!(
            fct >= ideal && fct - ideal <= f.base_rtt_ps,
            "{scheme}: FCT {fct} ps, ideal {ideal} ps, RTT {} ps",
            f.base_rtt_ps
        );
    }
}

#[test]
fn a_lossy_16_to_1_incast_drops_and_delivers_every_byte_once() {
    for scheme in SCHEMES {
        let toml = lossy(
            scheme,
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
        assert_conserved(scheme, &r, 16_000_000);
        // NDP's switches trim what the others drop.
        let loss = &r.summary["loss"];
        let lost = loss["drops"].as_u64().unwrap() + loss["trims"].as_u64().unwrap_or(0);
        assert!(lost > 0, "{scheme}: {loss}");
    }
}
