"""Scenario files: an experiment described as data (`experiments/scenarios/<name>.toml`), parsed into frozen dataclasses.

    [scenario]                      # what the scenario is
    name = "size-sweep"             # default: the file's stem
    description = "..."
    repetitions = 3                 # runs of every point (interleaved)
    seed = 1                        # input seed of repetition r is seed + r
    timeout_s = 120                 # bound on one run's workers

    [network]
    engine = "mininet"              # or "sim": the packet-level virtual-time network (topo.sim, docs/simulator.md)
    topology = "star"               # or (engine = "sim") "two-tier": racks under the PS's rack switch, or
                                    # "leaf-spine": the racks' leaves and the PS's leaf under spines
    racks = 4                       # two-tier, leaf-spine: racks (1..32), the workers spread evenly over them
    spines = 2                      # leaf-spine: spines (1..64), each linked to every leaf
    levels = 2                      # ATP: 2 (racks, then the PS's switch) or 1 (the PS's switch)
    uplink_mbps = 400000            # two-tier, leaf-spine: the links between switches (default bw_mbps)
    bw_mbps = 10                    # link rate (htb); "auto": calibrated to the switch and the hosts
                                    # (experiments.calibrate); omit for unlimited veth links
    target = "embedded"             # or "bmv2"
    pool_size = 64                  # SwitchML slots of the job
    window = 64                     # INA packets in flight per worker; omit for the protocol's default
    window_control = "fixed"        # SwitchML: every slot in flight, or "adaptive": rate x (min RTT + 5 ms)
                                    # (SwitchML: pool_size up to 64, ATP: 32)
    cpus = "split"                  # the switch on a CPU of its own, the hosts on the others; or "shared"

    [sim]                           # engine = "sim" only: the model's parameters (topo.sim)
    delay_us = 1                    # propagation delay per link
    buffer_kib = 1024               # output queue per port (omit: unbounded)
    ecn_kib = 100                   # ECN marking threshold (omit: none)
    service_ns = 0                  # the switch's time per packet (0: line rate, an ASIC)
    host_cost_ns = 0                # a host's time per frame sent or received
    host_cpus = 1                   # CPUs the hosts share (omit: one each; the emulator pins them all to one)
    compute_ms = 0                  # every worker's computation before the all-reduce
    overhead_bytes = 24             # wire bytes per frame beyond it (preamble, FCS, gap; 0 as htb counts)
    shaper = "wire"                 # or "htb": links as the emulator's (htb's 1,600 B ceil bucket before a veth:
                                    # frames spaced at the rate, delivered with no serialisation delay)
    dask = false                    # fan the points out over a Dask cluster (--cluster ADDRESS, else a local one)

    [recovery]                      # the in-network workers' loss recovery, as `python -m worker` takes it
    timeout_ms = 1                  # initial per-packet timeout (default 1000, RFC 6298's; the RTO once measured)
    fixed_timeout = true            # every packet waits timeout_ms (no adaptive RTO): a paper's published timer
    min_timeout_ms = 20             # floor of the adaptive RTO's variance term (default 20)
    max_timeout_ms = 1000           # cap of the RTO and its backoff (default 1000)
    backoff = 1                     # a timeout retransmission's timeout times this (default 2)
    fast_retransmit = 0             # retransmit once K later packets were answered (default 3; 0: timeouts only)

    [sweep]                         # every list is an axis; the runs are the product of the axes
    protocols = ["switchml", "ring", "ps"]
    workers = [4, 8]
    sizes = [256, 65536]            # elements (or sizes_kib = [1, 256]: KiB of float32/int32 data)
    dtype = "float32"
    loss = [0.0]                    # drop probability per worker port and direction (P4 drop simulator)
    straggler_ms = [0]              # extra compute time of the last rank
    background_mbps = [0]           # a competing UDP flow (iperf3) h1 -> h2 at this rate; 0: none
    sparsity = [0.0]                # fraction of 64-element blocks all zero in each worker's tensor (drawn
                                    # per worker; worker.verify.rank_input)
    overlap = [0.0]                 # probability that a block's zero/non-zero draw is one all workers share
                                    # instead of their own (0: independent; 1: the same zero blocks everywhere)

    [report]
    x = "size"                      # the axis on the plots' x axis: size, workers, loss, straggler_ms, background_mbps,
                                    # sparsity, overlap

Every key is checked: an unknown key or a bad value raises `ScenarioError` naming the file and the key. The
simulator takes up to `SIM_MAX_WORKERS` workers on a star and `TWO_TIER_MAX_WORKERS` on two tiers or leaf-spine (32
racks of 32: ATP's two 32-bit bitmaps; one level: 32), links up to 1.6 Tbit/s; Mininet up to 32 workers and 100
Gbit/s, on the star (its two-tier network: `make twolevel`). The networks of several switches run the programs that
aggregate on two levels (ATP) and the host baselines."""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topo.cpus import CPU_LAYOUTS
from worker.driver import WindowOptions, timeouts
from worker.protocols import PROTOCOLS

