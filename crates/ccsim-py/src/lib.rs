//! PyO3 bindings, conversion only: scenario text in, columnar results out, progress callback.
//! No simulation logic lives here.

use ccsim::metrics::{Column, SIZE_BINS, TABLES};
use ccsim::topo::Layer;
use ccsim::{Scenario, ScenarioError as CoreScenarioError};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;

#[global_allocator]
static ALLOC: ccsim::sim::alloc::HugePageAlloc = ccsim::sim::alloc::HugePageAlloc;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "Bad scenario input: names the field and the fix."
);
create_exception!(
    _core,
    SimulationError,
    PyRuntimeError,
    "The run hit an impossible state (e.g. a lossless-fabric violation)."
);

fn scen_err(e: CoreScenarioError) -> PyErr {
    if e.field == CoreScenarioError::INTERRUPTED {
        return PyKeyboardInterrupt::new_err(e.message);
    }
    ScenarioError::new_err(e.to_string())
}

/// `sim::interrupt`'s check: a Ctrl-C that Python has noted (its handler raises
/// KeyboardInterrupt, taken here; `scen_err` raises it again once building has stopped).
fn ctrl_c_pressed() -> bool {
    Python::attach(|py| py.check_signals().is_err())
}

fn load(
    scenario: &str,
    base_dir: &str,
    seed: Option<u64>,
    overrides: &[String],
) -> PyResult<Scenario> {
    Scenario::load(scenario, Path::new(base_dir), seed, overrides).map_err(scen_err)
}

fn check_out_dir(dir: &Path) -> PyResult<()> {
    let probe = dir.join(".ccsim-write-test");
    std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&probe, b""))
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|e| {
            ScenarioError::new_err(format!(
                "--out: cannot write to `{}`: {e}; choose a writable directory",
                dir.display()
            ))
        })
}

/// Run a scenario; returns {"summary": json, "config": toml, "tables": {name: {col: list}},
/// "trace": pcapng bytes or None}.
#[pyfunction]
#[pyo3(signature = (scenario, base_dir, seed=None, overrides=Vec::new(), out_dir=None, progress=None, progress_every_events=262_144, on_built=None, allow_long=false))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    scenario: &str,
    base_dir: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    out_dir: Option<String>,
    progress: Option<Py<PyAny>>,
    progress_every_events: u64,
    on_built: Option<Py<PyAny>>,
    allow_long: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = load(scenario, base_dir, seed, &overrides)?;
    if let Some(d) = &out_dir {
        check_out_dir(Path::new(d))?;
    }
    let t_build = std::time::Instant::now();
    // Without the GIL: a parallel run builds its partitions on threads, and building polls
    // for Ctrl-C, which takes the GIL.
    let mut run = py.detach(|| sc.start()).map_err(scen_err)?;
    let build_s = t_build.elapsed().as_secs_f64();
    // What the build found (e.g. a run too long to finish) is said now, not after the run.
    let built_warnings: Vec<String> = sc.warnings.iter().chain(&run.warnings()).cloned().collect();
    if let Some(cb) = &on_built {
        cb.call1(py, (built_warnings.clone(),))?;
    }
    run.refuse_endless(allow_long)
        .map_err(ScenarioError::new_err)?;
    let stop = if run.stop_ps() == u64::MAX {
        0
    } else {
        run.stop_ps()
    };
    let chunk = progress_every_events.max(1);
    let t0 = std::time::Instant::now();
    let write = |res: &ccsim::metrics::Results, wall_s: f64| -> PyResult<()> {
        match &out_dir {
            Some(d) => res.write_dir(Path::new(d), build_s, wall_s).map_err(|e| {
                ScenarioError::new_err(format!("--out: cannot write results to `{d}`: {e}"))
            }),
            None => Ok(()),
        }
    };
    loop {
        let done = py
            .detach(|| run.run_events(chunk))
            .map_err(|e| SimulationError::new_err(e.to_string()))?;
        let mut stopped = py.check_signals().err();
        if let (None, Some(cb)) = (&stopped, &progress) {
            let done_flows = run.flows_total() - run.flows_open();
            let r = cb.call1(
                py,
                (
                    run.now_ps(),
                    run.events(),
                    stop,
                    done_flows,
                    run.flows_total(),
                ),
            )?;
            if let Ok(false) = r.extract::<bool>(py) {
                stopped = Some(PyKeyboardInterrupt::new_err(
                    "run cancelled by the progress callback",
                ));
            }
        }
        if let Some(e) = stopped {
            // Keep what was measured, marked partial (flows still open are unfinished).
            let mut res = sc.results(&mut run.into_simulation());
            res.summary["partial"] = true.into();
            write(&res, t0.elapsed().as_secs_f64())?;
            return Err(e);
        }
        if done {
            break;
        }
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let res = sc.results(&mut run.into_simulation());
    write(&res, wall_s)?;
    // The run is complete and written: a Ctrl-C from here on comes too late to stop anything.
    let _ = py.check_signals();
    let out = PyDict::new(py);
    out.set_item(
        "summary",
        serde_json::to_string(&res.summary_with_perf(build_s, wall_s)).unwrap(),
    )?;
    out.set_item("config", &res.config_toml)?;
    let tables = PyDict::new(py);
    for t in &res.tables {
        let cols = PyDict::new(py);
        for (name, c) in &t.columns {
            match c {
                Column::U64(v) => cols.set_item(*name, v)?,
                Column::I64(v) => cols.set_item(*name, v)?,
                Column::F64(v) => cols.set_item(*name, v)?,
                Column::Str(v) => cols.set_item(*name, v)?,
            }
        }
        tables.set_item(t.name, cols)?;
    }
    out.set_item("tables", tables)?;
    out.set_item(
        "trace",
        res.trace
            .as_deref()
            .map(|b| pyo3::types::PyBytes::new(py, b)),
    )?;
    Ok(out)
}

