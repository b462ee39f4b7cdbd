"""Read the HPCC ns-3 simulator's ``config.txt`` into a ccsim scenario (``ccsim import-hpcc``),
and write a run's flows as the simulator's ``fct.txt`` (``ccsim fct-txt``).

Every key of the simulator's ``run.py`` configurations is either mapped to a scenario field,
accepted because ccsim already behaves that way, reported as not honoured (a warning naming the
key and what ccsim does instead), or refused when the run would mean something else (an error
naming the key and the fix). The topology and flow files are found by name next to the
configuration or in the folders above it, as the simulator's ``mix/`` paths do not exist here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccsim import api
from ccsim.api import ScenarioError

# CC_MODE -> ccsim scheme (the simulator's rdma-hw.cc numbering).
SCHEMES = {1: "dcqcn", 3: "hpcc", 7: "timely", 8: "dctcp"}
# Window settings each scheme runs with in ccsim: (HAS_WIN, VAR_WIN).
WINDOWS = {"dcqcn": (0, 0), "timely": (0, 0), "hpcc": (1, 1), "dctcp": (1, 1)}
# The data class: the `pg` of every flow in the simulator's flow files, ccsim's default.
DATA_PRIORITY = 3
# Keys that only name the simulator's own output or tracing files.
OUTPUT_KEYS = {
    "TRACE_FILE",
    "TRACE_OUTPUT_FILE",
    "FCT_OUTPUT_FILE",
    "PFC_OUTPUT_FILE",
    "ENABLE_TRACE",
    "QLEN_MON_FILE",
    "QLEN_MON_START",
    "QLEN_MON_END",
}


@dataclass
class Imported:
    """The scenario (as a dict ready for ``api.to_toml``) and the keys ccsim does not honour."""

    scenario: dict[str, Any]
    not_honoured: list[str] = field(default_factory=list)


def read_config(path: Path) -> dict[str, list[str]]:
    """The simulator's ``KEY value ...`` lines as key -> value tokens (blank lines skipped)."""
    keys: dict[str, list[str]] = {}
    # Not UTF-8 (binary, UTF-16) is named by read_text; a UTF-8 byte-order mark is dropped.
    for n, line in enumerate(api.read_text(path).removeprefix("\ufeff").splitlines(), 1):
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        if len(tokens) < 2:
            raise ScenarioError(f"{path}:{n}: `{tokens[0]}` has no value; write `KEY value`")
        keys[tokens[0]] = tokens[1:]
    return keys


