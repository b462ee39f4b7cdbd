"""ccsim against the HPCC ns-3 simulator (tests/fidelity): the S1 10-to-1 incast for DCQCN, HPCC,
TIMELY and DCTCP, each metric within 10% of the simulator's output or, where the value is near
zero, within a stated absolute bound; and ``ccsim import-hpcc`` turning each shipped
configuration into exactly the scenario the comparison runs."""

from __future__ import annotations

from pathlib import Path

import ccsim
import pytest
from ccsim import fidelity
from ccsim.sweeps import SweepResult
from helpers import ccsim_cli

FIDELITY = Path(__file__).resolve().parents[1] / "fidelity"
SCENARIOS = FIDELITY / "scenarios"
REFERENCE = FIDELITY / "hpcc-ns3"
S1 = ("dcqcn", "hpcc", "timely", "dctcp")
# The bottleneck queue and per-sender throughput, sampled from the flows' start (2 s).
PROBES = [
    'output.queues={interval="10us", ports=["n11->h0"], start="2s"}',
    'output.rates={interval="100us", start="2s"}',
]
RELATIVE = 0.10
# Where the simulator's value is under NEAR_ZERO_KB, the queue is compared in absolute terms.
NEAR_ZERO_KB, ABSOLUTE_KB = 5.0, 0.5
# Gaps ccsim has today (strict: the test says so when one closes). HPCC's ten flows do not settle
# on a split within 6 ms in either simulator (Jain 0.93 there, 0.92 here): which flow finishes
# first and the slowest and fastest senders' rates move by 10-20% with any fabric detail (ns
# rounding of serialization and pacing, INT quantization, base RTT, the order of events at one
# instant), while its median and last FCT, queue and Jain agree. The slowest sender's rate came
# within 10% (6.91 Gb/s against 7.29; 5.72 before) with the canonical event order.
KNOWN_GAPS = {
    ("hpcc", "fct_min_us"): "HPCC's first flow to finish: 5422 us against 6187 (-12%)",
    ("hpcc", "tput_gbps_max"): "HPCC's fastest sender: 17.0 Gb/s against 15.4 (+11%)",
}
METRICS = [
    "fct_min_us",
    "fct_p50_us",
    "fct_max_us",
    "queue_kb 0-1ms",
    "queue_kb 1-2ms",
    "queue_kb 2-6ms",
    "tput_gbps_min",
    "tput_gbps_max",
    "jain",
    "pauses_to_hosts",
]


@pytest.fixture(scope="module")
def s1(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, float]]:
    """ccsim's S1 metrics per scheme (one run each, about a second)."""
    out = {}
    for scheme in S1:
        run_dir = tmp_path_factory.mktemp(scheme)
        scenario = SCENARIOS / f"S1-incast10to1-{scheme}.toml"
        res = ccsim.run(scenario, overrides=PROBES, out=run_dir)
        assert res.queues["time_ps"].min() == 2_000_010_000_000  # probes start at 2 s
        out[scheme] = fidelity.ccsim_run(SweepResult.from_run(res), scheme)
        # Wire bytes per 1000 B of payload, as the senders' NICs sent them (data only).
        senders = res.pfc_ports[
            (res.pfc_ports["layer"] == "host") & (res.pfc_ports["node"] != "h0")
        ]
        out[scheme]["wire_per_1000B"] = (
            1000 * senders["tx_bytes"].sum() / res.flows["size_bytes"].sum()
        )
        out[scheme]["wire_used_per_1000B"] = 1000 * fidelity.wire_per_payload_byte(
            SweepResult.from_run(res), scheme
        )
    return out


@pytest.mark.parametrize("scheme", S1)
def test_the_wire_size_used_for_throughput_is_the_engines(
    s1: dict[str, dict[str, float]], scheme: str
) -> None:
    """fidelity.wire_per_payload_byte turns acked payload into wire bytes; it must be what the
    engine puts on the wire, and what the simulator's README lists per 1000 B of payload."""
    simulator = {"dcqcn": 1048, "dctcp": 1048, "timely": 1056, "hpcc": 1090}[scheme]
    assert s1[scheme]["wire_used_per_1000B"] == pytest.approx(s1[scheme]["wire_per_1000B"])
    assert s1[scheme]["wire_used_per_1000B"] == pytest.approx(simulator)


