"""Packet traces (``output.trace``): tshark reads the pcapng back, and its packets, bytes,
PAUSEs and CE marks per port are what the run's own tables count."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import ccsim
import pandas as pd
import pytest
from helpers import ccsim_cli, debian_tool

# 16 x 1 MB into one port under DCQCN: the switch marks CE at the bottleneck and pauses senders.
INCAST = {
    "name": "trace-incast",
    "topology": {"kind": "star", "hosts": 17, "link": {"rate": "100Gbps", "delay": "1us"}},
    "cc": {"scheme": "dcqcn"},
    "workload": [{"kind": "incast", "senders": 16, "receiver": 16, "size": "1MB", "at": "0us"}],
}
ALL = {"output.trace": {"ports": ["all", "h3->sw0"]}}


def read_trace(path: Path) -> pd.DataFrame:
    """One row per frame: its interface, length, the ccsim header's wire bytes, IP ECN, PFC."""
    lua = ccsim_cli("dissector").stdout.strip()
    fields = [
        "frame.interface_name",
        "frame.len",
        "ccsim.wire_bytes",
        "ip.dsfield.ecn",
        "macc.opcode",
        "macc.cbfc.pause_time.c3",
    ]
    cmd = [
        debian_tool("tshark", "tshark"),
        "-X",
        f"lua_script:{lua}",
        "-r",
        str(path),
        "-T",
        "fields",
        "-E",
        "separator=;",
    ]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300).stdout
    rows = [line.split(";") for line in out.splitlines()]
    df = pd.DataFrame(rows, columns=["port", "len", "wire", "ecn", "macc", "quanta"])
    num = lambda c: pd.to_numeric(df[c].replace("", None), errors="raise")
    df["bytes"] = num("wire").fillna(num("len"))
    df["ce"] = num("ecn") == 3
    df["pause"] = (df["macc"] == "0x0101") & (num("quanta") > 0)
    df["resume"] = (df["macc"] == "0x0101") & (num("quanta") == 0)
    return df


def test_trace_counts_what_the_run_counts(tmp_path: Path) -> None:
    r = ccsim.run(INCAST, overrides=ALL, out=tmp_path / "run")
    path = tmp_path / "run" / "trace.pcapng"
    assert path.read_bytes() == r.trace
    frames = read_trace(path)
    ports = r.pfc_ports.assign(name=lambda d: d["node"] + "->" + d["to_node"])
    traced = ports[(ports["layer"] != "host") | (ports["name"] == "h3->sw0")]
    per_port = frames.groupby("port").agg(
        n=("bytes", "size"),
        bytes=("bytes", "sum"),
        ce=("ce", "sum"),
        pauses=("pause", "sum"),
        resumes=("resume", "sum"),
    )
    assert set(per_port.index) <= set(traced["name"])
    for _, p in traced.iterrows():
        got = per_port.loc[p["name"]] if p["name"] in per_port.index else None
        assert (0 if got is None else got["bytes"]) == p["tx_bytes"], p["name"]
        assert (0 if got is None else got["pauses"]) == p["pauses_sent"], p["name"]
        assert (0 if got is None else got["resumes"]) == p["resumes_sent"], p["name"]
    # Only the bottleneck marks, so the CE frames leaving it are every mark of the run.
    bottleneck = per_port.loc["sw0->h16"]
    assert bottleneck["ce"] == ports["ecn_marked"].sum() > 100
    assert per_port["pauses"].sum() == ports["pauses_sent"].sum() > 0
    # Every data packet crossed the bottleneck once: 1000 packets per flow.
    data = frames[(frames["port"] == "sw0->h16") & (frames["len"] == "1048")]
    assert len(data) == 16 * 1000


def test_trace_window_and_limit(tmp_path: Path) -> None:
    window = {"output.trace": {"ports": ["sw0->h16"], "start": "10us", "stop": "20us"}}
    ccsim.run(INCAST, overrides=window, out=tmp_path / "w")
    frames = read_trace(tmp_path / "w" / "trace.pcapng")
    # 100G: one 1048 B packet per 83.84 ns, so ~119 frames leave in 10 us.
    assert 110 <= len(frames) <= 125
    assert set(frames["port"]) == {"sw0->h16"}
    capped = {"output.trace": {"ports": ["all"], "max_packets": 50}}
    with pytest.warns(ccsim.ScenarioWarning, match="max_packets = 50"):
        ccsim.run(INCAST, overrides=capped, out=tmp_path / "c")
    assert len(read_trace(tmp_path / "c" / "trace.pcapng")) == 50


def test_tracing_changes_no_result() -> None:
    plain = ccsim.run(INCAST)
    traced = ccsim.run(INCAST, overrides=ALL)
    assert plain.trace is None and traced.trace is not None
    for t in ("flows", "pfc_events", "pfc_ports"):
        pd.testing.assert_frame_equal(plain.table(t), traced.table(t))


