"""The front door: CLI exit codes and one-line errors, RunResult tables, the dict -> TOML writer.

These need the compiled engine (``import ccsim`` loads ``ccsim._core``): build it first with
``pip install -e .`` or ``maturin develop``. CLI tests run ``python -m ccsim.cli`` in a fresh
process, in a temporary working directory.
"""

from __future__ import annotations

import io
import json
import math
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import ccsim
import pytest
from ccsim import api, cli
from ccsim.progress import ProgressLine, format_duration, format_progress, format_time_ps
from helpers import ccsim_cli, cli_env, interruptible_cli_command

# The scenario schema belongs to the engine: if it changes, fix the literals here only.
SCENARIO = {
    "name": "t",
    "duration": "200us",
    "topology": {"kind": "star", "hosts": 3, "link": {"rate": "100Gbps", "delay": "1us"}},
    "cc": {"scheme": "none"},
    "flows": [{"src": 0, "dst": 2, "size": "100KB", "start": "0us"}],
}
BAD_SCHEME_OVERRIDE = "cc.scheme=no_such_scheme"
FLOW_COLUMNS = [
    "id",
    "src",
    "dst",
    "size_bytes",
    "start_ps",
    "finish_ps",
    "fct_ps",
    "ideal_fct_ps",
    "slowdown",
    "bytes_acked",
]


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(ccsim.to_toml(SCENARIO), encoding="utf-8")
    return path


def assert_one_line_error(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ccsim: error: "), lines[0]
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0]


# --- user errors: one line on stderr, exit code 2 ------------------------------------------------


def test_validate_missing_file_names_the_path(tmp_path: Path) -> None:
    proc = ccsim_cli("validate", "nowhere/missing.toml", cwd=tmp_path)
    assert_one_line_error(proc, 2, "missing.toml")


def test_run_missing_file_names_the_path(tmp_path: Path) -> None:
    proc = ccsim_cli("run", "missing.toml", cwd=tmp_path)
    assert_one_line_error(proc, 2, "missing.toml")
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("command", ["validate", "run"])
def test_set_without_equals_is_a_usage_error(
    command: str, scenario_file: Path, tmp_path: Path
) -> None:
    proc = ccsim_cli(command, str(scenario_file), "--set", "cc.scheme", cwd=tmp_path)
    assert_one_line_error(proc, 2, "cc.scheme")


def test_invalid_scenario_is_one_line(scenario_file: Path, tmp_path: Path) -> None:
    proc = ccsim_cli("validate", str(scenario_file), "--set", BAD_SCHEME_OVERRIDE, cwd=tmp_path)
    assert_one_line_error(proc, 2)


