"""Sweeps: grid expansion and run ids, the Parquet dataset, Ray vs local, resume after SIGKILL of
the driver or of a worker, failing runs recorded beside the others, one-line errors for bad
sweep files. The shared 8-run fat-tree sweep (``sweep_dir``) is the reference dataset."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import ccsim
import pytest
from ccsim import sweeps
from ccsim.sweeps.job import Job
from helpers import (
    SWEEP_BASE,
    SWEEP_GRID,
    SWEEP_NAME,
    ccsim_cli,
    cli_command,
    cli_env,
    dataset_files,
    interruptible_cli_command,
    write_sweep_files,
)

N_RUNS = 8
REPO = Path(__file__).resolve().parents[2]


def finished_runs(out: Path) -> list[str]:
    runs = out / sweeps.RUNS_DIR
    return (
        sorted(p.name for p in runs.iterdir() if not p.name.startswith("."))
        if runs.exists()
        else []
    )


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def kill_if_alive(pids: list[int]) -> None:
    """Clean up processes this test started (orphaned workers exit by themselves; be sure)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# --- the dataset ---------------------------------------------------------------------------------


def test_grid_expands_to_runs_with_parameter_columns(sweep_dir: Path) -> None:
    s = ccsim.load(sweep_dir)
    assert isinstance(s, ccsim.SweepResult)
    assert s.params == list(SWEEP_GRID) and not s.missing
    assert len(s.runs) == N_RUNS and (s.runs["status"] == "ok").all()
    combos = set(zip(s.runs["cc.scheme"], s.runs["workload.0.load"], s.runs["seed"]))
    assert combos == {(c, lo, sd) for c in ["dcqcn", "none"] for lo in [0.3, 0.8] for sd in [1, 2]}
    assert sorted(s.runs["run_id"]) == finished_runs(sweep_dir)
    # The engine's summary, flattened; scheme and seed agree with the parameters.
    assert (s.runs["scheme"] == s.runs["cc.scheme"]).all()
    assert (s.runs["flows.finished"] == s.runs["flows.total"]).all()
    # Every table carries run_id and the parameters; rows add up to the per-run summaries.
    flows = s.flows
    assert list(flows.columns[:4]) == ["run_id", *SWEEP_GRID]
    per_run = flows.groupby("run_id").size()
    assert per_run.to_dict() == dict(zip(s.runs["run_id"], s.runs["flows.total"].astype(int)))
    assert {"time_us", "queue_bytes", "utilization"} <= set(s.queues.columns)
    assert not s.rates.empty and not s.pfc_events.empty
    # Different seeds, different arrivals; different schemes, different results.
    one = s.runs.set_index(["cc.scheme", "workload.0.load", "seed"])
    assert one.loc[("dcqcn", 0.8, 1), "flows.total"] != one.loc[("dcqcn", 0.8, 2), "flows.total"]
    assert (
        one.loc[("none", 0.8, 1), "pfc.pauses_sent"] > one.loc[("dcqcn", 0.8, 1), "pfc.pauses_sent"]
    )
    # A filter that matches nothing names the values there are.
    assert len(s.where({"load": 0.3}).runs) == N_RUNS // 2
    with pytest.raises(ccsim.ScenarioError, match=r"no run has load = 0\.7; .* 0\.3, 0\.8"):
        s.where({"load": 0.7})


def test_run_ids_depend_only_on_parameter_values() -> None:
    a = sweeps.Sweep("a", SWEEP_BASE, SWEEP_GRID).runs()
    b = sweeps.Sweep("b", SWEEP_BASE, dict(reversed(list(SWEEP_GRID.items())))).runs()
    assert len({r.run_id for r in a}) == N_RUNS
    assert {r.run_id for r in a} == {r.run_id for r in b}
    assert sweeps.run_id({"x": 1}) != sweeps.run_id({"x": 1.0}) != sweeps.run_id({"x": "1"})