def import_config(path: Path, relative_to: Path) -> Imported:
    """The scenario of the simulator's configuration ``path``; file paths are written relative
    to ``relative_to`` (the folder the scenario will live in)."""
    cfg = read_config(path)
    out = Imported({})
    used: set[str] = set()

    def take(key: str, conv: Callable[[str], Any] = str) -> Any:
        if key not in cfg:
            raise ScenarioError(f"{path}: {key} is missing; the simulator's run.py always sets it")
        used.add(key)
        try:
            return conv(cfg[key][0])
        except ValueError:
            what = (
                "is not a rate: write a number with the simulator's unit, e.g. 20Mb/s"
                if conv is _rate
                else "is not a number"
            )
            raise ScenarioError(f"{path}: {key} `{cfg[key][0]}` {what}") from None

    def not_honoured(key: str, why: str, value: str | None = None) -> None:
        out.not_honoured.append(f"{key} {value or ' '.join(cfg[key])}: {why}")

    mode = take("CC_MODE", int)
    if mode not in SCHEMES:
        known = ", ".join(f"{k} ({v})" for k, v in SCHEMES.items())
        raise ScenarioError(f"{path}: CC_MODE {mode} has no ccsim scheme; ccsim imports {known}")
    scheme = SCHEMES[mode]
    s = out.scenario
    s["name"] = path.stem.removeprefix("config_")
    # The simulator's fabric details: ns serialization, PFC alpha per rate, 4 KiB reserve,
    # 3 x BDP headroom, payload base RTT.
    s["compat"] = "hpcc-sim"
    s["duration"] = f"{take('SIMULATOR_STOP_TIME', float):g}s"
    s["topology"] = {"kind": "hpcc", "path": _find(path, take("TOPOLOGY_FILE"), relative_to)}

    # The fabric: buffer, PFC, ECN.
    # BUFFER_SIZE is in MiB (third.cc: buffer_size * 1024 * 1024).
    fabric: dict[str, Any] = {"buffer": f"{take('BUFFER_SIZE', float):g}MiB"}
    if take("USE_DYNAMIC_PFC_THRESHOLD", int) != 1:
        raise ScenarioError(
            f"{path}: USE_DYNAMIC_PFC_THRESHOLD 0 is the simulator's fixed per-port threshold, "
            "which ccsim does not model; set it to 1 or write fabric.pfc by hand"
        )
    fabric["pfc"] = {"mode": "dynamic"}
    if take("ENABLE_QCN", int) != 1:
        raise ScenarioError(
            f"{path}: ENABLE_QCN 0 turns ECN marking off, which ccsim's schemes do not offer; "
            "set it to 1"
        )
    fabric["ecn"] = _ecn(path, cfg, used)
    s["fabric"] = fabric

    # Hosts: packet size, ACKs, ACK priority.
    host: dict[str, Any] = {"mtu_payload_bytes": take("PACKET_PAYLOAD_SIZE", int)}
    if take("L2_ACK_INTERVAL", int) != 1:
        raise ScenarioError(
            f"{path}: L2_ACK_INTERVAL {cfg['L2_ACK_INTERVAL'][0]} acks every so many bytes; "
            "ccsim acks every host.ack_every_packets packets: set it to 1, or set "
            "host.ack_every_packets by hand"
        )
    take("L2_CHUNK_SIZE")  # only moves ACKs when L2_ACK_INTERVAL > 1, refused above
    if take("L2_BACK_TO_ZERO", int) != 0:
        raise ScenarioError(
            f"{path}: L2_BACK_TO_ZERO 1 restarts a flow from byte 0 on a loss, which ccsim's "
            "lossless fabric never sees; set it to 0"
        )
    # ACK_HIGH_PRIO acts in the NIC only: the simulator's switches queue ACKs with data.
    # The simulator reads it as a flag: any value but 0 sends ACKs at the top priority.
    host["ack_priority"] = 0 if take("ACK_HIGH_PRIO", int) != 0 else DATA_PRIORITY
    fabric["ack_priority"] = DATA_PRIORITY
    s["host"] = host

    # The scheme and its parameters.
    s["cc"] = {"scheme": scheme, "params": _params(scheme, cfg, take)}
    has_win, var_win = take("HAS_WIN", int), take("VAR_WIN", int)
    take("GLOBAL_T", int)
    if (has_win, var_win) != WINDOWS[scheme]:
        not_honoured(
            "HAS_WIN/VAR_WIN",
            f"ccsim's {scheme} runs with HAS_WIN {WINDOWS[scheme][0]} VAR_WIN "
            f"{WINDOWS[scheme][1]}, its paper's setting",
            f"{has_win}/{var_win}",
        )
    if take("RATE_BOUND", int) != 1:
        not_honoured("RATE_BOUND", "ccsim always paces a flow at its rate")
    if take("ERROR_RATE_PER_LINK", float) != 0:
        raise ScenarioError(
            f"{path}: ERROR_RATE_PER_LINK {cfg['ERROR_RATE_PER_LINK'][0]}: ccsim's links do "
            "not corrupt packets; set it to 0"
        )
    if "LINK_DOWN" in cfg:
        used.add("LINK_DOWN")
        if any(float(x) != 0 for x in cfg["LINK_DOWN"]):
            raise ScenarioError(
                f"{path}: LINK_DOWN {' '.join(cfg['LINK_DOWN'])}: ccsim does not take links "
                "down during a run; set it to 0 0 0"
            )
    for key in ("INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK", "PINT_LOG_BASE", "PINT_PROB"):
        if key not in cfg:
            continue
        used.add(key)
        if key == "INT_MULTI" and scheme == "hpcc":
            s["cc"]["params"]["int_multi"] = take(key, int)
        elif key in ("MULTI_RATE", "SAMPLE_FEEDBACK") and cfg[key][0] != "0":
            not_honoured(key, "ccsim's HPCC keeps one rate and reads INT on every ACK")

    s["workload"] = [{"kind": "flow_file", "path": _find(path, take("FLOW_FILE"), relative_to)}]
    s["output"] = {"ideal_fct": "hpcc"}

    unknown = sorted(set(cfg) - used - OUTPUT_KEYS)
    for key in unknown:
        not_honoured(key, "not a key ccsim knows; ignored")
    return out