def _cases() -> list:
    cases = []
    for scheme in S1:
        for metric in METRICS:
            why = KNOWN_GAPS.get((scheme, metric))
            marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
            cases.append(pytest.param(scheme, metric, marks=marks, id=f"{scheme}-{metric}"))
    return cases


@pytest.mark.parametrize(("scheme", "metric"), _cases())
def test_s1_agrees_with_the_hpcc_simulator(
    s1: dict[str, dict[str, float]], scheme: str, metric: str
) -> None:
    ref = fidelity.reference(REFERENCE / f"S1-incast10to1-{scheme}")[metric]
    got = s1[scheme][metric]
    if metric == "pauses_to_hosts" and ref == 0:
        assert got == 0
    elif metric.startswith("queue_kb") and ref < NEAR_ZERO_KB:
        assert abs(got - ref) <= ABSOLUTE_KB, f"{got:.3f} KB against {ref:.3f} KB"
    else:
        assert abs(got - ref) <= RELATIVE * ref, f"{got:.4g} against {ref:.4g}"


def test_the_reference_matches_its_readme() -> None:
    """The reference parser reads the simulator's files as its README summarizes them."""
    dcqcn = fidelity.reference(REFERENCE / "S1-incast10to1-dcqcn")
    assert (dcqcn["fct_min_us"], dcqcn["fct_p50_us"], dcqcn["fct_max_us"]) == pytest.approx(
        (8773, 9143, 9248), abs=1
    )
    assert dcqcn["queue_kb 2-6ms"] == pytest.approx(267, abs=1)
    assert dcqcn["jain"] == pytest.approx(0.998, abs=1e-3)
    assert fidelity.reference(REFERENCE / "S1-incast10to1-timely")["pauses_to_hosts"] == 146


@pytest.mark.parametrize("run", sorted(p.stem for p in SCENARIOS.glob("*.toml")))
def test_import_hpcc_reproduces_the_compared_scenario(run: str) -> None:
    config = next((REFERENCE / run).glob("config_*.txt"))
    proc = ccsim_cli("import-hpcc", str(config), cwd=SCENARIOS)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (SCENARIOS / f"{run}.toml").read_text()
    ccsim.validate(SCENARIOS / f"{run}.toml")


BAD_CONFIGS = [
    ("CC_MODE 1", "CC_MODE 10", "CC_MODE 10"),
    ("ERROR_RATE_PER_LINK 0.0000", "ERROR_RATE_PER_LINK 0.01", "ERROR_RATE_PER_LINK"),
    (
        "KMIN_MAP 2 100000000000 400 400000000000 1600",
        "KMIN_MAP 2 100000000000 400 400000000000 900",
        "KMIN_MAP",
    ),
    ("L2_ACK_INTERVAL 1", "L2_ACK_INTERVAL 4000", "L2_ACK_INTERVAL"),
    ("RATE_AI 20Mb/s", "RATE_AI fast", "RATE_AI"),
    ("RATE_AI 20Mb/s", "RATE_AI 20", "RATE_AI `20` is not a rate: write a number with"),
    ("EWMA_GAIN 0.00390625", "EWMA_GAIN fast", "EWMA_GAIN `fast` is not a number"),
]


