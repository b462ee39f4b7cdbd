//! ccsim: a packet-level discrete-event simulator for datacenter transport and congestion
//! control, built for lossless (PFC) Ethernet first.
//!
//! Layers, bottom up (each imports only below it; `docs/design.md` has the map and
//! `tests/layers.rs` checks it): `sim` (time, units, input errors, events, RNG) -> `net`
//! (packets, ports, buffers) and `topo` -> `transport` (reliable flows) and `workload` -> `cc`
//! (the scheme interface, one file per scheme) and `metrics` (result records) -> `engine` (the
//! `Simulation`, its run loop and handlers; `engine::parallel` runs one on many threads) ->
//! `scenario` (a TOML file -> a run). Every run is deterministic, and a parallel one gives the
//! same bytes for every thread count.

pub mod bench;
pub mod cc;
pub mod engine;
pub mod metrics;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod topo;
pub mod transport;
pub mod workload;

pub use engine::{SimError, Simulation};
pub use metrics::Results;
pub use scenario::{Scenario, ScenarioError};

/// Load, build and run a scenario to completion (convenience for Rust users and tests).
pub fn run_scenario(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
    overrides: &[String],
) -> Result<Results, String> {
    let sc = Scenario::load(text, base_dir, seed, overrides).map_err(|e| e.to_string())?;
    let mut run = sc.start().map_err(|e| e.to_string())?;
    run.run().map_err(|e| e.to_string())?;
    Ok(sc.results(&mut run.into_simulation()))
}