def _params(scheme: str, cfg: dict[str, list[str]], take: Callable[..., Any]) -> dict[str, Any]:
    """The scheme's parameters from the simulator's keys; the rest are marked used."""
    rate = _rate
    p: dict[str, Any] = {}
    dcqcn_keys = (
        "ALPHA_RESUME_INTERVAL",
        "RATE_DECREASE_INTERVAL",
        "CLAMP_TARGET_RATE",
        "RP_TIMER",
        "FAST_RECOVERY_TIMES",
    )
    if scheme == "dcqcn":
        p["g"] = take("EWMA_GAIN", float)
        p["alpha_timer"] = f"{take('ALPHA_RESUME_INTERVAL', float):g}us"
        p["rate_decrease_interval"] = f"{take('RATE_DECREASE_INTERVAL', float):g}us"
        p["clamp_target_rate"] = take("CLAMP_TARGET_RATE", int) == 1
        p["rate_increase_timer"] = f"{take('RP_TIMER', float):g}us"
        p["fast_recovery_steps"] = take("FAST_RECOVERY_TIMES", int)
        p["rate_ai"] = take("RATE_AI", rate)
        p["rate_hai"] = take("RATE_HAI", rate)
    elif scheme == "timely":
        p["rate_ai"] = take("RATE_AI", rate)
        p["rate_hai"] = take("RATE_HAI", rate)
    elif scheme == "hpcc":
        p["eta"] = take("U_TARGET", float)
        p["max_stage"] = take("MI_THRESH", int)
        p["rate_ai"] = take("RATE_AI", rate)
        p["fast_react"] = take("FAST_REACT", int) == 1
    elif scheme == "dctcp":
        p["g"] = take("EWMA_GAIN", float)
        p["rate_ai"] = take("DCTCP_RATE_AI", rate)
    p["min_rate"] = take("MIN_RATE", rate)
    # The other schemes' keys: present in every run.py configuration, unused by this scheme.
    for key in (*dcqcn_keys, "EWMA_GAIN", "RATE_AI", "RATE_HAI", "DCTCP_RATE_AI"):
        if key in cfg:
            take(key)
    for key in ("U_TARGET", "MI_THRESH", "FAST_REACT"):
        if key in cfg:
            take(key)
    return p


