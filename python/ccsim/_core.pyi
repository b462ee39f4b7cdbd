"""Type stub for ``ccsim._core``, the PyO3 binding of the Rust engine (crates/ccsim-py).

Hand-kept: when a binding signature changes, change it here in the same commit.
"""

from typing import Any, Callable, TypedDict

class ScenarioError(ValueError):
    """Invalid input; ``str()`` is one line naming the field and the fix."""

class SimulationError(RuntimeError):
    """The run reached an impossible state, e.g. a lossless-fabric violation (PFC headroom
    overflow); ``str()`` is one line saying where and which setting to change."""

class Tables(TypedDict):
    """Columnar tables: column name -> values. Times are integer picoseconds in ``*_ps``."""

    flows: dict[str, list[Any]]
    pfc_events: dict[str, list[Any]]
    pfc_ports: dict[str, list[Any]]
    queues: dict[str, list[Any]]
    flow_queues: dict[str, list[Any]]
    rates: dict[str, list[Any]]

class RunOutput(TypedDict):
    summary: str  # JSON text; only its "perf" object is non-deterministic
    config: str  # the fully resolved scenario as TOML, re-runnable
    tables: Tables

class SchemeInfo(TypedDict):
    description: str
    paper: str
    #: Bytes the scheme adds to every data packet and ACK on the wire (INT, timestamps).
    header_bytes: int
    params: dict[str, str]  # parameter name -> default, as text

class Catalog(TypedDict):
    schemes: dict[str, SchemeInfo]
    topologies: dict[str, str]
    workloads: dict[str, str]

def run(
    scenario: str,
    base_dir: str,
    seed: int | None,
    overrides: list[str],
    out_dir: str | None,
    progress: Callable[[int, int, int, int, int], bool | None] | None,
    progress_every_events: int,
    on_built: Callable[[list[str]], None] | None = None,
    allow_long: bool = False,
) -> RunOutput:
    """Run a scenario (TOML text); relative paths in it resolve against ``base_dir``.

    ``overrides`` are ``"dotted.key=value"`` (value a TOML literal, else a string).
    ``progress(sim_now_ps, events_processed, stop_ps, flows_done, flows_total)`` is called about every
    ``progress_every_events`` events (``stop_ps`` is 0 if the run stops only when flows finish);
    returning False cancels the run with KeyboardInterrupt, as does Ctrl-C. If ``out_dir`` is
    given the run directory is written there (CSV tables, summary.json, config.toml).
    Raises ScenarioError on bad input, an unwritable ``out_dir``, or a build estimate of over
    1e12 events unless ``allow_long``.
    """

def validate(
    scenario: str, base_dir: str, seed: int | None, overrides: list[str], build: bool = True
) -> tuple[str, list[str]]:
    """The fully resolved scenario as TOML, and its warnings (building it unless ``build`` is
    false); raises ScenarioError."""

def catalog() -> Catalog:
    """Schemes (description, paper, header bytes, parameter defaults), topologies and workloads."""

class Vocabulary(TypedDict):
    size_bins: list[tuple[str, str, int, int | None]]  # (family, label, lo, hi); hi None: no bound
    layers: list[str]  # "host", "tor", "agg", "core"
    tables: list[str]  # "flows", "pfc_events", "pfc_ports", "queues", "flow_queues", "rates"

def vocabulary() -> Vocabulary:
    """The engine's output vocabulary: FCT size bins (family ``acc`` or ``pcn``, label, lower
    bytes, upper bytes exclusive or None), smallest first within a family, as keyed in the
    summary's ``fct.<family>``; fabric layers, host first, as in the ``layer`` columns and the
    summary's ``pfc.by_layer``; the result tables' names, in output order."""

BENCHMARKS: list[str]
"""Built-in benchmark names: "incast" and "fattree" (DCQCN), "<name>-<scheme>" for others."""
MAX_PARTITIONS: int
"""The most partitions a parallel run cuts a fabric into (the scenario's ``partitions``)."""

def bench_scenario(name: str) -> str:
    """TOML text of a built-in benchmark scenario (one of ``BENCHMARKS``)."""