def test_cases_run_the_grid_each_with_their_overrides_first() -> None:
    cases = {"light": {"workload.0.load": 0.3}, "heavy": {"workload.0.load": 0.8, "seed": 9}}
    sweep = sweeps.Sweep("c", SWEEP_BASE, {"seed": [1, 2]}, {"duration": "1ms"}, cases=cases)
    runs = sweep.runs()
    assert sweep.params == ["case", "seed"]
    assert [(r.params["case"], r.params["seed"]) for r in runs] == [
        ("light", 1),
        ("light", 2),
        ("heavy", 1),
        ("heavy", 2),
    ]
    # The case first, then [set], then the grid: the grid's seed wins over the case's.
    assert sweep.run_overrides(runs[2]) == {"workload.0.load": 0.8, "seed": 1, "duration": "1ms"}
    # Editing a case changes its runs' ids, so a re-run does not reuse stale results.
    edited = sweeps.Sweep(
        "c", SWEEP_BASE, {"seed": [1, 2]}, cases={**cases, "light": {"workload.0.load": 0.4}}
    )
    assert edited.runs()[0].run_id != runs[0].run_id
    assert edited.runs()[2].run_id == runs[2].run_id
    assert len({r.run_id for r in runs}) == 4


def test_a_case_can_run_its_own_base_scenario(tmp_path: Path) -> None:
    """A case's ``base`` replaces the sweep's base scenario for its runs (e.g. to compare runs
    of different scenario files); its overrides still apply."""
    star = {
        "name": "star",
        "topology": {"kind": "star", "hosts": 3, "link": {"rate": "10Gbps", "delay": "1us"}},
        "cc": {"scheme": "none"},
    }
    star["flows"] = [{"src": 0, "dst": 2, "size": "10KB"}]
    (tmp_path / "base.toml").write_text(ccsim.to_toml(SWEEP_BASE))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "star.toml").write_text(ccsim.to_toml(star))
    (tmp_path / "s.toml").write_text(
        'base = "base.toml"\n[cases.fat]\nseed = 5\n[cases.star]\nbase = "other/star.toml"\n'
    )
    sweep = sweeps.Sweep.from_file(tmp_path / "s.toml")
    sweeps.run_sweep(sweep, tmp_path / "out", workers=1)
    flows = ccsim.load(tmp_path / "out").flows
    assert list(flows[flows["case"] == "star"]["size_bytes"]) == [10_000]
    assert len(flows[flows["case"] == "fat"]) > 1


def test_a_grid_that_explodes_is_refused_before_expanding(tmp_path: Path) -> None:
    grid = {"seed": list(range(1000)), "workload.0.load": [i / 1000 for i in range(1, 1001)]}
    with pytest.raises(ccsim.ScenarioError, match="expands to 1000000 runs, more than 10000"):
        sweeps.Sweep("big", SWEEP_BASE, grid).runs()
    seeds = {"seed": list(range(20_000))}
    assert len(sweeps.Sweep("ok", SWEEP_BASE, seeds, max_runs=20_000).runs()) == 20_000
    sweep_file = tmp_path / "big.toml"
    sweep_file.write_text(
        f'base = "{REPO / "scenarios" / "flagship.toml"}"\n[grid]\nseed = {list(range(200))}\n'
        f'"workload.0.load" = {[i / 100 for i in range(1, 100)]}\n'
    )
    proc = ccsim_cli("sweep", str(sweep_file), cwd=tmp_path)
    assert proc.returncode == 2 and "more than 10000" in proc.stderr and "--max-runs" in proc.stderr


@pytest.mark.parametrize(
    "cases, needle",
    [({"a": 1}, "cases: expected named tables"), ({"a": {}}, "cases: expected named tables")],
)
def test_bad_cases_are_one_line_errors(cases: dict, needle: str) -> None:
    with pytest.raises(ccsim.ScenarioError, match=needle):
        sweeps.Sweep("c", SWEEP_BASE, {"seed": [1]}, cases=cases)