def _ecn(path: Path, cfg: dict[str, list[str]], used: set[str]) -> dict[str, Any]:
    """KMIN/KMAX/PMAX_MAP (``n rate value ...``, thresholds in KB) as ccsim's one set of
    thresholds scaled by link rate; refused when the maps are not proportional to the rate."""
    maps = {}
    for key in ("KMIN_MAP", "KMAX_MAP", "PMAX_MAP"):
        if key not in cfg:
            raise ScenarioError(f"{path}: {key} is missing; the simulator's run.py always sets it")
        used.add(key)
        tokens = cfg[key]
        try:
            n = int(tokens[0])
            pairs = [(int(tokens[1 + 2 * i]), float(tokens[2 + 2 * i])) for i in range(n)]
        except (ValueError, IndexError):
            raise ScenarioError(
                f"{path}: {key} `{' '.join(tokens)}`: write `n rate value` and n pairs"
            ) from None
        if not pairs:
            raise ScenarioError(f"{path}: {key} is empty; give at least one `rate value` pair")
        maps[key] = pairs
    ref_bps, kmin = maps["KMIN_MAP"][0]
    kmax = dict(maps["KMAX_MAP"]).get(ref_bps)
    pmax = dict(maps["PMAX_MAP"]).get(ref_bps)
    if kmax is None or pmax is None:
        raise ScenarioError(f"{path}: KMAX_MAP and PMAX_MAP must list the rates KMIN_MAP lists")
    for key, base in (("KMIN_MAP", kmin), ("KMAX_MAP", kmax)):
        for bps, value in maps[key]:
            want = base * bps / ref_bps
            if abs(value - want) > 1e-9 * max(1.0, want):
                raise ScenarioError(
                    f"{path}: {key} gives {value:g} KB at {bps} b/s; ccsim scales one threshold "
                    f"with the link rate ({want:g} KB there). Write fabric.ecn by hand"
                )
    for bps, value in maps["PMAX_MAP"]:
        if value != pmax:
            raise ScenarioError(
                f"{path}: PMAX_MAP gives {value:g} at {bps} b/s and {pmax:g} at {ref_bps} b/s; "
                "ccsim has one pmax"
            )
    return {
        "kmin": f"{kmin:g}KB",
        "kmax": f"{kmax:g}KB",
        "pmax": pmax,
        "ref_rate": f"{ref_bps / 1e9:g}Gbps",
    }


def _rate(text: str) -> str:
    """The simulator's ``20Mb/s`` as ccsim's ``20Mbps``."""
    for unit in ("Gb/s", "Mb/s", "Kb/s", "b/s"):
        if text.endswith(unit):
            float(text[: -len(unit)])  # a ValueError names the key in `take`
            return text[: -len(unit)] + unit.replace("b/s", "bps")
    raise ValueError(text)


def _find(config: Path, simulator_path: str, relative_to: Path) -> str:
    """The file the simulator calls ``simulator_path`` (e.g. ``mix/fat.txt``): by its name, next
    to the configuration or in a folder above it; as a path relative to ``relative_to``."""
    name = Path(simulator_path).name
    for folder in (config.parent, *config.parent.parents[:2]):
        if (folder / name).is_file():
            found = (folder / name).resolve()
            return Path(os.path.relpath(found, Path(relative_to).resolve())).as_posix()
    raise ScenarioError(
        f"{config}: {simulator_path}: no file `{name}` next to the configuration or in the two "
        "folders above it; put it there"
    )


# --- fct.txt --------------------------------------------------------------------------------------

# The simulator's flow files give every flow this destination port; source ports count up from
# FIRST_SPORT per source host, in the order flows start.
DPORT, FIRST_SPORT = 100, 10000


def hpcc_ip(node: int) -> str:
    """The simulator's IPv4 address of node ``node``, as the hex fct.txt writes."""
    return f"{0x0B000001 + (node // 256) * 0x10000 + (node % 256) * 0x100:08x}"


def fct_txt(flows: Any) -> str:
    """The finished sized flows of a run as the simulator's ``fct.txt``: per line, in the order
    flows finished, source and destination IP (hex), source and destination port, size (bytes),
    start, FCT and ideal FCT (ns). Hosts keep ccsim's numbers, which are the simulator's node
    numbers for its topology files (hosts first); the ideal FCT is the one the run's
    ``output.ideal_fct`` defines ("hpcc" is the simulator's)."""
    flows = flows.sort_values("id")
    sport = FIRST_SPORT + flows.groupby("src").cumcount()
    done = flows.assign(sport=sport)
    done = done[(done["finish_ps"] >= 0) & (done["size_bytes"] > 0)]
    lines = [
        f"{hpcc_ip(f.src)} {hpcc_ip(f.dst)} {f.sport} {DPORT} {f.size_bytes} "
        f"{f.start_ps // 1000} {f.fct_ps // 1000} {f.ideal_fct_ps // 1000}"
        for f in done.sort_values(["finish_ps", "id"]).itertuples()
    ]
    return "".join(line + "\n" for line in lines)
