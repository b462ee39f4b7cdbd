"""End to end through the Python API and CLI: results as DataFrames, run directories that
re-run byte-identically, every example scenario valid, progress and cancel, and one-line errors
for every kind of bad input."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import ccsim
import pytest
from ccsim import bench
from helpers import ccsim_cli as cli

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p for p in (REPO / "scenarios").rglob("*.toml") if "topologies" not in p.parts)

INCAST = {
    "name": "incast8",
    "topology": {"kind": "star", "hosts": 9, "link": {"rate": "100Gbps", "delay": "1us"}},
    "cc": {"scheme": "dcqcn"},
    "workload": [{"kind": "incast", "senders": 8, "receiver": 8, "size": "200KB", "at": "0us"}],
    "output": {"queues": {"interval": "2us", "ports": ["sw0->h8"]}, "rates": {"interval": "5us"}},
}


def test_run_returns_dataframes_that_obey_conservation() -> None:
    r = ccsim.run(INCAST)
    assert len(r.flows) == 8
    assert (r.flows.bytes_acked == r.flows.size_bytes).all()
    assert r.summary["flows"]["payload_bytes_delivered"] == 8 * 200_000
    # FCT is at least the ideal, up to the ACK-vs-packet rounding of the ideal's base RTT.
    assert (r.flows.slowdown > 0.95).all()
    assert r.flows.fct_us.max() == pytest.approx(r.flows.fct_ps.max() / 1e6)
    assert set(r.queues.link) == {"sw0->h8"}
    assert r.queues.queue_bytes.max() > 0
    assert not r.rates.empty
    assert r.summary["pfc"]["pauses_sent"] == r.pfc_ports.pauses_sent.sum()


def test_engine_vocabulary_names_what_the_outputs_hold() -> None:
    from ccsim import api

    r = ccsim.run(INCAST)
    for family in ("acc", "pcn"):
        assert list(r.summary["fct"][family]) == sorted(api.size_bin_labels(family))
    assert api.size_bin_labels("acc") == ["<100KB", "100KB-10MB", ">10MB"]
    assert set(r.pfc_ports.layer) <= set(api.LAYERS) and api.LAYERS[0] == "host"
    assert set(r.summary["pfc"]["by_layer"]) <= set(api.LAYERS)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: str(p.relative_to(REPO)))
def test_example_scenarios_validate(path: Path) -> None:
    resolved = ccsim.validate(path)
    assert "[topology]" in resolved


def test_run_directory_is_deterministic_and_rerunnable(tmp_path: Path) -> None:
    scen = tmp_path / "s.toml"
    scen.write_text(ccsim.to_toml(INCAST))
    for out in ("a", "b"):
        proc = cli("run", str(scen), "--out", out, "--quiet", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    # Re-run from the resolved config written into the first run directory.
    proc = cli("run", "a/config.toml", "--out", "c", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == [
        "collectives.csv",
        "config.toml",
        "flow_queues.csv",
        "flows.csv",
        "halts.csv",
        "pfc_events.csv",
        "pfc_ports.csv",
        "queues.csv",
        "rates.csv",
        "summary.json",
    ]
    for other in ("b", "c"):
        for name in names:
            a, b = (tmp_path / "a" / name).read_bytes(), (tmp_path / other / name).read_bytes()
            if name == "summary.json":  # identical except the wall-clock block
                sa, sb = json.loads(a), json.loads(b)
                sa.pop("perf"), sb.pop("perf")
                assert sa == sb
            else:
                assert a == b, f"{other}/{name} differs"


def test_different_seed_changes_arrivals() -> None:
    base = {
        "topology": {"kind": "star", "hosts": 4, "link": {"rate": "100Gbps", "delay": "1us"}},
        "workload": [{"kind": "poisson", "cdf": "web_server", "load": 0.3, "stop": "50us"}],
    }
    a, b = ccsim.run(base, seed=1), ccsim.run(base, seed=2)
    assert not a.flows[["src", "dst", "start_ps"]].equals(b.flows[["src", "dst", "start_ps"]])


def test_progress_is_reported_and_can_cancel() -> None:
    calls: list[tuple[int, ...]] = []

    def record(*args: int) -> None:
        calls.append(args)

    ccsim.run(INCAST, progress=record)
    assert calls and len(calls[-1]) == 5
    now_ps, events, stop_ps, done, total = calls[-1]
    assert (stop_ps, done, total) == (0, 8, 8) and events > 0 and now_ps > 0
    with pytest.raises(KeyboardInterrupt):
        ccsim.run(
            {**INCAST, "duration": "5ms", "workload": [{**INCAST["workload"][0], "size": "5MB"}]},
            progress=lambda *a: False,
        )


def test_lossless_violation_is_one_line_and_nonzero(tmp_path: Path) -> None:
    bad = {**INCAST, "fabric": {"pfc": {"xoff": "20KB", "headroom": "2KB"}}}
    (tmp_path / "s.toml").write_text(ccsim.to_toml(bad))
    proc = cli("run", "s.toml", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "lossless violation" in lines[0] and "headroom" in lines[0]


BAD_INPUTS = [
    (["--set", "topology.colour=1"], "colour"),
    (["--set", "topology.link.rate=100GB"], "Gbps"),
    (["--set", "topology.link.delay=3"], "topology.link.delay: `3` has no unit"),
    (["--set", "topology.link.rate=0Gbps"], "> 0"),
    (["--set", "workload=[{kind='incast', senders=2, size=100, receiver=42, at='0us'}]"], "42"),
    (["--set", "topology.kind=fat_tree", "--set", "topology.k=5"], "topology"),
    (["--set", "cc.scheme=nope"], "cc.scheme"),
]


@pytest.mark.parametrize(("args", "needle"), BAD_INPUTS)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    (tmp_path / "s.toml").write_text(ccsim.to_toml(INCAST))
    proc = cli("validate", "s.toml", *args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert needle in lines[0]


def test_bad_cdf_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "bad.cdf").write_text("0 0\n1000 0.6\n500 0.8\n2000 1\n")
    scen = {
        **INCAST,
        "workload": [{"kind": "poisson", "cdf": "bad.cdf", "load": 0.5, "stop": "1ms"}],
    }
    (tmp_path / "s.toml").write_text(ccsim.to_toml(scen))
    proc = cli("run", "s.toml", cwd=tmp_path)
    assert proc.returncode == 2
    assert "bad.cdf: line 3: not monotone" in proc.stderr


def test_bench_reports_link_traversals(tmp_path: Path) -> None:
    proc = cli("bench", "--only", "incast", "--json", "--page", "bench.md", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout.strip().splitlines()[0])
    text = json.dumps(row)
    assert "traversals" in text and "events" in text
    # The documentation's page: the table, the command, and where and when it was measured.
    page = (tmp_path / "bench.md").read_text()
    assert "with `ccsim bench --only incast --json --page bench.md`" in page
    assert re.search(r"Measured \d{4}-\d\d-\d\d, ccsim \S+ at commit \S+, \S+ \S+, \d+ cores", page)
    assert bench.format_table([row]) in page


def test_bench_runs_a_list_of_thread_counts_and_gives_each_ones_speed_up() -> None:
    proc = cli("bench", "--only", "incast", "--threads", "1,2", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    assert [r["threads"] for r in rows] == [1, 2]
    assert "partitions" in rows[1] and "partitions" not in rows[0]
    # The same events on both: the run is one scenario, whatever the engine.
    assert rows[0]["link_traversals"] > 0
    # The table's speed-up is the one-thread wall time over the row's own.
    one = {"name": "b", "threads": 1, "wall_s": 3.0}
    two = {"name": "b", "threads": 2, "wall_s": 2.0, "partitions": 4}
    last = bench.format_table([one, two]).splitlines()[-1]
    assert last.endswith("1.50x"), last
    proc = cli("bench", "--only", "incast", "--threads", "1,0")
    assert proc.returncode == 2 and "--threads" in proc.stderr, proc.stderr


def test_bench_partitions_caps_the_cut_of_each_parallel_run() -> None:
    # The incast's star has a unit per host (11): one partition per thread by default, and
    # three when asked for.
    args = ("bench", "--only", "incast", "--threads", "2", "--json")
    rows = [json.loads(cli(*args).stdout), json.loads(cli(*args, "--partitions", "3").stdout)]
    assert [r["partitions"] for r in rows] == [2, 3]
    assert rows[0]["link_traversals"] > 0 and rows[1]["link_traversals"] > 0
    for bad in ("0", "17", "x"):
        proc = cli("bench", "--only", "incast", "--partitions", bad)
        assert proc.returncode == 2 and "--partitions" in proc.stderr, proc.stderr
    # On one thread nothing is cut: asking for partitions there is a mistake, said at once.
    proc = cli("bench", "--only", "incast", "--partitions", "2")
    assert proc.returncode == 2 and "--threads 1,2" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "module",
    [
        "ccsim.api",
        "ccsim.bench",
        "ccsim.progress",
        "ccsim.sweeps.spec",
        "ccsim.sweeps.store",
        "ccsim.sweeps.result",
        "ccsim.plots",
    ],
)
def test_docstring_examples_hold(module: str) -> None:
    import doctest
    import importlib

    failures, _ = doctest.testmod(importlib.import_module(module))
    assert failures == 0


def test_an_integer_toml_cannot_hold_names_its_key() -> None:
    scenario = {"topology": {"kind": "star", "hosts": 2**70, "link": {"rate": "100Gbps"}}}
    with pytest.raises(ccsim.ScenarioError, match=r"topology.hosts: 1180591620717411303424 does"):
        ccsim.validate(scenario)


EXAMPLES = sorted(
    p
    for p in (Path(__file__).resolve().parents[2] / "scenarios").rglob("*.toml")
    if p.parent.name != "topologies"
)


@pytest.mark.parametrize("scenario", EXAMPLES, ids=lambda p: p.stem)
def test_config_toml_repeats_the_run_from_any_directory(scenario: Path, tmp_path: Path) -> None:
    """A run directory's config.toml names its input files by absolute path, so re-running it
    from elsewhere gives byte-identical tables and summary (200 us of each example)."""
    first = cli("run", str(scenario), "--set", 'duration="200us"', "--out", "a", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    elsewhere = tmp_path / "x" / "y"
    elsewhere.mkdir(parents=True)
    again = cli("run", "../../a/config.toml", "--out", "../../b", cwd=elsewhere)
    assert again.returncode == 0, again.stderr
    a, b = tmp_path / "a", tmp_path / "b"
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
    for f in a.iterdir():
        if f.name == "summary.json":
            one, two = (json.loads(d.joinpath(f.name).read_text()) for d in (a, b))
            one.pop("perf"), two.pop("perf")
            assert one == two
        else:
            assert f.read_bytes() == (b / f.name).read_bytes(), f.name


def test_unresponsive_senders_send_their_first_rtt_and_ignore_grants() -> None:
    # AMRT's unresponsive senders (section VIII-D): with `responsive = 0.5` one of the two
    # senders (drawn per seed) answers its grants and fills the receiver's link; the other
    # sends its first RTT's data (one BDP of 100G) and nothing after.
    base = {
        "name": "deaf",
        "duration": "1ms",
        "topology": {"kind": "star", "hosts": 3, "link": {"rate": "100Gbps", "delay": "4us"}},
        "fabric": {"pfc": {"enabled": False}, "loss": {"mode": "drop_tail", "queue_packets": 128}},
        "cc": {"scheme": "amrt"},
        "workload": [{"kind": "long_lived", "pairs": [[0, 2], [1, 2]], "responsive": 0.5}],
    }
    first_rtt = 100e9 / 8 * 16e-6  # one base RTT (16 us) at line rate
    deaf_senders = set()
    for seed in (1, 2, 3):
        flows = ccsim.run(base, seed=seed).flows.sort_values("bytes_acked")
        assert flows["bytes_acked"].iloc[0] <= first_rtt
        assert flows["bytes_acked"].iloc[1] >= 0.9 * 100e9 / 8 * 1e-3 * 1000 / 1048  # the link
        deaf_senders.add(int(flows["src"].iloc[0]))
    assert deaf_senders == {0, 1}  # which one is drawn per seed
    both = ccsim.run({**base, "workload": [{**base["workload"][0], "responsive": 1.0}]})
    assert both.flows["bytes_acked"].min() > 10 * first_rtt  # both answer their grants
    with pytest.raises(ccsim.ScenarioError, match=r"workload\[0\]\.responsive: a share"):
        ccsim.validate({**base, "workload": [{**base["workload"][0], "responsive": 1.5}]})


def test_more_threads_than_partitions_are_said_to_be_idle() -> None:
    tree = {
        "name": "ft",
        "topology": {
            "kind": "fat_tree",
            "k": 4,
            "host_link": {"rate": "100Gbps", "delay": "1us"},
            "fabric_link": {"rate": "100Gbps", "delay": "1us"},
        },
        "cc": {"scheme": "none"},
        "threads": 64,
        "flows": [{"src": 0, "dst": 15, "size": "10KB"}],
    }
    seen_at_progress: list[int] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ccsim.run(tree, progress=lambda *_: seen_at_progress.append(len(caught)))
    # Said once, and as the build found it: before the run's first progress report.
    notes = [str(w.message) for w in caught if "64 asked" in str(w.message)]
    assert len(notes) == 1 and "cut into 4 partitions" in notes[0]
    assert seen_at_progress and seen_at_progress[0] >= 1
