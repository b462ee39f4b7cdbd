"""Results that cannot silently lose data: each run records its files' sizes and CRC-32 in its
summary (written last), every reader checks them and names the file that is cut short, missing,
swapped or garbled, resume runs such a run again, interrupted runs say so in reports, and
outputs are written whole or not at all."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import ccsim
import pytest
from ccsim import api
from ccsim.api import ScenarioError
from helpers import ccsim_cli

SCEN = {
    "name": "integrity",
    "topology": {"kind": "star", "hosts": 5, "link": {"rate": "100Gbps", "delay": "1us"}},
    "cc": {"scheme": "dcqcn"},
    "workload": [{"kind": "incast", "senders": 4, "receiver": 4, "size": "200KB", "at": "0us"}],
    "output": {"queues": {"interval": "5us", "ports": ["all"]}},
}


def truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def garble(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))


@pytest.fixture()
def run_dirs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    ccsim.run(SCEN, out=a)
    ccsim.run(SCEN, seed=2, overrides={"workload.0.size": "100KB"}, out=b)
    return a, b


def test_a_run_records_its_files(run_dirs: tuple[Path, Path]) -> None:
    a, _ = run_dirs
    files = json.loads((a / "summary.json").read_text())["files"]
    assert set(files) == {f"{t}.csv" for t in api.TABLES} | {"config.toml"}
    flows = (a / "flows.csv").read_bytes()
    assert files["flows.csv"] == {**api.file_record(flows), "rows": 4}
    assert not list(a.glob(".tmp-*"))


@pytest.mark.parametrize("table", ["flows.csv", "pfc_ports.csv", "queues.csv", "config.toml"])
@pytest.mark.parametrize("damage", ["truncate", "delete", "swap", "garble"])
def test_every_reader_names_a_damaged_file(
    run_dirs: tuple[Path, Path], table: str, damage: str
) -> None:
    a, b = run_dirs
    path = a / table
    if damage == "truncate":
        truncate(path)
    elif damage == "delete":
        path.unlink()
    elif damage == "swap":
        shutil.copy(b / table, path)
    else:
        garble(path)
    with pytest.raises(ccsim.ScenarioError, match=str(path).replace("/", ".")):
        ccsim.load(a)
    for cmd in (["plot", str(a)], ["report", str(a)], ["fct-txt", str(a)]):
        proc = ccsim_cli(*cmd)
        assert proc.returncode == 2, (cmd, proc.stderr)
        assert table in proc.stderr and "run it again" in proc.stderr, (cmd, proc.stderr)


@pytest.mark.parametrize(
    "text",
    ['{"sim_time_ps": "soon"}', '{"name": "x"', "[1, 2]", "", '{"sim_time_ps": 1, "files": 3}'],
)
def test_a_garbled_summary_is_named(run_dirs: tuple[Path, Path], text: str) -> None:
    a, _ = run_dirs
    (a / "summary.json").write_text(text)
    with pytest.raises(ccsim.ScenarioError, match="summary.json"):
        ccsim.load(a)


def drop_records(d: Path) -> None:
    """Make ``d`` a run directory as a ccsim before file records wrote it."""
    summary = json.loads((d / "summary.json").read_text())
    del summary["files"]
    (d / "summary.json").write_text(json.dumps(summary))


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        ("truncate", "2 rows where the run's summary counts 4 flows"),
        ("delete", "missing where the run's summary counts 4 flows"),
        ("swap", "rows where the run's summary counts 4 flows"),
        ("garbage", "not a ccsim flows table .not UTF-8 text"),
        ("columns", "not a ccsim flows table .no column id, size_bytes"),
    ],
)
def test_a_run_without_records_is_checked_for_what_it_can_be(
    run_dirs: tuple[Path, Path], damage: str, said: str
) -> None:
    a, _ = run_dirs
    drop_records(a)
    assert len(ccsim.load(a).flows) == 4  # intact, it reads as before
    flows = a / "flows.csv"
    lines = flows.read_text().splitlines(keepends=True)
    if damage == "truncate":
        flows.write_text("".join(lines[:3]))
    elif damage == "delete":
        flows.unlink()
    elif damage == "swap":
        shutil.copy(a / "pfc_ports.csv", flows)
    elif damage == "garbage":
        flows.write_bytes(bytes(range(128, 256)) * 8)
    else:
        header = lines[0].replace("id,", "flow,", 1).replace("size_bytes", "bytes")
        flows.write_text("".join([header, *lines[1:]]))
    match = f"{flows}: .*{said}".replace("/", ".")
    with pytest.raises(ccsim.ScenarioError, match=match):
        ccsim.load(a)
    with pytest.raises(ccsim.ScenarioError, match=match):
        api.load_run(str(a))  # a str path, as a user passes it
    proc = ccsim_cli("fct-txt", str(a))
    assert proc.returncode == 2 and "flows.csv" in proc.stderr, proc.stderr
    assert "Error:" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("recorded", [True, False])
def test_a_table_too_large_for_its_run_is_refused_before_it_is_read(
    run_dirs: tuple[Path, Path], recorded: bool
) -> None:
    a, _ = run_dirs
    if not recorded:
        drop_records(a)
    with open(a / "flows.csv", "r+b") as f:
        f.truncate(3 << 30)  # 3 GiB, sparse: reading it would take half a minute
    said = "3221225472 bytes where the run wrote" if recorded else "3221225472 bytes, over the 8192"
    with pytest.raises(ccsim.ScenarioError, match=said):
        ccsim.load(a)


def test_a_summary_from_another_run_is_named_not_config_toml(
    run_dirs: tuple[Path, Path],
) -> None:
    a, b = run_dirs
    shutil.copy(b / "summary.json", a / "summary.json")
    with pytest.raises(ccsim.ScenarioError, match=r"summary.json: from another run"):
        ccsim.load(a)


def test_an_interrupted_run_says_so(tmp_path: Path) -> None:
    calls = []

    def stop_after_first(*args: object) -> bool:
        calls.append(args)
        return len(calls) < 2

    with pytest.raises(KeyboardInterrupt):
        ccsim.run(
            {**SCEN, "workload": [{**SCEN["workload"][0], "size": "100MB"}]},
            out=tmp_path / "r",
            progress=stop_after_first,
        )
    with pytest.warns(ccsim.ScenarioWarning, match="an interrupted run: partial results"):
        ccsim.load(tmp_path / "r")
    proc = ccsim_cli("report", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "r" / "report.html").read_text()
    assert "1 interrupted: partial results" in page and "interrupted (partial results)" in page


def sweep_files(tmp: Path) -> Path:
    (tmp / "base.toml").write_text(ccsim.to_toml(SCEN))
    (tmp / "s.toml").write_text('name = "s"\nbase = "base.toml"\n[grid]\nseed = [1, 2, 3]\n')
    return tmp / "s.toml"


def run_ids(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith("."))


@pytest.mark.parametrize(
    ("target", "damage"),
    [
        ("flows.parquet", truncate),
        ("queues.parquet", garble),
        ("config.toml", Path.unlink),
        ("summary.parquet", truncate),
        ("summary.json", truncate),
    ],
)
def test_a_damaged_sweep_run_is_named_and_run_again(
    tmp_path: Path, target: str, damage: object
) -> None:
    spec = sweep_files(tmp_path)
    out = tmp_path / "out"
    assert ccsim_cli("sweep", str(spec), "--out", str(out)).returncode == 0
    clean = ccsim.load(out).flows.copy()
    rid = run_ids(out)[1]
    damage(out / "runs" / rid / target)  # type: ignore[operator]
    with pytest.raises(ccsim.ScenarioError, match=f"{rid}.*{target}.*sweep again"):
        ccsim.load(out).flows  # noqa: B018
    proc = ccsim_cli("sweep", str(spec), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"run {rid} is damaged" in proc.stderr
    assert "2 runs already finished" in proc.stderr
    again = ccsim.load(out).flows
    assert again.equals(clean)


def test_a_deleted_sweep_run_is_reported_and_run_again(tmp_path: Path) -> None:
    spec = sweep_files(tmp_path)
    out = tmp_path / "out"
    assert ccsim_cli("sweep", str(spec), "--out", str(out)).returncode == 0
    shutil.rmtree(out / "runs" / run_ids(out)[0])
    with pytest.warns(ccsim.ScenarioWarning, match="1 of 3 runs are not in runs/"):
        assert len(ccsim.load(out).runs) == 2
    proc = ccsim_cli("report", str(out))
    assert "1 not run yet" in (out / "report.html").read_text(), proc.stderr
    (out / "sweep.json").write_text('{"name": "s", "ba')  # cut short: resume rewrites it
    proc = ccsim_cli("sweep", str(spec), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "sweep.json is unreadable" in proc.stderr
    assert len(ccsim.load(out).runs) == 3


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda out: (out / "sweep.json").write_text('{"name": "s", "ba'), "sweep.json: not JSON"),
        (lambda out: (out / "sweep.json").write_bytes(b"\xa8" * 64), "sweep.json: not a text file"),
        (
            lambda out: (out / "sweep.json").write_text('{"name": "s"}'),
            "sweep.json: not a ccsim sweep",
        ),
        (
            lambda out: (out / "sweep.json").write_text(
                json.dumps({**json.loads((out / "sweep.json").read_text()), "runs": [{}]})
            ),
            "sweep.json: a run without its `run_id`",
        ),
        (lambda out: shutil.rmtree(out / "runs"), "runs: none of the sweep's 3 runs is there"),
    ],
)
def test_a_damaged_sweep_directory_is_named(tmp_path: Path, damage: object, said: str) -> None:
    out = tmp_path / "out"
    assert ccsim_cli("sweep", str(sweep_files(tmp_path)), "--out", str(out)).returncode == 0
    damage(out)  # type: ignore[operator]
    with pytest.raises(ccsim.ScenarioError, match=said):
        ccsim.load(out)
    proc = ccsim_cli("report", str(out))
    assert proc.returncode == 2 and said.split(":")[0] in proc.stderr, proc.stderr
    assert "Error:" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_a_failed_write_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "report.html"
    api.write_atomic(path, "old")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        api.write_atomic(path, "new" * 1000)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_a_claim_that_cannot_be_evaluated_is_reported_beside_the_others() -> None:
    from ccsim import experiments as ex
    from ccsim.sweeps import SweepResult

    res = SweepResult.from_run(ccsim.run(SCEN))
    claims = [ex.Claim("divides by zero", "1 / 0 > 1"), ex.Claim("runs", "failed_runs() == 0")]
    verdicts = ex.check_claims(claims, res)
    assert [v.status for v in verdicts] == ["error", "holds"]
    assert "ZeroDivisionError" in verdicts[0].message


@pytest.mark.parametrize("where", ["scenario", "topology", "cdf", "flow_file"])
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_pipe_or_device_as_input_is_refused_not_read(
    tmp_path: Path, where: str, kind: str
) -> None:
    path = tmp_path / "input"
    if kind == "fifo":
        os.mkfifo(path)  # reading it would block forever
    else:
        path = Path("/dev/zero")  # reading it would never end
    scen: dict = {**SCEN}
    if where == "scenario":
        target: object = path
    elif where == "topology":
        target = {**scen, "topology": {"kind": "file", "path": str(path)}}
    elif where == "cdf":
        target = {
            **scen,
            "workload": [{"kind": "poisson", "cdf": str(path), "load": 0.3, "stop": "1ms"}],
        }
    else:
        target = {**scen, "workload": [{"kind": "flow_file", "path": str(path)}]}
    with pytest.raises(ccsim.ScenarioError, match="not a regular file"):
        ccsim.run(target)  # type: ignore[arg-type]


def test_a_very_slow_flow_is_not_a_stall() -> None:
    # 50 kb/s: one 1048 B packet every 168 ms, longer than the 100 ms stall watchdog.
    slow = {
        "name": "slow",
        "topology": {"kind": "star", "hosts": 2, "link": {"rate": "100Gbps", "delay": "1us"}},
        "cc": {"scheme": "none"},
        "flows": [{"src": 0, "dst": 1, "size": "3KB", "rate": "50kbps"}],
    }
    r = ccsim.run(slow)
    assert r.summary["flows"]["finished"] == 1
    assert r.flows["fct_us"].iloc[0] > 2 * 1048 * 8 / 50e3 * 1e6  # its third packet leaves at 2 x


# --- inputs that were accepted and did nothing ---------------------------------------------------

LOSSY = {"fabric.pfc.enabled": False, "fabric.loss": {"mode": "drop_tail", "queue_packets": 64}}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("xoff", "100KB"),
        ("mode", "dynamic"),
        ("alpha", 0.5),
        ("resume_offset", "6KB"),
        ("frame_bytes", 84),
        ("deadlock_after", "7ms"),
    ],
)
def test_a_pfc_key_on_a_lossy_fabric_is_an_error(key: str, value: object) -> None:
    with pytest.raises(
        ccsim.ScenarioError, match=rf"fabric\.pfc\.{key}: applies only to a lossless"
    ):
        ccsim.validate(SCEN, overrides={**LOSSY, f"fabric.pfc.{key}": value})


def test_a_lossy_runs_resolved_config_runs_again(tmp_path: Path) -> None:
    first = ccsim.run(SCEN, overrides=LOSSY, out=tmp_path / "a")
    again = ccsim.run(tmp_path / "a" / "config.toml")
    assert again.flows.equals(first.flows)


@pytest.mark.parametrize(
    ("recovery", "field"),
    [
        ({"mode": "go_back_n", "rto_low": "50us"}, "rto_low"),
        ({"mode": "go_back_n", "rto_low_packets": 5}, "rto_low_packets"),
        ({"mode": "irn", "rto": "1ms"}, "rto"),
    ],
)
def test_a_timeout_of_the_other_recovery_is_an_error(recovery: dict, field: str) -> None:
    with pytest.raises(ccsim.ScenarioError, match=rf"host\.recovery\.{field}: is .* does nothing"):
        ccsim.validate(SCEN, overrides={**LOSSY, "host.recovery": recovery})


def test_a_list_where_a_table_belongs_is_an_error() -> None:
    with pytest.raises(ccsim.ScenarioError, match="`cc` is a table"):
        ccsim.validate(SCEN, overrides=["cc=[]"])
    with pytest.raises(ccsim.ScenarioError, match=r"cc: must be a table"):
        ccsim.validate({**SCEN, "cc": []})


@pytest.mark.parametrize("probe", ["queues", "rates"])
def test_a_probe_that_stops_before_it_starts_is_an_error(probe: str) -> None:
    cfg = {"interval": "1us", "start": "10us", "stop": "5us"}
    if probe == "queues":
        cfg["ports"] = ["all"]
    with pytest.raises(ccsim.ScenarioError, match=rf"output\.{probe}\.stop: must be after start"):
        ccsim.validate(SCEN, overrides={f"output.{probe}": cfg})


@pytest.mark.parametrize("overrides", [[1, 2], 5, [("cc.scheme", "none")]])
def test_bad_overrides_are_named(overrides: object) -> None:
    with pytest.raises(ccsim.ScenarioError, match="override"):
        ccsim.run(SCEN, overrides=overrides)  # type: ignore[arg-type]


@pytest.mark.parametrize("workers", ["two", 0, True, 1.5])
def test_bad_worker_counts_are_named(workers: object, tmp_path: Path) -> None:
    with pytest.raises(ccsim.ScenarioError, match="workers: "):
        ccsim.sweep(SCEN, {"seed": [1]}, workers=workers, out=tmp_path)  # type: ignore[arg-type]


def test_claim_arithmetic_takes_numbers_only() -> None:
    from ccsim import experiments as ex
    from ccsim.sweeps import SweepResult

    res = SweepResult.from_run(ccsim.run(SCEN))
    claims = [ex.Claim("a huge text", "'x' * 100000000000 == 'y'")]
    verdict = ex.check_claims(claims, res)[0]
    assert verdict.status == "error" and "arithmetic takes numbers" in verdict.message


# --- extremes: a warning with the estimate, as memory_limit gives for memory ---------------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({**LOSSY, "host.recovery": {"rto": "1ps"}}, "host.recovery.rto = 1ps"),
        ({"cc.scheme": "acc_nohalt", "cc.params.period": "1ps"}, "cc.params.period = 1ps"),
    ],
)
def test_a_timer_under_a_packet_time_is_warned_of(overrides: dict, field: str) -> None:
    with pytest.warns(ccsim.ScenarioWarning, match=f"{field} is under one packet's time"):
        ccsim.validate(SCEN, overrides=overrides)


def test_a_flow_far_beyond_the_run_is_warned_of() -> None:
    huge = {"workload.0.size": "1000000GB"}  # 1 PB
    with pytest.warns(ccsim.ScenarioWarning, match="need over 10 times `duration`"):
        ccsim.validate(SCEN, overrides={**huge, "duration": "1ms"})
    with pytest.warns(ccsim.ScenarioWarning, match="packets to deliver and no `duration`"):
        ccsim.validate(SCEN, overrides=huge)


@pytest.mark.parametrize(
    ("overrides", "said"),
    [
        ({"workload.0.size": "1000000GB"}, "packets to deliver and no `duration`"),
        (
            {
                "fabric.pfc.enabled": False,
                "fabric.loss": {"mode": "drop_tail", "queue_packets": 100},
                "host.recovery": {"mode": "go_back_n", "rto": "1ps"},
                "workload.0.size": "1000000GB",  # each flow sends for the whole second
                "duration": "1s",
            },
            "host.recovery.rto = 1ps is under one packet's time",
        ),
    ],
)
def test_a_run_past_a_lifetime_is_refused_unless_allowed(
    overrides: dict, said: str, tmp_path: Path
) -> None:
    # 4 flows of 1 PB: 8e12 events; a 1 ps timer on 4 flows sending for 1 s: 4e12.
    refused = f"{said}.*Refused: the run needs some"
    with (
        pytest.warns(ccsim.ScenarioWarning, match=said),
        pytest.raises(ScenarioError, match=refused),
    ):
        ccsim.run(SCEN, overrides=overrides)
    calls: list[object] = []

    def stop(*args: object) -> bool:
        calls.append(args)
        return False

    with pytest.warns(ccsim.ScenarioWarning, match=said), pytest.raises(KeyboardInterrupt):
        ccsim.run(SCEN, overrides=overrides, allow_long=True, progress=stop)
    assert calls  # allowed, it ran until the callback stopped it
    (tmp_path / "s.toml").write_text(ccsim.to_toml(SCEN))
    sets = [f"{k}={api.inline_toml(v)}" for k, v in overrides.items()]
    args = [a for s in sets for a in ("--set", s)]
    proc = ccsim_cli("run", "s.toml", *args, cwd=tmp_path)
    assert proc.returncode == 2 and "--allow-long" in proc.stderr, proc.stderr
    assert not any((tmp_path / "results").iterdir())  # it left no run directory


def test_a_sweep_refuses_a_run_past_a_lifetime_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = {"workload.0.size": "1000000GB"}  # 4 flows of 1 PB, no duration: 8e12 events
    with pytest.warns(ccsim.ScenarioWarning):
        runs = ccsim.sweep(SCEN, {"seed": [1]}, overrides=huge, out=tmp_path / "a", workers=1)
    assert list(runs["status"]) == ["failed"]
    assert "Refused: the run needs some" in runs["error"][0] and "--allow-long" in runs["error"][0]
    # Allowed, each worker is told so (and would run until interrupted: not here).
    from ccsim.sweeps import driver

    sent = []

    def backend(jobs: list, workers: object, on_result: Callable) -> None:  # the local one's shape
        for job in jobs:
            sent.append(job.args())
            on_result(job, {"status": "failed", "error": "not run by this test"})

    monkeypatch.setattr(driver, "_run_local", backend)
    with pytest.warns(ccsim.ScenarioWarning):
        ccsim.sweep(SCEN, {"seed": [1]}, overrides=huge, out=tmp_path / "b", allow_long=True)
    assert [args[2] for args in sent] == [True]
    proc = ccsim_cli("sweep", "--help")
    assert "--allow-long" in proc.stdout


def test_an_out_dir_with_a_garbage_config_is_named(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(ccsim.to_toml(SCEN))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "config.toml").write_bytes(bytes(range(128, 256)))
    proc = ccsim_cli("run", "s.toml", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--out out: holds a config.toml that is not a run's" in proc.stderr, proc.stderr


def test_a_dag_file_that_is_not_text_is_named(tmp_path: Path) -> None:
    from ccsim.dag import read_dag

    (tmp_path / "g.dag").write_bytes(bytes(range(128, 256)))
    with pytest.raises(ScenarioError, match="g.dag: not a text file"):
        read_dag(tmp_path / "g.dag")


def test_an_fct_claim_reports_the_flows_it_leaves_out() -> None:
    from ccsim import experiments as ex
    from ccsim.sweeps import SweepResult

    # 40 us finishes a 10 KB flow but none of four 200 KB flows into one 100G port: they are
    # left out of the FCT.
    small = [{"src": 0, "dst": 3, "size": "10KB"}]
    res = SweepResult.from_run(ccsim.run({**SCEN, "flows": small, "duration": "40us"}))
    unfinished = res.runs["flows.unfinished"].iloc[0]
    assert unfinished > 0
    for check in ("fct_us('mean') > 0", "stat('fct.all.fct_avg_us') > 0"):
        verdict = ex.check_claims([ex.Claim("fct", check)], res)[0]
        extra = dict(verdict.measured)["unfinished flows (all runs)"]
        assert extra.startswith(f"{unfinished} of 5, ") and "GB delivered" in extra


def test_a_port_named_twice_is_refused_and_all_beside_a_port_probes_it_once() -> None:
    ports = ["sw0->h4", "sw0->h4"]
    with pytest.raises(
        ccsim.ScenarioError, match=r"ports\[1\]: `sw0->h4` is .*list each port once"
    ):
        ccsim.run(SCEN, overrides={"output.queues": {"interval": "5us", "ports": ports}})
    ports = ["all", "sw0->h4"]
    r = ccsim.run(SCEN, overrides={"output.queues": {"interval": "5us", "ports": ports}})
    assert not r.queues.duplicated(["time_ps", "link"]).any()
    assert "sw0->h4" in set(r.queues["link"])