def test_unwritable_out_names_out_flag(scenario_file: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    proc = ccsim_cli("run", str(scenario_file), "--out", str(blocker / "run"), cwd=tmp_path)
    assert_one_line_error(proc, 2, "--out")


def test_bad_flag_is_one_line(tmp_path: Path) -> None:
    proc = ccsim_cli("run", "--no-such-flag", cwd=tmp_path)
    assert_one_line_error(proc, 2)


@pytest.mark.parametrize("seed", ["-1", "9223372036854775808", "x"])
def test_bad_seeds_name_the_flag(seed: str, scenario_file: Path, tmp_path: Path) -> None:
    proc = ccsim_cli("validate", str(scenario_file), "--seed", seed, cwd=tmp_path)
    assert_one_line_error(proc, 2, "--seed")


def test_binary_garbage_names_the_file(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.toml"
    garbage.write_bytes(bytes(range(256)) * 4)
    for command in ("run", "validate", "sweep"):
        proc = ccsim_cli(command, str(garbage), cwd=tmp_path)
        assert_one_line_error(proc, 2, "garbage.toml: not a text file")


@pytest.mark.parametrize(
    "files, needle",
    [
        ({"summary.json": "{"}, "summary.json: not JSON (Expecting property name"),
        ({"summary.json": "{}"}, "summary.json: not a ccsim run summary"),
        ({"sweep.json": "{}"}, "sweep.json: not a ccsim sweep (no `name`"),
        (
            {
                "summary.json": '{"sim_time_ps": 0, "flows": {"total": 1}}',
                "flows.csv": "id,src\n0,1\n",
            },
            "flows.csv: not a ccsim flows table (no column dst, size_bytes, start_ps",
        ),
    ],
)
def test_corrupt_results_name_the_file(files: dict[str, str], needle: str, tmp_path: Path) -> None:
    out = tmp_path / "res"
    out.mkdir()
    for name, text in files.items():
        (out / name).write_text(text)
    for command in ("plot", "report"):
        proc = ccsim_cli(command, str(out), cwd=tmp_path)
        assert_one_line_error(proc, 2, needle)


def test_unexpected_exception_exits_1_with_debug_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scenario_file: Path
) -> None:
    def boom(*args: object, **kwargs: object) -> str:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.delenv("CCSIM_DEBUG", raising=False)
    monkeypatch.setattr(api, "validate", boom)
    assert cli.main(["validate", str(scenario_file)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "boom" in err[0] and "CCSIM_DEBUG=1" in err[0]


def test_interrupt_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scenario_file: Path
) -> None:
    def interrupted(*args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "validate", interrupted)
    assert cli.main(["validate", str(scenario_file)]) == 130
    assert capsys.readouterr().err.strip() == "ccsim: error: interrupted"


def test_a_cancelled_run_writes_what_it_measured_marked_partial(tmp_path: Path) -> None:
    # A long run (100 MB over a 100G star), cancelled by the progress callback after its first
    # chunk of events: the output directory holds the tables so far, and summary.json says so.
    long_run = {**SCENARIO, "duration": "100ms", "flows": [{"src": 0, "dst": 2, "size": "100MB"}]}
    with pytest.raises(KeyboardInterrupt):
        ccsim.run(long_run, out=tmp_path / "r", progress=lambda *_: False)
    with pytest.warns(ccsim.ScenarioWarning, match="an interrupted run"):
        r = ccsim.load(tmp_path / "r")
    assert r.summary["partial"] is True
    assert r.summary["flows"]["finished"] == 0 and 0 < r.summary["sim_time_ps"] < 100e9
    assert len(r.flows) == 1 and r.flows["bytes_acked"][0] > 0
    # A complete run says nothing of the kind.
    assert "partial" not in ccsim.run(SCENARIO).summary


@pytest.mark.parametrize("threads", ["1", "2"])
def test_ctrl_c_during_a_run_keeps_the_partial_output(threads: str, tmp_path: Path) -> None:
    long_run = {**SCENARIO, "duration": "10s", "flows": [{"src": 0, "dst": 2, "size": "100GB"}]}
    (tmp_path / "long.toml").write_text(ccsim.to_toml(long_run), encoding="utf-8")
    proc = subprocess.Popen(
        interruptible_cli_command("run", "long.toml", "--out", "r", "--threads", threads),
        cwd=tmp_path,
        env=cli_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    # The directory appears once the scenario is valid, just before the engine starts.
    while not (tmp_path / "r").is_dir() and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted; what was measured until then is in r" in err
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["partial"] is True


def test_ctrl_c_after_the_run_finished_says_the_output_is_complete(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scenario_file: Path
) -> None:
    # The engine has written everything; Python is interrupted while building the frames.
    def finished_then_interrupted(*args: object, out: Path, **kwargs: object) -> None:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "summary.json").write_text('{"flows": {}}')
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "run", finished_then_interrupted)
    out = scenario_file.parent / "r"
    assert cli.main(["run", str(scenario_file), "--out", str(out)]) == 130
    err = capsys.readouterr().err.strip()
    assert (
        err == f"ccsim: error: interrupted; the run had finished: its complete output is in {out}"
    )


def test_ctrl_c_while_building_a_huge_topology_stops_it(tmp_path: Path) -> None:
    # A k = 96 fat-tree (221,184 hosts): routing takes about 25 s on one core (a search per
    # ToR), and must stop at Ctrl-C like the event loop does.
    link = {"rate": "100Gbps", "delay": "1us"}
    huge = {
        **SCENARIO,
        "topology": {"kind": "fat_tree", "k": 96, "host_link": link, "fabric_link": link},
    }
    (tmp_path / "huge.toml").write_text(ccsim.to_toml(huge), encoding="utf-8")
    proc = subprocess.Popen(
        interruptible_cli_command("validate", "huge.toml"),
        cwd=tmp_path,
        env=cli_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_until_building(proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("ccsim: error: interrupted"), err


def _wait_until_building(proc: subprocess.Popen[str]) -> None:
    """Wait until ``proc`` is past its imports and building the topology: its memory passes 1 GB
    (imports take about 150 MB; the k = 96 build grows to 1.5 GB, then routes for tens of
    seconds), so the interrupt lands there on a slow machine and a fast one alike."""
    status = Path(f"/proc/{proc.pid}/status")
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        if not status.exists():  # no /proc: the imports take well under 3 s
            time.sleep(3.0)
            return
        try:
            lines = status.read_text().splitlines()
        except OSError:  # it ended between the two looks
            return
        rss_kb = next((int(line.split()[1]) for line in lines if line.startswith("VmRSS:")), 0)
        if rss_kb > 1_000_000:
            return
        time.sleep(0.05)


def test_a_missing_cc_section_prints_one_warning(tmp_path: Path) -> None:
    no_cc = {k: v for k, v in SCENARIO.items() if k != "cc"}
    (tmp_path / "s.toml").write_text(ccsim.to_toml(no_cc), encoding="utf-8")
    res = ccsim_cli("run", "s.toml", "--out", "r", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert warnings[0].startswith("warning: cc: not given, so no congestion control runs")
    with pytest.warns(ccsim.ScenarioWarning, match="^cc: not given"):
        ccsim.validate(no_cc)


# --- commands that succeed -----------------------------------------------------------------------


def test_list_shows_dcqcn_and_every_built_in_cdf(tmp_path: Path) -> None:
    proc = ccsim_cli("list", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "dcqcn" in proc.stdout
    for cdf in ["websearch", "fb_hadoop", "cache_follower", "web_server", "data_mining"]:
        assert f"cdf:{cdf}" in proc.stdout
    assert "cdf:pcn_w1" in proc.stdout and "cdf:pcn_w2" in proc.stdout


def test_examples_describe_each_scenario_by_its_first_sentence(tmp_path: Path) -> None:
    out = ccsim_cli("examples", cwd=tmp_path).stdout
    # "Fig. 6" does not end a sentence.
    assert "RCC section V-B-1 (Fig. 6): four senders" in out
    assert not any(line.rstrip().endswith(("(Fig", "(Figs")) for line in out.splitlines())


def test_validate_prints_ok_and_name(scenario_file: Path, tmp_path: Path) -> None:
    proc = ccsim_cli("validate", str(scenario_file), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok: t"


def test_run_writes_default_results_dir(scenario_file: Path, tmp_path: Path) -> None:
    proc = ccsim_cli("run", str(scenario_file), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / "results" / "t"
    for name in ["flows.csv", "summary.json", "config.toml"]:
        assert (run_dir / name).is_file(), name
    assert "1/1 flows finished" in proc.stdout


def test_threads_give_the_same_bytes_for_every_count(tmp_path: Path) -> None:
    # A 4-to-1 incast on a star: every host a unit of the cut, so packets cross between
    # threads all the time; one thread (the single-threaded engine), 2 and 3 threads must
    # write the same files, and the same summary apart from `perf`.
    scenario = {
        **SCENARIO,
        "topology": {"kind": "star", "hosts": 5, "link": {"rate": "100Gbps", "delay": "1us"}},
        "cc": {"scheme": "dcqcn"},
        "flows": [{"src": s, "dst": 4, "size": "200KB", "start": f"{s}us"} for s in range(4)],
        "output": {"queues": {"ports": ["all"], "interval": "5us"}},
    }
    path = tmp_path / "par.toml"
    path.write_text(ccsim.to_toml(scenario), encoding="utf-8")
    outs = []
    for threads in ["1", "2", "3"]:
        out = tmp_path / f"t{threads}"
        proc = ccsim_cli("run", str(path), "--threads", threads, "--out", str(out), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        outs.append(out)
    summaries = [json.loads((o / "summary.json").read_text()) for o in outs]
    for out, other in zip(outs[1:], summaries[1:]):
        for name in ["flows.csv", "queues.csv", "pfc_events.csv", "rates.csv"]:
            assert (outs[0] / name).read_bytes() == (out / name).read_bytes(), name
        # `files` checksums config.toml, which holds `threads`; 3 threads on a 2-core machine
        # are warned about.
        skip = {"perf": None, "files": None, "warnings": None}
        assert {**other, **skip} == {**summaries[0], **skip}
    summary = summaries[1]
    assert summary["flows"]["finished"] == 4
    # One partition per thread unless the scenario says how many.
    assert summary["perf"]["parallel"]["partitions"] == 2
    assert summary["perf"]["parallel"]["threads"] == 2
    # The critical path is each window's slowest partition, summed, plus the serial time. A
    # window's slowest is below the sum of its partitions' times (every partition ran) and at
    # least their mean; summed over windows, the same holds of the run's partition work.
    sync = summary["perf"]["parallel"]
    slowest = sync["critical_path_s"] - sync["serial_s"]
    work = sync["partition_work_s"]
    assert 0 < slowest < work, sync
    assert slowest * sync["partitions"] >= work * (1 - 1e-9), sync
    assert work <= sum(sync["busy_s"]), sync
    assert "threads = 2" in (outs[1] / "config.toml").read_text()
    # A bad count is a usage error naming the flag; in the scenario, one naming the key.
    proc = ccsim_cli("run", str(path), "--threads", "0", cwd=tmp_path)
    assert proc.returncode == 2 and "--threads" in proc.stderr, proc.stderr
    proc = ccsim_cli("run", str(path), "--set", "threads=0", cwd=tmp_path)
    assert_one_line_error(proc, 2, "threads", "at least 1")


def test_a_run_with_other_settings_does_not_replace_the_first(
    scenario_file: Path, tmp_path: Path
) -> None:
    assert ccsim_cli("run", str(scenario_file), cwd=tmp_path).returncode == 0
    config = tmp_path / "results" / "t" / "config.toml"
    first = config.read_text()
    # By default a run with overrides (or another seed) gets a directory named after them.
    proc = ccsim_cli("run", str(scenario_file), "--set", "cc.scheme=hpcc", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "results in results/t-cc.scheme_hpcc" in proc.stdout
    assert 'scheme = "hpcc"' in (tmp_path / "results/t-cc.scheme_hpcc/config.toml").read_text()
    proc = ccsim_cli("run", str(scenario_file), "--seed", "7", "-q", cwd=tmp_path)
    assert proc.stdout.strip() == "results/t-seed_7", proc.stderr
    assert config.read_text() == first
    # An --out that holds a run of other settings is refused, named, and left alone.
    out = ["--out", "results/t"]
    proc = ccsim_cli("run", str(scenario_file), *out, "--set", "cc.scheme=hpcc", cwd=tmp_path)
    assert_one_line_error(proc, 2, "results/t", "other settings", "cc.scheme", "--force")
    assert config.read_text() == first
    # The same settings again replace the run (it is the same run); --force replaces any.
    assert ccsim_cli("run", str(scenario_file), cwd=tmp_path).returncode == 0
    proc = ccsim_cli(
        "run", str(scenario_file), *out, "--set", "cc.scheme=hpcc", "--force", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert 'scheme = "hpcc"' in config.read_text()


def test_the_python_api_runs_a_built_in_example_by_name(tmp_path: Path) -> None:
    r = ccsim.run("incast-16to1", overrides={"duration": "200us"})
    assert r.summary["name"] == "incast-16to1" and len(r.flows) == 16
    with pytest.raises(ccsim.ScenarioError, match="no built-in example of that name"):
        ccsim.run(str(tmp_path / "missing.toml"))


def test_run_result_tables(tmp_path: Path) -> None:
    r = ccsim.run(SCENARIO, out=tmp_path / "run")
    assert list(r.flows.columns[: len(FLOW_COLUMNS)]) == FLOW_COLUMNS
    assert {"start_us", "finish_us", "fct_us", "ideal_fct_us"} <= set(r.flows.columns)
    assert len(r.flows) == 1
    flow = r.flows.iloc[0]
    assert flow.fct_us == pytest.approx(flow.fct_ps / 1e6)
    for table in [r.pfc_events, r.pfc_ports, r.queues, r.rates]:
        assert ("time_us" in table.columns) == ("time_ps" in table.columns)
    assert r.summary["name"] == "t" and "perf" in r.summary
    assert r.out_dir == tmp_path / "run"

    loaded = ccsim.load(tmp_path / "run")
    assert list(loaded.flows.columns) == list(r.flows.columns)
    assert loaded.flows.fct_ps.tolist() == r.flows.fct_ps.tolist()


# --- pure Python: TOML writer, overrides, progress line -------------------------------------------


def test_to_toml_round_trips_through_tomllib() -> None:
    tomllib = pytest.importorskip("tomllib")
    data = {
        "name": 'quote " backslash \\ tab \t newline \n del \x7f é',
        "seed": -7,
        "ratio": 0.125,
        "tiny": 1e-300,
        "big": 1e300,
        "on": True,
        "sizes": [1, 2, 3],
        "mixed": [[1, 2], ["a"], []],
        "inline": [{"a": 1}, 2],
        "dotted.key": "needs quotes",
        "topology": {"kind": "star", "links": {"rate": "100Gbps"}, "empty": {}},
        "flows": [{"src": 0, "dst": 2, "opts": {"prio": 3}}, {"src": 1, "dst": 2}],
    }
    assert tomllib.loads(ccsim.to_toml(data)) == data
    assert tomllib.loads(ccsim.to_toml({"x": float("inf"), "y": float("-inf")})) == {
        "x": math.inf,
        "y": -math.inf,
    }
    assert math.isnan(tomllib.loads(ccsim.to_toml({"z": float("nan")}))["z"])


def test_to_toml_rejects_none() -> None:
    with pytest.raises(ccsim.ScenarioError, match="x: None has no TOML value"):
        ccsim.to_toml({"x": None})


def test_what_toml_cannot_hold_is_a_scenario_error_naming_the_key() -> None:
    scenario: dict = {"name": "x", "topology": {"kind": "star", "hosts": 2}}
    scenario["topology"]["me"] = scenario  # a dict that contains itself
    with pytest.raises(ccsim.ScenarioError, match="topology.me: contains itself"):
        ccsim.run(scenario)
    with pytest.raises(ccsim.ScenarioError, match="topology: key 3 is not a string"):
        ccsim.validate({"topology": {3: "star"}})
    with pytest.raises(ccsim.ScenarioError, match=r"flows.0.size: cannot write object"):
        ccsim.validate({"flows": [{"size": object()}]})


def test_override_dict_values_become_toml_literals() -> None:
    assert api._override_list({"cc.scheme": "dcqcn", "seed": 3, "pfc.on": False}) == [
        'cc.scheme="dcqcn"',
        "seed=3",
        "pfc.on=false",
    ]
    with pytest.raises(ccsim.ScenarioError, match="key=value"):
        api._override_list(["cc.scheme"])


def test_scenario_name_reads_only_the_top_level() -> None:
    assert api.scenario_name('seed = 1\nname = "a\\"b"\n[cc]\nname = "x"\n') == 'a"b'
    assert api.scenario_name('[cc]\nname = "x"\n') is None


def test_time_units() -> None:
    assert format_time_ps(999) == "999 ps"
    assert format_time_ps(1_000) == "1.00 ns"
    assert format_time_ps(200_000_000) == "200 us"
    assert format_time_ps(12_345_000_000_000) == "12.3 s"
    assert format_duration(3725) == "1h02m"


def test_progress_line_with_stop_time_shows_percent_and_eta() -> None:
    line = format_progress(2_500_000_000, 1_000_000, 10_000_000_000, elapsed_s=1.0)
    assert line == "sim 2.50 ms / 10.0 ms (25%)  1.00 M events/s  ETA 3.0s"


def test_progress_line_without_stop_time_has_no_eta() -> None:
    line = format_progress(2_500_000_000, 1_000_000, 0, elapsed_s=1.0)
    assert "ETA" not in line and "%" not in line


def test_progress_line_without_stop_time_estimates_from_the_flows() -> None:
    line = format_progress(2_000_000_000, 4_000_000, 0, 2.0, 30, 120)
    assert line.endswith("flows 30/120 (25%)  2.00 M events/s  ETA ~6.0s")


def test_progress_line_redraws_in_place_and_ends_with_newline() -> None:
    ticks = iter([0.0, 1.0, 1.05, 2.0])
    buf = io.StringIO()
    bar = ProgressLine(buf, min_interval_s=0.5, clock=lambda: next(ticks))
    bar(100_000_000, 1_000, 0)  # drawn at t=1.0
    bar(200_000_000, 2_000, 0)  # t=1.05: too soon, skipped
    bar(300_000_000, 3_000, 0)  # drawn at t=2.0
    bar.close()
    out = buf.getvalue()
    assert out.count("\r") == 2 and out.endswith("\n") and out.count("\n") == 1
    assert "200 us" not in out and "300 us" in out


def test_run_builds_once_and_leaves_no_directory_when_building_fails(tmp_path: Path) -> None:
    # A probe of a port that does not exist is found only by building the fabric: the run's one
    # build reports it, and the output directory the run would have made is not left behind.
    bad = dict(SCENARIO, output={"queues": {"interval": "1us", "ports": ["sw0->nowhere"]}})
    path = tmp_path / "bad.toml"
    path.write_text(ccsim.to_toml(bad), encoding="utf-8")
    ccsim.validate(path, build=False)  # the settings alone are fine
    with pytest.raises(ccsim.ScenarioError, match="output.queues.ports"):
        ccsim.validate(path)
    out = tmp_path / "out"
    proc = ccsim_cli("run", str(path), "--out", str(out))
    assert_one_line_error(proc, 2, "output.queues.ports[0]", "nowhere")
    assert not out.exists()


def test_a_small_run_imports_neither_pandas_nor_sweeps(tmp_path: Path, scenario_file: Path) -> None:
    code = (
        "import sys; from ccsim import cli; "
        f"assert cli.main(['run', {str(scenario_file)!r}, '--out', {str(tmp_path / 'o')!r}, '-q']) == 0; "
        "heavy = [m for m in ('pandas', 'pyarrow', 'matplotlib', 'ccsim.sweeps.driver') "
        "if m in sys.modules]; assert not heavy, heavy"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_probes_that_would_record_many_rows_warn_once() -> None:
    # Every switch port of a 3-host star every 10 ns over 50 ms: 1.5e7 rows, past 1e7.
    many = dict(
        SCENARIO, duration="50ms", output={"queues": {"interval": "10ns", "ports": ["all"]}}
    )
    with pytest.warns(
        ccsim.ScenarioWarning, match=r"output.queues.interval: would record about 1.5e7 rows"
    ):
        ccsim.validate(many)
    # The window counts: the same probe over its last 1 ms records 3e5 rows, no warning.
    few = dict(many, output={"queues": {"interval": "10ns", "ports": ["all"], "start": "49ms"}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ccsim.validate(few)
