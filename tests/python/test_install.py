"""A newcomer's path: the wheel, installed in a fresh venv, runs a paper experiment and a
built-in example from a directory outside the clone (the examples ship in the package)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_wheel_runs_examples_outside_the_clone(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, REPO], check=True
    )
    venv = tmp_path / "venv"
    # The venv sees the test environment's packages (pandas, ...), so nothing is downloaded:
    # a .pth file lists the site-packages folders on the test interpreter's path, whether it
    # runs in a venv (whose packages --system-site-packages would not show) or not. The venv's
    # own site-packages come first, so the ccsim it runs is the wheel's.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    py = venv / "bin" / "python"
    venv_site = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    parent_sites = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    Path(venv_site, "test-env.pth").write_text("\n".join(parent_sites) + "\n")
    ccsim = venv / "bin" / "ccsim"
    wheel = next(wheels.glob("ccsim-*.whl"))
    # pip comes from the test environment (through the .pth) and installs into the venv; it
    # leaves the test environment's own ccsim alone.
    subprocess.run(
        [py, "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", wheel], check=True
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run(
        [py, "-c", "import ccsim; print(ccsim.__file__)"],
        cwd=work,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert where.startswith(str(venv)), where

    def ccsim_cli(*args: str) -> subprocess.CompletedProcess[str]:
        r = subprocess.run([ccsim, *args], check=False, cwd=work, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r

    ccsim_cli("reproduce", "dcqcn-convergence", "--quick", "--workers", "1")
    assert (work / "results" / "dcqcn-convergence-quick" / "report.html").is_file()
    assert "incast-16to1" in ccsim_cli("examples").stdout
    ccsim_cli("run", "incast-16to1", "--quiet")
    summary = json.loads((work / "results" / "incast-16to1" / "summary.json").read_text())
    assert summary["flows"]["unfinished"] == 0
    ccsim_cli("examples", "--copy", "mine")
    assert (work / "mine" / "scenarios" / "flagship.toml").is_file()
    ccsim_cli("validate", "mine/scenarios/pcn/clos-w1.toml")