/// Validate a scenario without running it, and build it unless `build` is false (which checks
/// and resolves the settings only); returns (resolved TOML, warnings).
#[pyfunction]
#[pyo3(signature = (scenario, base_dir, seed=None, overrides=Vec::new(), build=true))]
fn validate(
    scenario: &str,
    base_dir: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    build: bool,
) -> PyResult<(String, Vec<String>)> {
    let sc = load(scenario, base_dir, seed, &overrides)?;
    if !build {
        return Ok((sc.resolved_toml(), sc.warnings.clone()));
    }
    let sim = sc.build().map_err(scen_err)?;
    Ok((sc.resolved_toml(), sc.all_warnings(&sim)))
}

/// Schemes (with paper and parameter defaults), topologies and workloads.
#[pyfunction]
fn catalog(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    let schemes = PyDict::new(py);
    for s in ccsim::cc::schemes() {
        let d = PyDict::new(py);
        d.set_item("description", s.description)?;
        d.set_item("paper", s.paper)?;
        d.set_item("header_bytes", s.header_bytes)?;
        let params = PyDict::new(py);
        let table = ccsim::cc::CcParams::parse(s.name, &Default::default())
            .map_err(scen_err)?
            .to_table();
        for (k, v) in &table {
            params.set_item(k, v.to_string().trim_matches('"'))?;
        }
        d.set_item("params", params)?;
        schemes.set_item(s.name, d)?;
    }
    out.set_item("schemes", schemes)?;
    let topos = PyDict::new(py);
    for (k, v) in ccsim::topo::CATALOG {
        topos.set_item(*k, *v)?;
    }
    out.set_item("topologies", topos)?;
    let wls = PyDict::new(py);
    for (k, v) in ccsim::workload::CATALOG {
        wls.set_item(*k, *v)?;
    }
    out.set_item("workloads", wls)?;
    Ok(out)
}

/// The engine's output vocabulary, so Python does not re-encode it: the FCT size bins
/// (family, label, lower bytes, upper bytes exclusive or None when unbounded) in engine order,
/// smallest first within a family; the fabric layers' names, host first; the result tables.
#[pyfunction]
fn vocabulary(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    let bins: Vec<(&str, &str, u64, Option<u64>)> = SIZE_BINS
        .iter()
        .map(|&(family, label, lo, hi)| (family, label, lo, (hi != u64::MAX).then_some(hi)))
        .collect();
    out.set_item("size_bins", bins)?;
    let layers: Vec<&str> = Layer::ALL.iter().map(|l| l.name()).collect();
    out.set_item("layers", layers)?;
    out.set_item("tables", TABLES.to_vec())?;
    Ok(out)
}

/// TOML text of a built-in benchmark scenario (one of `BENCHMARKS`).
#[pyfunction]
fn bench_scenario(name: &str) -> PyResult<String> {
    ccsim::bench::scenario(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown benchmark `{name}`; use one of: {}",
            ccsim::bench::NAMES.join(", ")
        ))
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ccsim::sim::interrupt::set_check(ctrl_c_pressed);
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(vocabulary, m)?)?;
    m.add("BENCHMARKS", ccsim::bench::NAMES.to_vec())?;
    m.add("MAX_PARTITIONS", ccsim::engine::parallel::MAX_PARTITIONS)?;
    Ok(())
}