@pytest.mark.parametrize(("line", "bad", "needle"), BAD_CONFIGS)
def test_import_hpcc_names_the_key_it_cannot_honour(
    tmp_path: Path, line: str, bad: str, needle: str
) -> None:
    folder = REFERENCE / "S1-incast10to1-dcqcn"
    text = (folder / "config_incast_topo_incast_flow_dcqcn.txt").read_text()
    assert line in text
    for f in folder.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    (tmp_path / "config.txt").write_text(text.replace(line, bad))
    proc = ccsim_cli("import-hpcc", "config.txt", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_import_hpcc_warns_of_what_it_does_not_honour(tmp_path: Path) -> None:
    folder = REFERENCE / "S1-incast10to1-hpcc"
    text = next(folder.glob("config_*.txt")).read_text()
    for f in folder.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    (tmp_path / "config.txt").write_text(text.replace("MULTI_RATE 0", "MULTI_RATE 1"))
    proc = ccsim_cli("import-hpcc", "config.txt", cwd=tmp_path)
    assert proc.returncode == 0
    assert "warning: not honoured: MULTI_RATE 1" in proc.stderr
    assert "#   MULTI_RATE 1" in proc.stdout
    assert "int_multi = 4" in proc.stdout  # INT_MULTI is honoured


def test_fct_txt_is_the_simulators_format(tmp_path: Path) -> None:
    # ccsim's S1 run written as fct.txt names the same flows as the simulator's: addresses,
    # ports, sizes and start times, line for line once sorted; FCTs within the S1 tolerance and
    # the ideal FCT (the simulator's definition) equal.
    scenario = SCENARIOS / "S1-incast10to1-dcqcn.toml"
    ccsim.run(scenario, overrides=['output.ideal_fct="hpcc"'], out=tmp_path / "run")
    proc = ccsim_cli("fct-txt", "run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    ours = [line.split() for line in (tmp_path / "run" / "fct.txt").read_text().splitlines()]
    ref_file = next((REFERENCE / "S1-incast10to1-dcqcn").glob("fct_*.txt"))
    theirs = [line.split() for line in ref_file.read_text().splitlines()]
    assert sorted(r[:6] for r in ours) == sorted(r[:6] for r in theirs)
    assert {r[7] for r in ours} == {r[7] for r in theirs}
    median = sorted(int(r[6]) for r in ours)[len(ours) // 2]
    assert median == pytest.approx(sorted(int(r[6]) for r in theirs)[len(theirs) // 2], rel=0.1)


def _config_copy(tmp_path: Path, run: str) -> str:
    folder = REFERENCE / run
    for f in folder.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    return next(folder.glob("config_*.txt")).read_text()


def test_import_hpcc_names_a_window_setting_it_does_not_honour(tmp_path: Path) -> None:
    text = _config_copy(tmp_path, "S1-incast10to1-hpcc")
    assert "HAS_WIN 1" in text
    (tmp_path / "config.txt").write_text(text.replace("HAS_WIN 1", "HAS_WIN 0"))
    proc = ccsim_cli("import-hpcc", "config.txt", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "warning: not honoured: HAS_WIN/VAR_WIN 0/" in proc.stderr


@pytest.mark.parametrize(("value", "nic_class"), [("0", 3), ("1", 0), ("7", 0)])
def test_import_hpcc_reads_ack_high_prio_as_a_flag(
    tmp_path: Path, value: str, nic_class: int
) -> None:
    text = _config_copy(tmp_path, "S1-incast10to1-dcqcn")
    line = next(x for x in text.splitlines() if x.startswith("ACK_HIGH_PRIO"))
    (tmp_path / "config.txt").write_text(text.replace(line, f"ACK_HIGH_PRIO {value}"))
    proc = ccsim_cli("import-hpcc", "config.txt", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"ack_priority = {nic_class}\n" in proc.stdout.split("[host]")[1]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "binary"])
def test_import_hpcc_reads_a_bom_and_names_other_encodings(tmp_path: Path, encoding: str) -> None:
    text = _config_copy(tmp_path, "S1-incast10to1-dcqcn")
    data = bytes(range(256)) * 8 if encoding == "binary" else text.encode(encoding)
    (tmp_path / "config.txt").write_bytes(data)
    proc = ccsim_cli("import-hpcc", "config.txt", cwd=tmp_path)
    if encoding == "utf-8-sig":
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode == 2
        assert "config.txt: not a text file (not UTF-8)" in proc.stderr