__all__ = ["Scenario", "RunPoint", "ScenarioError", "SimModel", "load_scenario", "AXES", "ENGINES", "SIM_MAX_WORKERS",
           "TOPOLOGIES", "TWO_TIER_MAX_WORKERS"]

ENGINES = ("mininet", "sim")
SIM_MAX_WORKERS = 510
"""Workers of one star in the simulator: a v1model egress port has 9 bits and port 511 drops."""
TOPOLOGIES = ("star", "two-tier", "leaf-spine")
"""The simulator's networks: one switch; rack switches under the PS's rack switch (topo.twotier); leaves and the PS's
leaf under spines (topo.leafspine)."""
TWO_TIER_MAX_WORKERS = 1024
"""Workers of the simulator's two-tier network: 32 racks (ATP's rack bitmap) of 32 (its worker bitmap)."""

AXES = ("size", "workers", "loss", "straggler_ms", "background_mbps", "sparsity", "overlap")
"""Swept quantities a report can put on its x axis."""


class ScenarioError(ValueError):
    """A scenario file is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class RunPoint:
    """One point of the sweep (run `repetitions` times)."""

    protocol: str
    workers: int
    size: int
    loss: float
    straggler_ms: float
    background_mbps: float
    sparsity: float = 0.0
    """Fraction of 64-element blocks that are all zero in each worker's input (`worker.verify.rank_input`)."""
    overlap: float = 0.0
    """Probability that a block's zero/non-zero draw is one all workers share instead of their own
    (`worker.verify.rank_input`'s `overlap`)."""

    def value(self, axis: str) -> float:
        return float(getattr(self, axis))


@dataclass(frozen=True)
class Recovery:
    """The [recovery] section: the in-network workers' loss recovery (None: the worker's default), for the
    emulator's workers (`worker_args`) and the simulator's cores (`window_options`) alike."""

    timeout_ms: float | None = None
    min_timeout_ms: float | None = None
    max_timeout_ms: float | None = None
    fixed_timeout: bool = False
    backoff: float | None = None
    fast_retransmit: int | None = None

    def worker_args(self) -> tuple[str, ...]:
        """`python -m worker` options."""
        args: list[str] = []
        for key in ("timeout_ms", "min_timeout_ms", "max_timeout_ms", "backoff", "fast_retransmit"):
            v = getattr(self, key)
            if v is not None:
                args += [f"--{key.replace('_', '-')}", f"{v:g}"]
        return (*args, *(["--fixed-timeout"] if self.fixed_timeout else []))

    def window_options(self, window: int | None = None) -> WindowOptions:
        """The window options a worker given `worker_args()` runs with."""
        timeout, floor, cap = timeouts(self.timeout_ms, self.min_timeout_ms, self.max_timeout_ms)
        extra = {k: v for k, v in (("fast_retransmit", self.fast_retransmit), ("backoff", self.backoff))
                 if v is not None}
        return WindowOptions(window=window, timeout=timeout, min_timeout=floor, max_timeout=cap,
                             adaptive=not self.fixed_timeout, **extra)

    def describe(self) -> str:
        """In words, for a report ("" when every default holds)."""
        if self == Recovery():
            return ""
        o = self.window_options()
        timer = (f"a fixed {o.timeout * 1e3:g} ms timeout" if self.fixed_timeout else
                 f"an adaptive RTO (initial {o.timeout * 1e3:g} ms, variance floor {o.min_timeout * 1e3:g} ms)")
        fast = f"fast retransmit after {o.fast_retransmit}" if o.fast_retransmit else "no fast retransmit"
        return f"{timer}, backoff x{o.backoff:g}, capped at {o.max_timeout * 1e3:g} ms, {fast}"


