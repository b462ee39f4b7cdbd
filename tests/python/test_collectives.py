"""Collective workloads from Python: the collectives table, DAG files and the plot."""

from __future__ import annotations

from pathlib import Path

import ccsim
import pytest
from ccsim import plots
from ccsim.dag import read_dag, write_dag
from ccsim.sweeps import SweepResult

STAR = {"kind": "star", "hosts": 8, "link": {"rate": "100Gbps", "delay": "1us"}}


def allreduce(**workload: object) -> dict:
    return {
        "name": "ar",
        "topology": STAR,
        "cc": {"scheme": "dcqcn"},
        "workload": [{"kind": "allreduce", "size": "1MB", **workload}],
    }


def test_each_iteration_is_a_row_measured_against_its_bandwidth_term(tmp_path: Path) -> None:
    r = ccsim.run(allreduce(iterations=3, gap="10us"), out=tmp_path / "r")
    c = r.collectives
    assert c.iteration.tolist() == [0, 1, 2]
    # 2(N-1)/N x 1 MB at 100 Gb/s.
    assert c.ideal_us.tolist() == [140.0] * 3
    assert (c.slowdown == c.completion_us / c.ideal_us).all()
    # Beyond the bandwidth term: 14 steps of 2 us of links and a packet at the switch, each
    # chunk's headers (4.8%) and the ACKs sharing its link (125 x 60 B): 186.3 us in all.
    step_us = (125_000 + 125 * 48 + 125 * 60) * 8 / 1e5 + 1048 * 8 / 1e5 + 2
    analytic_us = 14 * step_us + 2 * 60 * 8 / 1e5 + 2
    assert (abs(c.completion_us / analytic_us - 1) < 0.05).all(), c.completion_us
    # Each iteration starts at least the compute gap after the one before ended.
    ends = c.start_us + c.completion_us
    assert (c.start_us.iloc[1:].to_numpy() > ends.iloc[:-1].to_numpy() + 10 - 2.1).all()
    job = r.summary["collectives"]["0"]
    assert job["completed"] == 3 and job["kind"] == "allreduce_ring"
    assert job["completion_min_us"] <= job["completion_avg_us"] <= job["completion_max_us"]
    # The table is written with the run and loads back.
    assert ccsim.load(tmp_path / "r").collectives.completion_ps.tolist() == c.completion_ps.tolist()


def test_a_dag_written_from_python_runs_and_reads_back(tmp_path: Path) -> None:
    flows = [
        {"id": "left", "src": 0, "dst": 2, "size": "200KB"},
        {"id": "right", "src": 1, "dst": 2, "size": 100_000},
        {
            "id": "sum",
            "src": 2,
            "dst": 3,
            "size": "100KB",
            "after": ["left", "right"],
            "delay": "3us",
        },
    ]
    path = write_dag(tmp_path / "g.txt", flows)
    back = read_dag(path)
    assert back.id.tolist() == ["left", "right", "sum"]
    assert back.after.tolist() == [[], [], ["left", "right"]]
    assert back.delay.isna().tolist() == [True, True, False] and back.delay[2] == "3us"
    r = ccsim.run(
        {
            "topology": STAR,
            "cc": {"scheme": "dcqcn"},
            "workload": [{"kind": "dag", "path": str(path)}],
        }
    )
    f = r.flows
    # The last flow starts after both inputs, 3 us after the later one arrived.
    assert f.start_us[2] > max(f.start_us[0], f.start_us[1]) + 3
    with pytest.raises(ccsim.ScenarioError, match="one word"):
        write_dag(tmp_path / "bad.txt", [{"id": "a b", "src": 0, "dst": 1, "size": 1}])


def test_a_cycle_in_a_dag_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text("a 0 1 1KB b -\nb 1 0 1KB a -\n")
    scenario = {"topology": STAR, "workload": [{"kind": "dag", "path": str(path)}]}
    with pytest.raises(ccsim.ScenarioError, match=r"c\.txt: line \d: flow `[ab]` waits.*cycle"):
        ccsim.validate(scenario)


def test_the_collectives_plot_has_a_panel_per_job_with_its_ideal(tmp_path: Path) -> None:
    scenario = allreduce(iterations=2, hosts="0..3")
    scenario["workload"].append({"kind": "alltoall", "size": "50KB", "hosts": "4..7"})
    ccsim.run(scenario, out=tmp_path / "r")
    fig = plots.render(SweepResult.from_run(ccsim.load(tmp_path / "r")), "collectives")
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == [
        "job 0: allreduce_ring, 4 hosts",
        "job 1: alltoall, 4 hosts",
    ]
    # Ring on 4 hosts: 2 x 3/4 x 1 MB at 100G = 120 us; all-to-all: 3 x 50 KB = 12 us.
    ideal = [ax.get_lines()[-1].get_ydata()[0] for ax in axes]
    assert ideal == [120.0, 12.0]
