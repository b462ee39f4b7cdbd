"""Shared test helpers (tests import this module by name): the CLI in a fresh interpreter, and
the small sweep that the sweep, plot, report and experiment tests share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import ccsim

# A k=4 fat-tree (16 hosts, 100G everywhere) with WebSearch arrivals for 500 us plus one 8-to-1
# incast; ECN and PFC thresholds low enough that DCQCN reacts and, without CC, PFC pauses spread.
# Probes on every port and flow so every plot kind has data. About 0.1 s per run.
SWEEP_NAME = "fat-tree-websearch"
SWEEP_BASE: dict[str, Any] = {
    "name": SWEEP_NAME,
    "topology": {
        "kind": "fat_tree",
        "k": 4,
        "host_link": {"rate": "100Gbps", "delay": "1us"},
        "fabric_link": {"rate": "100Gbps", "delay": "1us"},
    },
    "fabric": {
        "pfc": {"xoff": "200KB"},
        "ecn": {"kmin": "40KB", "kmax": "160KB", "pmax": 0.2},
    },
    "cc": {"scheme": "dcqcn"},
    "workload": [
        {"kind": "poisson", "cdf": "websearch", "load": 0.5, "stop": "500us"},
        {"kind": "incast", "senders": 8, "size": "100KB", "at": "100us"},
    ],
    "output": {"queues": {"interval": "10us", "ports": ["all"]}, "rates": {"interval": "20us"}},
}
SWEEP_GRID: dict[str, list[Any]] = {
    "cc.scheme": ["dcqcn", "none"],
    "workload.0.load": [0.3, 0.8],
    "seed": [1, 2],
}


def ccsim_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m ccsim.cli ARGS`` in ``cwd`` and capture its output (never raises)."""
    return subprocess.run(
        cli_command(*args), cwd=cwd, env=cli_env(), check=False, capture_output=True, text=True
    )


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "ccsim.cli", *args]


def cli_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "CCSIM_DEBUG"}


def interruptible_cli_command(*args: str) -> list[str]:
    """`cli_command` for a process a test interrupts: the CLI with Python's Ctrl-C handler
    installed first. A suite started in the background by a script ignores SIGINT, its children
    inherit that, and Python then installs no KeyboardInterrupt handler of its own."""
    code = (
        "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "runpy.run_module('ccsim.cli', run_name='__main__', alter_sys=True)"
    )
    return [sys.executable, "-c", code, *args]


def write_sweep_files(tmp: Path, grid: dict[str, list[Any]] | None = None) -> Path:
    """The shared sweep as files (base scenario + sweep TOML) in ``tmp``; returns the sweep file.
    Its runs have the same ids and results as the ``sweep_dir`` fixture's."""
    (tmp / "base.toml").write_text(ccsim.to_toml(SWEEP_BASE), encoding="utf-8")
    sweep = {"name": SWEEP_NAME, "base": "base.toml", "grid": grid or SWEEP_GRID}
    path = tmp / "sweep.toml"
    path.write_text(ccsim.to_toml(sweep), encoding="utf-8")
    return path


def dataset_files(out: Path) -> dict[str, bytes]:
    """Every file of a sweep's results directory that must be reproducible, by relative path:
    all but each run's ``summary.json`` (its ``perf`` block is wall-clock) and the lock file."""
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name not in ("summary.json", ".lock")
    }


def debian_tool(package: str, *names: str) -> str:
    """The path of a program from Debian's ``package`` (the first of ``names`` found); without
    it the test fails under CI, whose .ci/run installs it, and is skipped elsewhere."""
    import shutil

    import pytest

    exe = next((shutil.which(n) for n in names if shutil.which(n)), None)
    if exe is None:
        message = f"{names[0]} is needed: apt-get install {package} (.ci/run does this)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return exe


def chromium() -> str:
    """Headless Chromium's path (see ``debian_tool``)."""
    return debian_tool("chromium", "chromium", "chromium-browser")


def screenshot(page: Path, tmp_path: Path, width: int = 1280, height: int = 1600) -> Any:
    """``page`` as headless Chromium draws it: an RGB array (height x width x 3, 0-1)."""
    import matplotlib.image

    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={width},{height}",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    rgb = matplotlib.image.imread(shot)[..., :3]
    assert rgb.shape[:2] == (height, width)
    return rgb
