"""Where and when results were made, for the record a reproduced figure or a benchmark table
keeps beside its numbers: the date (UTC), ccsim's version, the git commit of its source tree and
the machine."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def provenance() -> dict[str, str]:
    """The date (UTC), ccsim's version, the git commit of its source tree (``+dirty`` with
    uncommitted changes to tracked files; "unknown" for an installed copy outside a checkout)
    and the machine (OS, architecture, cores)."""
    src = Path(__file__).parent

    def git(*args: str) -> str:
        try:
            proc = subprocess.run(
                ["git", "-C", str(src), *args],
                check=False,
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        return proc.stdout.strip() if proc.returncode == 0 else ""

    try:
        ccsim_version = version("ccsim")
    except PackageNotFoundError:  # a source tree that was never installed
        ccsim_version = "0+unknown"
    commit = git("rev-parse", "--short=12", "HEAD")
    if commit and git("status", "--porcelain", "--untracked-files=no"):
        commit += "+dirty"
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "ccsim": ccsim_version,
        "commit": commit or "unknown",
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores",
    }


def describe(made: dict[str, str] | None) -> str:
    """``made`` (from :func:`provenance`) as words, e.g. "2026-11-29, ccsim 0.1.0 at commit
    4dd23eb0c2a1, Linux x86_64, 2 cores"."""
    if not made:
        return "where and when not recorded"
    return f"{made['date']}, ccsim {made['ccsim']} at commit {made['commit']}, {made['machine']}"