SHAPERS = ("wire", "htb")
"""How a simulated link paces frames: a wire that serialises them, or the emulator's htb shaper (topo.sim.links)."""


@dataclass(frozen=True)
class SimModel:
    """The [sim] section: the packet simulator's model parameters (topo.sim.network)."""

    delay_us: float = 1.0
    buffer_kib: float | None = None
    ecn_kib: float | None = None
    service_ns: float = 0.0
    host_cost_ns: float = 0.0
    host_cpus: int | None = None
    compute_ms: float = 0.0
    overhead_bytes: int = 24
    shaper: str = "wire"
    dask: bool = False


@dataclass(frozen=True)
class Scenario:
    """A parsed, validated scenario file."""

    name: str
    path: Path
    description: str = ""
    repetitions: int = 3
    seed: int = 1
    timeout_s: float = 120.0
    engine: str = "mininet"
    """Where the runs happen: "mininet" (real time, processes) or "sim" (virtual time, topo.sim)."""
    sim: SimModel = SimModel()
    topology: str = "star"
    racks: int = 1
    """two-tier: rack switches under the PS's rack switch; leaf-spine: the workers' leaves."""
    spines: int = 2
    """leaf-spine: spines, each linked to every leaf."""
    levels: int = 2
    """two-tier, leaf-spine: ATP's aggregation levels."""
    uplink_mbps: float | None = None
    """two-tier, leaf-spine: the rate of the links between switches (None: bw_mbps)."""
    bw_mbps: float | str | None = None
    """Mbit/s per link; "auto" until `experiments.calibrate` chose the rate (then `calibration` says how)."""
    calibration: tuple[str, ...] = ()
    """With bw_mbps = "auto": each protocol's calibration probe, in words (summary.md's Method)."""
    target: str = "embedded"
    pool_size: int = 64
    window: int | None = None
    window_control: str = "fixed"
    """INA packets in flight per worker (None: the protocol's default)."""
    cpus: str = "split"
    """CPU layout of the switch and the hosts (topo.cpus)."""
    protocols: tuple[str, ...] = tuple(p.name for p in PROTOCOLS.values() if not p.needs_ps)
    workers: tuple[int, ...] = (4,)
    sizes: tuple[int, ...] = (65536,)
    dtype: str = "float32"
    loss: tuple[float, ...] = (0.0,)
    straggler_ms: tuple[float, ...] = (0.0,)
    background_mbps: tuple[float, ...] = (0.0,)
    sparsity: tuple[float, ...] = (0.0,)
    overlap: tuple[float, ...] = (0.0,)
    x: str = "size"
    recovery: Recovery = Recovery()

    def runs(self) -> list[RunPoint]:
        """Every point of the product of the axes, algorithms innermost (so that they interleave)."""
        return [RunPoint(a, n, s, loss, st, bg, sp, ov) for n, s, loss, st, bg, sp, ov, a in itertools.product(
            self.workers, self.sizes, self.loss, self.straggler_ms, self.background_mbps, self.sparsity, self.overlap,
            self.protocols)]


