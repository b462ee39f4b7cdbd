//! Test helpers: build and run a scenario from TOML text, keep the simulation for inspection.
#![allow(dead_code)]

use ccsim::{Results, Scenario, Simulation};

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
        assert_eq!(p.queued_pkts, 0);
        assert!(
            p.ing_shared_bytes.iter().all(|&b| b == 0) && p.ing_hdrm_bytes.iter().all(|&b| b == 0)
        );
    }
}

pub const FATTREE_K4: &str = r#"kind = "fat_tree"
k = 4
host_link = { rate = "100Gbps", delay = "1us" }
fabric_link = { rate = "400Gbps", delay = "1us" }"#;