@pytest.mark.parametrize(
    ("trace", "field"),
    [
        ({"ports": ["sw0->h99"]}, "output.trace.ports[0]"),
        ({"ports": ["sw0"]}, "output.trace.ports[0]"),
        ({"ports": ["all"], "start": "5us", "stop": "5us"}, "output.trace.stop"),
        ({"ports": ["all"], "max_packets": 0}, "output.trace.max_packets"),
        ({"ports": ["all"], "format": "erf"}, "format"),
    ],
)
def test_bad_trace_settings_name_the_field(trace: dict, field: str) -> None:
    with pytest.raises(ccsim.ScenarioError, match=field.replace("[", r"\[").replace("]", r"\]")):
        ccsim.run(INCAST, overrides={"output.trace": trace})


def test_a_sweep_refuses_a_trace(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    scen = tmp_path / "base.toml"
    scen.write_text(ccsim.api.to_toml({**INCAST, "output": {"trace": {"ports": ["all"]}}}))
    spec.write_text(f'name = "t"\nbase = "{scen.name}"\n[grid]\nseed = [1, 2]\n')
    proc = ccsim_cli("sweep", str(spec), "--out", str(tmp_path / "out"))
    assert proc.returncode != 0
    assert "output.trace: sweeps keep tables only" in proc.stderr
    assert 'unset = ["output.trace"]' in proc.stderr  # and says how to drop it
    # Dropped by --unset, by the sweep file's `unset`, or by None in Python: the runs go on
    # without a trace.
    proc = ccsim_cli("sweep", str(spec), "--out", str(tmp_path / "a"), "--unset", "output.trace")
    assert proc.returncode == 0, proc.stderr
    spec.write_text(spec.read_text().replace("[grid]", 'unset = ["output.trace"]\n[grid]'))
    proc = ccsim_cli("sweep", str(spec), "--out", str(tmp_path / "b"))
    assert proc.returncode == 0, proc.stderr
    runs = ccsim.sweep(scen, {"seed": [1]}, overrides={"output.trace": None}, out=tmp_path / "c")
    assert (runs["status"] == "ok").all()
    for out in ("a", "b", "c"):
        assert not list((tmp_path / out).rglob("trace.pcapng"))
        assert json.loads((tmp_path / out / "sweep.json").read_text())["unset"] == ["output.trace"]
    # A key that is not there is named, so a misspelt one does not pass silently.
    proc = ccsim_cli("run", str(scen), "--out", str(tmp_path / "d"), "--unset", "output.traec")
    assert proc.returncode == 2 and "--unset" in proc.stderr and "output.traec" in proc.stderr
    spec.write_text(spec.read_text().replace('unset = ["output.trace"]', 'unset = "output.trace"'))
    proc = ccsim_cli("sweep", str(spec), "--out", str(tmp_path / "e"))
    assert proc.returncode == 2 and "unset: expected a list" in proc.stderr


def test_the_resolved_trace_format_names_the_file_written() -> None:
    for asked in ({}, {"format": "pcapng"}, {"format": "pcap"}):  # "pcap": the first name
        trace = {"ports": ["all"], **asked}
        resolved = ccsim.validate(INCAST, overrides={"output.trace": trace})
        assert 'format = "pcapng"' in resolved


def test_a_directory_in_the_way_of_the_trace_is_named(tmp_path: Path) -> None:
    (tmp_path / "out" / "trace.pcapng").mkdir(parents=True)
    traced = {**INCAST, "output": {"trace": {"ports": ["all"]}}}
    with pytest.raises(ccsim.ScenarioError, match=r"trace\.pcapng`: Is a directory"):
        ccsim.run(traced, out=tmp_path / "out")


def test_stock_wireshark_parses_every_frame_without_the_plugin(tmp_path: Path) -> None:
    """Without ccsim's Lua dissector, tshark's own RoCEv2 dissector parses every frame: the
    IPv4 and UDP lengths count what the frame holds, the flow's queue pair is above the
    management QPs, and the frame ends with the invariant CRC."""
    ccsim.run(INCAST, overrides=ALL, out=tmp_path / "run")
    cmd = [debian_tool("tshark", "tshark"), "-r", str(tmp_path / "run" / "trace.pcapng")]
    cmd += ["-T", "fields", "-e", "_ws.col.Info", "-e", "_ws.expert"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300).stdout
    lines = out.splitlines()
    assert len(lines) > 1000
    # No malformed or invalid frame, and no expert note (the second field) on any.
    bad = [line for line in lines if "Malformed" in line or "Invalid" in line]
    bad += [line for line in lines if line.partition("\t")[2].strip()]
    assert not bad, bad[:5]
    assert sum("RC Send Middle" in line for line in lines) >= 16 * 1000