_SECTIONS: dict[str, set[str]] = {
    "scenario": {"name", "description", "repetitions", "seed", "timeout_s"},
    "network": {"engine", "topology", "racks", "spines", "levels", "uplink_mbps", "bw_mbps", "target", "pool_size", "window",
                "window_control", "cpus"},
    "sweep": {"protocols", "algos", "workers", "sizes", "sizes_kib", "dtype", "loss", "straggler_ms", "background_mbps",
              "sparsity", "overlap"},
    "report": {"x"},
    "sim": {"delay_us", "buffer_kib", "ecn_kib", "service_ns", "host_cost_ns", "host_cpus", "compute_ms",
            "overhead_bytes", "shaper", "dask"},
    "recovery": {"timeout_ms", "min_timeout_ms", "max_timeout_ms", "fixed_timeout", "backoff", "fast_retransmit"},
}


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.path}: {key}: {message}")

    def number(self, key: str, v: Any, lo: float, hi: float, integer: bool = False) -> Any:
        ok = isinstance(v, int) if integer else isinstance(v, (int, float))
        if isinstance(v, bool) or not ok:
            raise self.fail(key, f"expected {'an integer' if integer else 'a number'}, got {v!r}")
        if not lo <= v <= hi:
            raise self.fail(key, f"{v} out of range [{lo:g}, {hi:g}]")
        return v

    def numbers(self, key: str, v: Any, lo: float, hi: float, integer: bool = False) -> tuple[Any, ...]:
        items = v if isinstance(v, list) else [v]
        if not items:
            raise self.fail(key, "empty list")
        out = tuple(self.number(f"{key}[{i}]" if isinstance(v, list) else key, x, lo, hi, integer)
                    for i, x in enumerate(items))
        if len(set(out)) != len(out):
            raise self.fail(key, f"repeated values in {list(out)}")
        return out

    def choice(self, key: str, v: Any, choices: list[str]) -> str:
        if not isinstance(v, str) or v not in choices:
            raise self.fail(key, f"expected one of {', '.join(choices)}, got {v!r}")
        return v


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML: {exc}") from None
    r = _Reader(path)
    for section, body in data.items():
        if section not in _SECTIONS:
            raise r.fail(section, f"unknown section (expected {', '.join(_SECTIONS)})")
        if not isinstance(body, dict):
            raise r.fail(section, "expected a table ([" + section + "])")
        for key in body:
            if key not in _SECTIONS[section]:
                raise r.fail(f"{section}.{key}", f"unknown key (expected one of {', '.join(sorted(_SECTIONS[section]))})")
    sc, net, sw, rep, sim = (data.get(s, {}) for s in ("scenario", "network", "sweep", "report", "sim"))
    kw: dict[str, Any] = {"name": path.stem, "path": path}
    if "name" in sc:
        if not isinstance(sc["name"], str) or not sc["name"].replace("-", "").replace("_", "").isalnum():
            raise r.fail("scenario.name", f"expected letters, digits, - and _, got {sc['name']!r}")
        kw["name"] = sc["name"]
    if "description" in sc:
        if not isinstance(sc["description"], str):
            raise r.fail("scenario.description", "expected a string")
        kw["description"] = sc["description"]
    if "repetitions" in sc:
        kw["repetitions"] = r.number("scenario.repetitions", sc["repetitions"], 1, 1000, integer=True)
    if "seed" in sc:
        kw["seed"] = r.number("scenario.seed", sc["seed"], 0, 2**31 - 1, integer=True)
    if "timeout_s" in sc:
        kw["timeout_s"] = float(r.number("scenario.timeout_s", sc["timeout_s"], 1, 3600))
    if "engine" in net:
        kw["engine"] = r.choice("network.engine", net["engine"], list(ENGINES))
    simulated = kw.get("engine") == "sim"
    if sim and not simulated:
        raise r.fail("sim", 'the [sim] section needs network.engine = "sim"')
    if sim:
        kw["sim"] = _sim_model(r, sim)
    if data.get("recovery"):
        kw["recovery"] = _recovery(r, data["recovery"])
    if "topology" in net:
        kw["topology"] = r.choice("network.topology", net["topology"], list(TOPOLOGIES))
    topology = kw.get("topology", "star")
    two_tier = topology != "star"  # racks of workers under more switches: two tiers or leaf-spine
    if two_tier and not simulated:
        raise r.fail("network.topology", f'{topology} runs on the simulator (engine = "sim"); Mininet\'s two-tier '
                     "network is `make twolevel`")
    for key in ("racks", "levels", "uplink_mbps"):
        if key in net and not two_tier:
            raise r.fail(f"network.{key}", 'only with topology = "two-tier" or "leaf-spine"')
    if "spines" in net and topology != "leaf-spine":
        raise r.fail("network.spines", 'only with topology = "leaf-spine"')
    if two_tier:
        if "racks" not in net:
            raise r.fail("network.racks", f"a {topology} network needs its number of racks (1..32)")
        kw["racks"] = r.number("network.racks", net["racks"], 1, 32, integer=True)
        if "spines" in net:
            kw["spines"] = r.number("network.spines", net["spines"], 1, 64, integer=True)
        if "levels" in net:
            kw["levels"] = r.number("network.levels", net["levels"], 1, 2, integer=True)
        if "uplink_mbps" in net:
            kw["uplink_mbps"] = float(r.number("network.uplink_mbps", net["uplink_mbps"], 0.1, 1_600_000))
    if "bw_mbps" in net:
        if net["bw_mbps"] == "auto" and simulated:
            raise r.fail("network.bw_mbps", '"auto" calibrates the emulator to this machine\'s CPUs; a simulation '
                         "needs a rate (e.g. 100000 for 100 Gbit/s)")
        kw["bw_mbps"] = "auto" if net["bw_mbps"] == "auto" else float(
            r.number("network.bw_mbps", net["bw_mbps"], 0.1, 1_600_000 if simulated else 100_000))
    if "target" in net:
        kw["target"] = r.choice("network.target", net["target"], ["embedded", "bmv2"])
    if "pool_size" in net:
        kw["pool_size"] = r.number("network.pool_size", net["pool_size"], 1, 1 << 15, integer=True)
    if "window" in net:
        kw["window"] = r.number("network.window", net["window"], 1, 1 << 15, integer=True)
    if "window_control" in net:
        kw["window_control"] = r.choice("network.window_control", net["window_control"], ["fixed", "adaptive"])
    if "cpus" in net:
        kw["cpus"] = r.choice("network.cpus", net["cpus"], list(CPU_LAYOUTS))
    if "protocols" in sw and "algos" in sw:
        raise r.fail("sweep", "give protocols (or its old name algos), not both")
    key = "algos" if "algos" in sw else "protocols"  # `algos`: the key's name before the house's one word
    if key in sw:
        protocols = sw[key] if isinstance(sw[key], list) else [sw[key]]
        if not protocols:
            raise r.fail(f"sweep.{key}", "empty list")
        kw["protocols"] = tuple(r.choice(f"sweep.{key}[{i}]", a, sorted(PROTOCOLS)) for i, a in enumerate(protocols))
    if "workers" in sw:
        kw["workers"] = r.numbers("sweep.workers", sw["workers"], 1, (TWO_TIER_MAX_WORKERS if two_tier else
                                                                      SIM_MAX_WORKERS) if simulated else 32,
                                  integer=True)
    if "sizes" in sw and "sizes_kib" in sw:
        raise r.fail("sweep.sizes_kib", "give sizes (elements) or sizes_kib, not both")
    if "sizes" in sw:
        kw["sizes"] = r.numbers("sweep.sizes", sw["sizes"], 1, 1 << 30, integer=True)
    if "sizes_kib" in sw:
        kw["sizes"] = tuple(int(k * 256) for k in r.numbers("sweep.sizes_kib", sw["sizes_kib"], 0.00390625, 1 << 22))
    if "dtype" in sw:
        kw["dtype"] = r.choice("sweep.dtype", sw["dtype"], ["float32", "int32"])
    if "loss" in sw:
        kw["loss"] = tuple(float(x) for x in r.numbers("sweep.loss", sw["loss"], 0.0, 0.5))
    if "straggler_ms" in sw:
        kw["straggler_ms"] = tuple(float(x) for x in r.numbers("sweep.straggler_ms", sw["straggler_ms"], 0, 60_000))
    if "background_mbps" in sw:
        kw["background_mbps"] = tuple(float(x) for x in r.numbers("sweep.background_mbps", sw["background_mbps"], 0,
                                                                  100_000))
    if "sparsity" in sw:
        kw["sparsity"] = tuple(float(x) for x in r.numbers("sweep.sparsity", sw["sparsity"], 0.0, 1.0))
    if "overlap" in sw:
        kw["overlap"] = tuple(float(x) for x in r.numbers("sweep.overlap", sw["overlap"], 0.0, 1.0))
    if "x" in rep:
        kw["x"] = r.choice("report.x", rep["x"], list(AXES))
    if simulated:
        _check_simulable(r, kw)
    if two_tier:
        _check_two_tier(r, kw)
    return Scenario(**kw)


