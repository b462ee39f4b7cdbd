"""The built-in examples shipped with the package: scenarios (``scenarios/``), the paper
experiment catalog (``experiments/``), sweep files (``sweeps/``) and the HPCC ns-3
simulator's reference outputs (``fidelity/``), so that ``ccsim run flagship`` and ``ccsim
reproduce NAME`` work from any directory after ``pip install``. In a clone, the repository's
``scenarios/``, ``experiments/``, ``sweeps/`` and ``tests/fidelity/`` link here."""

from __future__ import annotations

import shutil
from pathlib import Path

from ccsim._core import ScenarioError

ROOT = Path(__file__).resolve().parent
SCENARIOS = ROOT / "scenarios"
EXPERIMENTS = ROOT / "experiments"
FOLDERS = ("scenarios", "experiments", "sweeps", "fidelity")


def scenario_names() -> list[str]:
    """Every built-in scenario, as the name ``ccsim run`` takes (``pcn/clos-w1``)."""
    return sorted(
        p.relative_to(SCENARIOS).with_suffix("").as_posix()
        for p in SCENARIOS.rglob("*.toml")
        if "topologies" not in p.relative_to(SCENARIOS).parts
    )


def find_scenario(arg: str) -> Path | None:
    """The built-in scenario ``arg`` names (with or without ``.toml``), if there is one."""
    name = arg.removesuffix(".toml").removeprefix("scenarios/")
    path = SCENARIOS / f"{name}.toml"
    return path if name in scenario_names() else None


def copy_to(dest: Path) -> list[Path]:
    """Copy the example folders (``FOLDERS``) into ``dest``, keeping their relative paths;
    refuses to overwrite an existing folder. Returns the folders written."""
    taken = [dest / f for f in FOLDERS if (dest / f).exists()]
    if taken:
        raise ScenarioError(
            f"--copy: {', '.join(map(str, taken))} already exists; choose another directory"
        )
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for f in FOLDERS:
        shutil.copytree(ROOT / f, dest / f, ignore=shutil.ignore_patterns("__pycache__"))
        written.append(dest / f)
    return written
