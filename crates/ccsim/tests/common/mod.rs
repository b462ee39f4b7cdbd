//! Test helpers: build and run a scenario from TOML text, keep the simulation for inspection.
#![allow(dead_code)]

use ccsim::{Results, Scenario, Simulation};

/// The thread counts a parallel test compares with one thread: `default`, or the list in
/// `CCSIM_TEST_THREADS` (e.g. `2,4,8,16` on a machine with the cores).
pub fn thread_counts(default: &[usize]) -> Vec<usize> {
    match std::env::var("CCSIM_TEST_THREADS") {
        Ok(v) => v
            .split(',')
            .map(|n| match n.trim().parse() {
                Ok(n) if n >= 1 => n,
                _ => panic!("CCSIM_TEST_THREADS={v:?}: give thread counts >= 1, e.g. 2,4,8,16"),
            })
            .collect(),
        Err(_) => default.to_vec(),
    }
}

/// The `[fabric]` lines scheme `scheme` needs to run (empty if none): PFC off for a lossy-only
/// scheme, strict priorities for one that ranks packets.
pub fn scheme_fabric(scheme: &str) -> String {
    let info = ccsim::cc::scheme(scheme).expect("a registered scheme");
    let mut lines = String::new();
    if info.fabric == ccsim::cc::FabricMode::Lossy {
        lines += "pfc = { enabled = false }\n";
    }
    if info.strict_priority {
        lines += "scheduler = \"strict\"\n";
    }
    if lines.is_empty() {
        lines
    } else {
        format!("[fabric]\n{lines}")
    }
}

/// Five long-lived flows h(i) -> h(i+2) at line rate without congestion control on the ring of
/// five switches: every ring link carries two flows into one, PFC pauses spread around the ring
/// and each switch's ingress from the previous one holds packets that wait on the next ring
/// port, a PFC deadlock (found after 200 us paused).
pub const RING_DEADLOCK: &str = r#"
    duration = "3ms"
    [topology]
    kind = "file"
    path = "tests/data/ring5.toml"
    [fabric]
    pfc = { mode = "static", xoff = "100KB", deadlock_after = "200us" }
    [cc]
    scheme = "none"
    [[workload]]
    kind = "long_lived"
    pairs = [[0, 2], [1, 3], [2, 4], [3, 0], [4, 1]]
    [output]
    rates = { interval = "100us" }
"#;

/// A 16-to-1 incast of 1 MB each into one 100G port on a lossy fabric whose drop-tail queues
/// hold `queue_packets`, with scheme `scheme` and `[cc.params]` lines `params`.
pub fn lossy_incast(scheme: &str, params: &str, queue_packets: u32) -> String {
    let info = ccsim::cc::scheme(scheme).expect("a registered scheme");
    let strict = if info.strict_priority {
        "scheduler = \"strict\""
    } else {
        ""
    };
    format!(
        r#"
        [topology]
        kind = "star"
        hosts = 17
        link = {{ rate = "100Gbps", delay = "1us" }}
        [fabric]
        pfc = {{ enabled = false }}
        loss = {{ mode = "drop_tail", queue_packets = {queue_packets} }}
        {strict}
        [cc]
        scheme = "{scheme}"
        [cc.params]
        {params}
        [[workload]]
        kind = "incast"
        senders = 16
        receiver = 16
        size = "1MB"
        at = "0us"
        "#
    )
}

/// Four long flows into one 10G port (star, 5 us links), joining at 0, 0, 2 and 4 ms, for
/// `duration`; the port's queue (10 us) and the flows' rates (500 us) probed.
pub fn four_flows_joining(scheme: &str, duration: &str) -> String {
    format!(
        r#"
        duration = "{duration}"
        [topology]
        kind = "star"
        hosts = 5
        link = {{ rate = "10Gbps", delay = "5us" }}
        [cc]
        scheme = "{scheme}"
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
        rates = {{ interval = "500us", flows = [0, 1, 2, 3] }}
        queues = {{ interval = "10us", ports = ["sw0->h4"] }}
        "#
    )
}

/// Every flow finished and every payload byte was delivered (and acknowledged) exactly once.
pub fn assert_conserved(label: &str, r: &Results, bytes: u64) {
    let f = &r.summary["flows"];
    assert_eq!(f["unfinished"], 0, "{label}: {}", r.summary);
    assert_eq!(f["payload_bytes_delivered"], bytes, "{label}");
    assert_eq!(f["payload_bytes_acked"], bytes, "{label}");
}

/// Build and run `toml`; panics with the error (tests want a loud failure).
pub fn run(toml: &str) -> (Scenario, Simulation, Results) {
    run_with(toml, None, &[])
}

pub fn run_with(
    toml: &str,
    seed: Option<u64>,
    overrides: &[&str],
) -> (Scenario, Simulation, Results) {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let sc = Scenario::load(toml, std::path::Path::new("."), seed, &ov)
        .unwrap_or_else(|e| panic!("scenario: {e}"));
    let mut sim = sc.build().unwrap_or_else(|e| panic!("build: {e}"));
    sim.run().unwrap_or_else(|e| panic!("run: {e}"));
    let r = sc.results(&mut sim);
    (sc, sim, r)
}

