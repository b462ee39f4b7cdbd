//! ccsim: a packet-level discrete-event simulator for datacenter transport and congestion
//! control, built for lossless (PFC) Ethernet first.
//!
//! Layers, bottom up: `sim` (time, events, RNG) -> `net` (packets, ports, switches, NICs) ->
//! `transport` (reliable flows) -> `cc` (one file per scheme) ; `topo` and `workload` describe
//! what to simulate, `scenario` turns a TOML file into a `Simulation`, `metrics` turns a finished
//! run into tables and a summary. One run is single-threaded and deterministic.

pub mod bench;
pub mod cc;
pub mod metrics;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod topo;
pub mod transport;
pub mod workload;
pub mod world;

pub use metrics::Results;
pub use scenario::{Scenario, ScenarioError};
pub use world::{SimError, Simulation};

/// Load, build and run a scenario to completion (convenience for Rust users and tests).
pub fn run_scenario(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
    overrides: &[String],
) -> Result<Results, String> {
    let sc = Scenario::load(text, base_dir, seed, overrides).map_err(|e| e.to_string())?;
    let mut sim = sc.build().map_err(|e| e.to_string())?;
    sim.run().map_err(|e| e.to_string())?;
    Ok(sc.results(&mut sim))
}