def _recovery(r: _Reader, rec: dict[str, Any]) -> Recovery:
    kw: dict[str, Any] = {}
    for key in ("timeout_ms", "min_timeout_ms", "max_timeout_ms"):
        if key in rec:
            kw[key] = float(r.number(f"recovery.{key}", rec[key], 0.001, 3_600_000))
    if "backoff" in rec:
        kw["backoff"] = float(r.number("recovery.backoff", rec["backoff"], 1, 16))
    if "fast_retransmit" in rec:
        kw["fast_retransmit"] = r.number("recovery.fast_retransmit", rec["fast_retransmit"], 0, 1 << 15, integer=True)
    if "fixed_timeout" in rec:
        if not isinstance(rec["fixed_timeout"], bool):
            raise r.fail("recovery.fixed_timeout", f"expected true or false, got {rec['fixed_timeout']!r}")
        kw["fixed_timeout"] = rec["fixed_timeout"]
    out = Recovery(**kw)
    try:
        out.window_options()
    except ValueError as exc:
        raise r.fail("recovery", str(exc)) from None
    return out


def _sim_model(r: _Reader, sim: dict[str, Any]) -> SimModel:
    kw: dict[str, Any] = {}
    for key, hi in (("delay_us", 1e6), ("service_ns", 1e9), ("host_cost_ns", 1e9), ("compute_ms", 1e6)):
        if key in sim:
            kw[key] = float(r.number(f"sim.{key}", sim[key], 0, hi))
    for key in ("buffer_kib", "ecn_kib"):
        if key in sim:
            kw[key] = float(r.number(f"sim.{key}", sim[key], 0.0625, 1 << 22))
    if "overhead_bytes" in sim:
        kw["overhead_bytes"] = r.number("sim.overhead_bytes", sim["overhead_bytes"], 0, 64, integer=True)
    if "host_cpus" in sim:
        kw["host_cpus"] = r.number("sim.host_cpus", sim["host_cpus"], 1, 4096, integer=True)
    if "shaper" in sim:
        kw["shaper"] = r.choice("sim.shaper", sim["shaper"], list(SHAPERS))
    if "dask" in sim:
        if not isinstance(sim["dask"], bool):
            raise r.fail("sim.dask", f"expected true or false, got {sim['dask']!r}")
        kw["dask"] = sim["dask"]
    return SimModel(**kw)