/// Build `toml` with `overrides` and run it, expecting the run to fail: its error message.
pub fn run_error(toml: &str, overrides: &[&str]) -> String {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let sc = Scenario::load(toml, std::path::Path::new("."), None, &ov)
        .unwrap_or_else(|e| panic!("scenario: {e}"));
    let mut sim = sc.build().unwrap_or_else(|e| panic!("build: {e}"));
    sim.run().expect_err("the run should fail").to_string()
}

/// Column `col` of table `table` as f64 values.
pub fn column(r: &Results, table: &str, col: &str) -> Vec<f64> {
    use ccsim::metrics::Column;
    let t = r.tables.iter().find(|t| t.name == table).expect("table");
    let c = &t.columns.iter().find(|c| c.0 == col).expect("column").1;
    match c {
        Column::U64(v) => v.iter().map(|&x| x as f64).collect(),
        Column::I64(v) => v.iter().map(|&x| x as f64).collect(),
        Column::F64(v) => v.clone(),
        Column::Str(_) => panic!("string column"),
    }
}

/// What each switch has charged to its buffer is exactly the data it queues (the run ends when
/// the last flow finishes; on a lossy fabric, spurious retransmissions may still be queued then);
/// with nothing queued, every counter is back to zero.
pub fn assert_buffers_account(sim: &Simulation) -> Result<(), String> {
    for sw in &sim.switches {
        let queued: u64 = (sim.ports.iter().filter(|p| p.node == sw.node))
            .map(|p| p.prios[1..].iter().map(|c| c.queue_bytes).sum::<u64>())
            .sum();
        if queued != sw.shared_used_bytes + sw.hdrm_used_bytes {
            return Err(format!(
                "switch {} charges {} B shared + {} B headroom but queues {queued} B of data",
                sw.node, sw.shared_used_bytes, sw.hdrm_used_bytes
            ));
        }
    }
    // Nothing queued, rate-limited control queues (credits still on their way) included.
    if sim
        .ports
        .iter()
        .all(|p| p.queued_pkts() == 0 && !p.has_side_queued())
    {
        std::panic::catch_unwind(|| assert_buffers_empty(sim))
            .map_err(|_| "buffers did not drain to zero".to_string())?;
    }
    Ok(())
}

/// Every buffer counter of every switch is back to zero (nothing leaked or double-freed).
pub fn assert_buffers_empty(sim: &Simulation) {
    for sw in &sim.switches {
        assert_eq!(
            sw.shared_used_bytes, 0,
            "switch {} shared bytes leaked",
            sw.node
        );
        assert_eq!(
            sw.hdrm_used_bytes, 0,
            "switch {} headroom bytes leaked",
            sw.node
        );
        assert_eq!(sw.ctrl_bytes, 0, "switch {} control bytes leaked", sw.node);
    }
    for p in &sim.ports {
        assert_eq!(p.queued_pkts(), 0);
        // The running sum and the bitmaps drained with the queues.
        assert_eq!(p.backlog_bytes(), 0);
        assert!(!p.has_queued());
        assert!(!p.has_side_queued());
        assert!(p
            .prios
            .iter()
            .all(|c| c.ing.shared_bytes == 0 && c.ing.hdrm_bytes == 0));
    }
}

pub const FATTREE_K4: &str = r#"kind = "fat_tree"
k = 4
host_link = { rate = "100Gbps", delay = "1us" }
fabric_link = { rate = "400Gbps", delay = "1us" }"#;

/// The ACC paper's microbenchmark (Fig. 10): ten long flows h0..h9 -> h10 through one switch,
/// 100G, 2 us links, with the bottleneck queue and per-flow rate probes; the flows in the
/// range of `stop_ms` stop at that time.
pub fn ten_to_one(
    scheme: &str,
    duration_ms: u32,
    stop_ms: Option<(u32, std::ops::Range<u32>)>,
) -> String {
    let mut flows = String::new();
    for i in 0..10 {
        let stop = match &stop_ms {
            Some((t, r)) if r.contains(&i) => format!("stop = \"{t}ms\""),
            _ => String::new(),
        };
        flows += &format!("[[flows]]\nsrc = {i}\ndst = 10\n{stop}\n");
    }
    format!(
        r#"duration = "{duration_ms}ms"
[topology]
kind = "star"
hosts = 11
link = {{ rate = "100Gbps", delay = "2us" }}
[cc]
scheme = "{scheme}"
[output]
queues = {{ interval = "10us", ports = ["sw0->h10"] }}
rates = {{ interval = "1ms" }}
{flows}"#
    )
}

/// Jain's fairness index.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

/// String column `col` of table `table`.
pub fn strings(r: &Results, table: &str, col: &str) -> Vec<String> {
    use ccsim::metrics::Column;
    let t = r.tables.iter().find(|t| t.name == table).expect("table");
    match &t.columns.iter().find(|c| c.0 == col).expect("column").1 {
        Column::Str(v) => v.iter().map(|s| s.to_string()).collect(),
        _ => panic!("not a string column"),
    }
}