def test_ray_backend_gives_the_same_results_as_local(sweep_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    out = tmp_path / "ray"
    runs = ccsim.sweep(SWEEP_BASE, SWEEP_GRID, name=SWEEP_NAME, out=out, backend="ray", workers=2)
    assert len(runs) == N_RUNS and (runs["status"] == "ok").all()
    ray_files, local_files = dataset_files(out), dataset_files(sweep_dir)
    assert sorted(ray_files) == sorted(local_files)
    assert ray_files == local_files  # byte-identical Parquet, per run


# --- interruptions -------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "Ctrl-C"])
def test_interrupted_driver_then_restart_loses_and_duplicates_nothing(
    sweep_dir: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    sweep_file = write_sweep_files(tmp_path)
    out = tmp_path / "out"
    args = ("sweep", str(sweep_file), "--workers", "1", "--out", str(out), "-q")
    proc = subprocess.Popen(
        interruptible_cli_command(*args),
        cwd=tmp_path,
        env=cli_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    workers: list[int] = []
    try:
        while proc.poll() is None and not finished_runs(out):
            workers = children(proc.pid) or workers
            time.sleep(0.02)
        assert proc.poll() is None, "the sweep ended before it could be killed; make it longer"
        workers = children(proc.pid) or workers
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=300)  # a hang fails here, not at CI's limit
        if sig == signal.SIGINT:  # Ctrl-C: one line, exit 130, workers stopped
            assert proc.returncode == 130 and stderr.strip() == "ccsim: error: interrupted"
        done = finished_runs(out)
        assert 1 <= len(done) < N_RUNS

        again = ccsim_cli("sweep", str(sweep_file), "--workers", "1", "--out", str(out), "-q")
        assert again.returncode == 0, again.stderr
    finally:
        kill_if_alive(workers)
    s = ccsim.load(out)
    assert len(s.runs) == N_RUNS and not s.missing
    assert len(finished_runs(out)) == N_RUNS
    assert not [p for p in (out / sweeps.RUNS_DIR).iterdir() if p.name.startswith(".")]
    assert dataset_files(out) == dataset_files(sweep_dir)


def test_a_rerun_says_what_it_skipped_and_other_settings_need_force(
    sweep_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(sweep_dir, out)
    sweep_file = write_sweep_files(tmp_path)
    again = ccsim_cli("sweep", str(sweep_file), "--out", str(out), "-q")
    assert again.returncode == 0, again.stderr
    assert f"{N_RUNS} runs already finished" in again.stderr
    before = dataset_files(out)
    other = write_sweep_files(tmp_path, {"cc.scheme": ["none"]})
    proc = ccsim_cli("sweep", str(other), "--out", str(out), "-q")
    assert proc.returncode == 2 and "other settings (grid differ)" in proc.stderr, proc.stderr
    assert dataset_files(out) == before
    forced = ccsim_cli("sweep", str(other), "--out", str(out), "-q", "--force")
    assert forced.returncode == 0, forced.stderr
    assert len(ccsim.load(out).runs) == 1


def test_a_killed_worker_is_replaced_and_its_run_redone(sweep_dir: Path, tmp_path: Path) -> None:
    sweep_file = write_sweep_files(tmp_path)
    out = tmp_path / "out"
    cmd = cli_command("sweep", str(sweep_file), "--workers", "1", "--out", str(out), "-q")
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, text=True)
    killed: list[int] = []
    try:
        while proc.poll() is None and len(finished_runs(out)) < 2:
            time.sleep(0.02)
        for pid in children(proc.pid):
            if "_worker_main" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        stdout, _ = proc.communicate(timeout=300)
    finally:
        kill_if_alive([proc.pid])
    assert killed, "no worker found to kill"
    assert proc.returncode == 0
    assert stdout.strip() == str(out)
    assert dataset_files(out) == dataset_files(sweep_dir)


def test_ctrl_c_while_a_result_is_read_stops_every_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    # The driver is interrupted after a worker's result header, while the worker still writes
    # the rest (megabytes of probes, more than a pipe holds): the worker must be killed, not
    # waited for, or both wait on each other for ever.
    from ccsim.sweeps import local

    def interrupted_mid_frame(stream: Any) -> Any:
        stream.read(8)
        raise KeyboardInterrupt

    monkeypatch.setattr(local, "_read_frame", interrupted_mid_frame)
    job = Job(SimpleNamespace(run_id="r"), ccsim.to_toml(SWEEP_BASE), str(REPO), "k")  # type: ignore[arg-type]
    raised: list[BaseException] = []

    def drive() -> None:
        try:
            local._run_local([job], 1, lambda job, payload: None)
        except BaseException as e:  # noqa: BLE001 -- handed to the test's thread
            raised.append(e)

    driver = threading.Thread(target=drive, daemon=True)
    driver.start()
    driver.join(timeout=300)  # a hang fails here, not at CI's limit
    assert not driver.is_alive(), "the driver waits for a worker blocked on its full pipe"
    assert len(raised) == 1 and isinstance(raised[0], KeyboardInterrupt)


# --- failures and bad input ----------------------------------------------------------------------


def test_failing_runs_are_recorded_and_the_others_complete(tmp_path: Path) -> None:
    base = {**SWEEP_BASE, "workload": [SWEEP_BASE["workload"][1]], "output": {}}
    (tmp_path / "base.toml").write_text(ccsim.to_toml(base))
    sweep = {
        "base": "base.toml",
        "grid": {
            "cc.scheme": ["dcqcn", "bogus"],  # invalid: recorded without running
            # a lossless violation at run time: a SimulationError inside the worker
            "fabric.pfc": [{"xoff": "200KB"}, {"xoff": "20KB", "headroom": "2KB"}],
        },
    }
    (tmp_path / "s.toml").write_text(ccsim.to_toml(sweep))
    proc = ccsim_cli("sweep", "s.toml", "--workers", "2", cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "4 runs, 1 ok, 3 failed" in proc.stdout
    failed = [line for line in proc.stdout.splitlines() if line.startswith("  failed ")]
    assert len(failed) == 3 and "unknown scheme `bogus`" in proc.stdout
    runs = ccsim.load(tmp_path / "results" / "s").runs
    assert runs["status"].tolist().count("ok") == 1
    errors = runs.set_index(["cc.scheme", "fabric.pfc"])["error"]
    assert errors[("bogus", '{xoff = "200KB"}')].startswith("ScenarioError: cc.scheme")
    assert "SimulationError" in errors[("dcqcn", '{xoff = "20KB", headroom = "2KB"}')]
    assert errors[("dcqcn", '{xoff = "200KB"}')] is None


def test_validation_reports_its_progress(tmp_path: Path) -> None:
    base = {**SWEEP_BASE, "workload": [SWEEP_BASE["workload"][1]], "output": {}}
    (tmp_path / "base.toml").write_text(ccsim.to_toml(base))
    # Every run fails validation (a bad scheme), so nothing runs after it.
    sweep = sweeps.Sweep(
        name="v",
        base=str(tmp_path / "base.toml"),
        grid={"seed": list(range(1, 131))},
        overrides={"cc.scheme": "bogus"},
    )
    seen: list[tuple[int, int]] = []
    with pytest.raises(ccsim.ScenarioError, match="every run is invalid"):
        sweeps.run_sweep(sweep, tmp_path / "out", validating=lambda i, n: seen.append((i, n)))
    assert seen == [(0, 130), (64, 130), (128, 130)]


BAD_SWEEPS = [
    ('base = "base.toml"\ncolour = 1\n', "colour"),
    ('base = "missing.toml"\n', "base"),
    ('base = "base.toml"\n[grid]\nseed = 3\n', "grid.seed"),
    ('base = "base.toml"\n[grid]\ncc.scheme = ["none"]\n', '"cc.scheme" = ['),
    ('base = "base.toml"\n[grid]\n"topology.colour" = [1, 2]\n', "colour"),
    ('base = "base.toml"\n[grid]\nseed = [1, 1]\n', "twice"),
    ('base = "base.toml"\n[grid\n', "TOML"),
    ('base = "base.toml"\n[cases.x]\nbase = "gone.toml"\n', "cases.x.base"),
]


@pytest.mark.parametrize(("text", "needle"), BAD_SWEEPS)
def test_bad_sweep_file_is_one_line(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "base.toml").write_text(ccsim.to_toml(SWEEP_BASE))
    (tmp_path / "s.toml").write_text(text)
    proc = ccsim_cli("sweep", "s.toml", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccsim: error: s.toml"), proc.stderr
    assert needle in lines[0]
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("path", sorted((REPO / "sweeps").glob("*.toml")), ids=lambda p: p.name)
def test_example_sweep_files_validate(path: Path) -> None:
    sweep = sweeps.Sweep.from_file(path)
    assert len(sweep.runs()) > 1
    for spec in sweep.runs():
        ccsim.validate(sweep.scenario_of(spec), overrides=sweep.run_overrides(spec))


def test_sweep_json_records_the_grid(sweep_dir: Path) -> None:
    meta = json.loads((sweep_dir / sweeps.SWEEP_JSON).read_text())
    assert meta["grid"] == SWEEP_GRID and len(meta["runs"]) == N_RUNS


def test_names_of_the_former_single_module_still_import() -> None:
    names = [
        "BACKENDS",
        "MAX_WORKER_DEATHS",
        "RUNS_DIR",
        "STATUS_FAILED",
        "STATUS_OK",
        "SUMMARY_PARQUET",
        "SWEEP_FILE_KEYS",
        "SWEEP_JSON",
        "Job",
        "ResultFn",
        "RunSpec",
        "Sweep",
        "SweepResult",
        "execute",
        "flatten",
        "load_runs",
        "load_sweep",
        "run_id",
        "run_sweep",
        "short_names",
        "sweep",
        "_run_local",
        "_start_worker",
        "_worker_main",
        "_write_frame",
        "_read_frame",
        "_run_ray",
        "_write_run",
        "_stored_key",
        "_clean_partial_writes",
        "_lock",
        "_write_json_atomic",
        "_engine_id",
        "_param_columns",
        "_column_value",
        "_canonical",
        "_quote_key",
        "_concat",
        "_TMP_PREFIX",
        "_OLD_PREFIX",
    ]
    assert [n for n in names if not hasattr(sweeps, n)] == []
    assert ccsim.sweep is sweeps.sweep and ccsim.SweepResult is sweeps.SweepResult


def test_one_run_of_a_sweep_reads_as_a_run(sweep_dir: Path, tmp_path: Path) -> None:
    """`ccsim.load` and `ccsim fct-txt` on OUT/runs/<id> (Parquet tables) see its flows: as
    many as its summary counts, without the sweep's id and parameter columns."""
    run = min((sweep_dir / sweeps.RUNS_DIR).iterdir())
    result = ccsim.load(run)
    assert len(result.flows) == result.summary["flows"]["total"] > 0
    assert "run_id" not in result.flows.columns and "id" in result.flows.columns
    assert len(result.queues) > 0 or "queues" not in result.summary
    copy = tmp_path / "runs" / run.name
    shutil.copytree(run, copy)
    proc = ccsim_cli("fct-txt", str(copy), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = (copy / "fct.txt").read_text().splitlines()
    assert len(lines) == result.summary["flows"]["finished"]


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"grid": [1, 2]}, "grid: expected a dict, e.g. {'seed': [1, 2]}; got list"),
        ({"grid": {}, "overrides": ["seed=2"]}, "overrides: expected a dict"),
        ({"grid": {}, "cases": 3}, "cases: expected a dict"),
    ],
)
def test_sweep_arguments_of_the_wrong_type_are_named(
    tmp_path: Path, kwargs: dict, needle: str
) -> None:
    with pytest.raises(ccsim.ScenarioError, match=re.escape(needle)):
        ccsim.sweep(SWEEP_BASE, out=tmp_path / "s", **kwargs)
    assert not (tmp_path / "s").exists()


def test_a_sweep_json_of_the_older_form_is_the_same_sweep(tmp_path: Path) -> None:
    """sweep.json used to hold [set] tables as TOML text; such a directory resumes without
    --force (its settings are the same)."""
    link = {"rate": "25Gbps", "delay": "2us"}
    out = tmp_path / "s"
    ccsim.sweep(SWEEP_BASE, {"seed": [1]}, overrides={"topology.host_link": link}, out=out)
    meta = json.loads((out / "sweep.json").read_text())
    meta["set"] = {k: ccsim.api.inline_toml(v) for k, v in meta["set"].items()}
    (out / "sweep.json").write_text(json.dumps(meta))
    ccsim.sweep(SWEEP_BASE, {"seed": [1]}, overrides={"topology.host_link": link}, out=out)
    other = {"rate": "10Gbps", "delay": "2us"}
    with pytest.raises(ccsim.ScenarioError, match="set differ"):
        ccsim.sweep(SWEEP_BASE, {"seed": [1]}, overrides={"topology.host_link": other}, out=out)


def test_local_workers_share_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each local worker's runs get cores / workers (CCSIM_CORES, which a run's threads = "auto"
    # takes), at least one; a share the caller set is divided the same way, a bad one ignored.
    from ccsim.sweeps import local

    monkeypatch.delenv("CCSIM_CORES", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert local._worker_env(4)["CCSIM_CORES"] == "4"
    assert local._worker_env(32)["CCSIM_CORES"] == "1"
    monkeypatch.setenv("CCSIM_CORES", "6")
    assert local._worker_env(2)["CCSIM_CORES"] == "3"
    monkeypatch.setenv("CCSIM_CORES", "many")
    assert local._worker_env(2)["CCSIM_CORES"] == "8"