def _check_simulable(r: _Reader, kw: dict[str, Any]) -> None:
    """What the simulator does not model yet is refused here, not at the first run."""
    if "bw_mbps" not in kw:
        raise r.fail("network.bw_mbps", "a simulation needs a link rate (Mbit/s, e.g. 100000 for 100 Gbit/s)")
    for key in ("target", "cpus"):
        if key in kw:
            raise r.fail(f"network.{key}", "only the emulator has it (a simulation runs the embedded switch engine "
                         "in its own process)")
    if any(kw.get("background_mbps", (0.0,))):
        raise r.fail("sweep.background_mbps", "background traffic is not modelled by the simulator yet")


def _check_two_tier(r: _Reader, kw: dict[str, Any]) -> None:
    """What the simulator's two-tier and leaf-spine networks cannot run, refused at load: programs that aggregate in
    one switch, racks they cannot fill, a rack switch with more than 510 ports (v1model's 9-bit port, 511 drops) or,
    for an in-network protocol, workers that do not fit ATP's 32-bit bitmaps."""
    from topo.twotier import TwoTierFabric

    in_network = False
    for p in kw.get("protocols", Scenario.protocols):
        spec = PROTOCOLS[p]
        in_network |= spec.rank is not None
        try:
            TwoTierFabric.check_program(p, str(spec.program), spec.rank is not None)
        except ValueError as exc:
            raise r.fail("sweep.protocols", f"{exc} (on the simulator's star)") from None
    racks, levels = kw["racks"], kw.get("levels", 2)
    most = 32 * racks if levels == 2 else 32
    for n in kw.get("workers", Scenario.workers):
        if n < racks:
            raise r.fail("sweep.workers", f"{n} workers cannot fill {racks} racks")
        ports = -(-n // racks) + (kw.get("spines", Scenario.spines) if kw.get("topology") == "leaf-spine" else 1)
        if ports > SIM_MAX_WORKERS:
            raise r.fail("sweep.workers", f"{n} workers in {racks} racks need {ports} ports on a rack switch (its "
                         f"hosts and uplinks); a switch has at most {SIM_MAX_WORKERS}")
        if n > most and in_network:
            why = (f"{racks} racks of at most 32 (ATP's 32-bit worker bitmap per rack switch)" if levels == 2 else
                   "one level: the PS's rack switch aggregates every worker in one 32-bit bitmap")
            raise r.fail("sweep.workers", f"{n} workers: at most {most} here, {why}")
