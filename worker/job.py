"""Job configuration shared by topo/, the controller and the workers.

The on-disk form is JSON::

    {"job_id": 1, "num_elems": 64,
     "switch": {"ip": "10.0.0.254", "mac": "00:00:0a:00:00:fe"},
     "pool": {"base": 0, "size": 64},
     "workers": [{"rank": 0, "ip": "10.0.0.1", "mac": "00:00:0a:00:00:01",
                  "udp_port": 50000, "switch_port": 1, "rack": 0}, ...],
     "ps": {"ip": "10.0.0.100", "mac": "00:00:0a:00:00:64", "switch_port": 9}}

`ps` (the job's parameter server) and a worker's `rack` (its first-level switch, default 0) are used by ATP only;
for ATP `pool` is the job's range of the aggregator pool that every job shares (ranges may overlap).

`JobConfig.load` / `JobConfig.from_dict` validate everything and raise `JobConfigError` naming the offending key.

A job has at most `MAX_WORKERS` (32) workers, the worker bitmap of switchml.p4's default build and of atp.p4. A job
for a wider switchml.p4 build (`-D INA_MAX_WORKERS=W`, W up to 512; `controller.switchml.max_workers` reads W from
the program's P4Info), or an ATP job aggregated on two levels (up to 32 racks of 32 workers: `MAX_JOB_WORKERS`), is
validated against its limit W instead: `JobConfig(..., max_workers=W)`, `JobConfig.from_dict(d, max_workers=W)`,
`JobConfig.load(path, max_workers=W)`. The limit is not part of the job file.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["JobConfigError", "SwitchAddress", "PoolRange", "WorkerSpec", "PsSpec", "JobConfig", "MAX_WORKERS",
           "WIDEST_BITMAP", "MAX_JOB_WORKERS", "MAX_SLOTS"]

MAX_WORKERS = 32
"""Workers a job may have by default: the switch keeps a 32-bit worker bitmap per slot and set (switchml.p4's default
build, atp.p4). `JobConfig.max_workers` raises it for a wider switchml.p4 build."""
WIDEST_BITMAP = 512
"""The widest worker bitmap switchml.p4 builds with (-D INA_MAX_WORKERS=512): no job has more workers (and one switch
has ports for at most 510: port 511 is v1model's drop port, port 0 is left out by the networks here)."""
MAX_JOB_WORKERS = 1024
"""The most workers any job has: ATP aggregated on two levels, 32 racks (atp.p4's 32-bit rack bitmap) of 32 workers
(its 32-bit worker bitmap, per rack)."""
MAX_SLOTS = 1 << 15
"""pool_index bits 14..0 address the slot; bit 15 is the set."""

_WIDER = (f": switchml.p4 built with -D INA_MAX_WORKERS=W and the job's max_workers=W allow up to {WIDEST_BITMAP}, "
          f"ATP on two levels up to {MAX_JOB_WORKERS}")

_MAC_RE = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


class JobConfigError(ValueError):
    """A job configuration is malformed; the message names the key and the problem."""


def _require(data: Any, key: str, where: str) -> Any:
    if not isinstance(data, dict):
        raise JobConfigError(f"{where}: expected a JSON object, got {type(data).__name__}")
    if key not in data:
        raise JobConfigError(f"{where}: missing key {key!r}")
    return data[key]


def _known(data: Any, keys: set[str], where: str) -> None:
    """Refuse keys a job file does not have (a misspelt key would otherwise be ignored silently)."""
    if isinstance(data, dict) and set(data) - keys:
        raise JobConfigError(f"{where}: unknown key{'s' if len(set(data) - keys) > 1 else ''} "
                             f"{', '.join(repr(k) for k in sorted(set(data) - keys))} (expected {', '.join(sorted(keys))})")


def _int(value: Any, where: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise JobConfigError(f"{where}: expected an integer, got {value!r}")
    if not lo <= value <= hi:
        raise JobConfigError(f"{where}: {value} out of range [{lo}, {hi}]")
    return value


def _ipv4(value: Any, where: str) -> str:
    try:
        return str(ipaddress.IPv4Address(value))
    except (ipaddress.AddressValueError, ValueError, TypeError):
        raise JobConfigError(f"{where}: {value!r} is not an IPv4 address") from None


def _mac(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _MAC_RE.match(value):
        raise JobConfigError(f"{where}: {value!r} is not a MAC address like 00:00:0a:00:00:01")
    return value.lower()


@dataclass(frozen=True, slots=True)
class SwitchAddress:
    """The switch's INA service address (the controller assigns it)."""

    ip: str
    mac: str

    def __post_init__(self) -> None:
        _ipv4(self.ip, "switch.ip")
        _mac(self.mac, "switch.mac")


@dataclass(frozen=True, slots=True)
class PoolRange:
    """The job's slots: [base, base + size) of the switch's pool."""

    base: int
    size: int

    def __post_init__(self) -> None:
        _int(self.base, "pool.base", 0, MAX_SLOTS - 1)
        _int(self.size, "pool.size", 1, MAX_SLOTS)
        if self.base + self.size > MAX_SLOTS:
            raise JobConfigError(f"pool: base {self.base} + size {self.size} exceeds {MAX_SLOTS} slots (15-bit index)")


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """One worker: its rank, host addresses, UDP port and the switch port it is attached to."""

    rank: int
    ip: str
    mac: str
    udp_port: int
    switch_port: int
    rack: int = 0
    """ATP: index of the worker's first-level switch (two-level aggregation); 0 in a one-switch network."""

    def __post_init__(self) -> None:
        where = f"workers[rank={self.rank}]"
        _int(self.rank, f"{where}.rank", 0, MAX_JOB_WORKERS - 1)  # the job's own limit: JobConfig.max_workers
        _ipv4(self.ip, f"{where}.ip")
        _mac(self.mac, f"{where}.mac")
        _int(self.udp_port, f"{where}.udp_port", 1, 65535)
        _int(self.switch_port, f"{where}.switch_port", 0, 511)
        _int(self.rack, f"{where}.rack", 0, 31)


@dataclass(frozen=True, slots=True)
class PsSpec:
    """ATP: the job's parameter server (its host address and the port of the switch it is attached to)."""

    ip: str
    mac: str
    switch_port: int

    def __post_init__(self) -> None:
        _ipv4(self.ip, "ps.ip")
        _mac(self.mac, "ps.mac")
        _int(self.switch_port, "ps.switch_port", 0, 511)


@dataclass(frozen=True, slots=True)
class JobConfig:
    """An all-reduce job: id, elements per packet, switch address, pool range and workers (ranks 0..n-1)."""

    job_id: int
    num_elems: int
    switch: SwitchAddress
    pool: PoolRange
    workers: tuple[WorkerSpec, ...] = field(default_factory=tuple)
    ps: PsSpec | None = None
    """ATP only: where the job's parameter server runs."""
    priority: int | None = None
    """0..255, higher first, for a switch that allocates its memory by job priority (ESA); None: its controller's
    default."""
    release_us: int | None = None
    """Microseconds after its first contribution at which a switch that releases lagging partial aggregates
    (release.p4) may send one of this job's on to its PS (0: never); None: its controller's default."""
    max_workers: int = field(default=MAX_WORKERS, kw_only=True, compare=False, repr=False)
    """The most workers the job's switch programs hold (the width of switchml.p4's worker bitmap, 1..WIDEST_BITMAP;
    ATP on two levels: up to MAX_JOB_WORKERS): the job is validated against it. Not part of the job file, nor of
    equality."""

    def __post_init__(self) -> None:
        _int(self.job_id, "job_id", 0, 255)
        _int(self.num_elems, "num_elems", 1, 4096)
        _int(self.max_workers, "max_workers", 1, MAX_JOB_WORKERS)
        if self.priority is not None:
            _int(self.priority, "priority", 0, 255)
        if self.release_us is not None:
            _int(self.release_us, "release_us", 0, 2**32 - 1)
        object.__setattr__(self, "workers", tuple(sorted(self.workers, key=lambda w: w.rank)))
        if not self.workers:
            raise JobConfigError("workers: a job needs at least one worker")
        for w in self.workers:
            if w.rank >= self.max_workers:
                raise JobConfigError(f"workers[rank={w.rank}].rank: {w.rank} out of range [0, {self.max_workers - 1}] "
                                     f"(the switch's worker bitmap holds {self.max_workers}{_WIDER})")
        if len(self.workers) > self.max_workers:
            raise JobConfigError(f"workers: {len(self.workers)} workers, the switch bitmap holds at most "
                                 f"{self.max_workers}{_WIDER}")
        ranks = [w.rank for w in self.workers]
        if ranks != list(range(len(ranks))):
            raise JobConfigError(f"workers: ranks must be 0..{len(ranks) - 1} without gaps or duplicates, got {ranks}")
        endpoints = [(w.ip, w.udp_port) for w in self.workers]
        if len(set(endpoints)) != len(endpoints):
            raise JobConfigError("workers: two workers share the same (ip, udp_port)")

    @property
    def racks(self) -> list[int]:
        """ATP: the first-level switches (racks) the job's workers are in, sorted."""
        return sorted({w.rack for w in self.workers})

    def rack_size(self, rack: int) -> int:
        """ATP: workers of the job in `rack` (the fan-in of that rack's first-level aggregate)."""
        return sum(1 for w in self.workers if w.rack == rack)

    @property
    def num_workers(self) -> int:
        """n, the number of contributions per slot."""
        return len(self.workers)

    def worker(self, rank: int) -> WorkerSpec:
        """The worker with this rank; JobConfigError if there is none."""
        if not 0 <= rank < len(self.workers):
            raise JobConfigError(f"rank {rank} not in job {self.job_id} (ranks 0..{len(self.workers) - 1})")
        return self.workers[rank]

    # --- JSON ---------------------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Any, *, max_workers: int = MAX_WORKERS) -> JobConfig:
        """Build and validate from the JSON object form (against `max_workers`, the switch program's bitmap width)."""
        sw = _require(data, "switch", "job")
        pool = _require(data, "pool", "job")
        workers = _require(data, "workers", "job")
        _known(data, {"job_id", "num_elems", "switch", "pool", "workers", "ps", "priority", "release_us"}, "job")
        _known(sw, {"ip", "mac"}, "job.switch")
        _known(pool, {"base", "size"}, "job.pool")
        if not isinstance(workers, list):
            raise JobConfigError("job.workers: expected a JSON array")
        specs = []
        for i, w in enumerate(workers):
            where = f"job.workers[{i}]"
            _known(w, {"rank", "ip", "mac", "udp_port", "switch_port", "rack"}, where)
            specs.append(
                WorkerSpec(
                    rank=_require(w, "rank", where),
                    ip=_require(w, "ip", where),
                    mac=_require(w, "mac", where),
                    udp_port=_require(w, "udp_port", where),
                    switch_port=_require(w, "switch_port", where),
                    rack=w.get("rack", 0),
                )
            )
        ps = data.get("ps")
        _known(ps, {"ip", "mac", "switch_port"}, "job.ps")
        ps_spec = None if ps is None else PsSpec(ip=_require(ps, "ip", "job.ps"), mac=_require(ps, "mac", "job.ps"),
                                                 switch_port=_require(ps, "switch_port", "job.ps"))
        return cls(
            job_id=_require(data, "job_id", "job"),
            num_elems=_require(data, "num_elems", "job"),
            switch=SwitchAddress(ip=_require(sw, "ip", "job.switch"), mac=_require(sw, "mac", "job.switch")),
            pool=PoolRange(base=_require(pool, "base", "job.pool"), size=_require(pool, "size", "job.pool")),
            workers=tuple(specs),
            ps=ps_spec,
            priority=data.get("priority"),
            release_us=data.get("release_us"),
            max_workers=max_workers,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object form (inverse of from_dict)."""
        out: dict[str, Any] = {
            "job_id": self.job_id,
            "num_elems": self.num_elems,
            "switch": {"ip": self.switch.ip, "mac": self.switch.mac},
            "pool": {"base": self.pool.base, "size": self.pool.size},
            "workers": [
                {"rank": w.rank, "ip": w.ip, "mac": w.mac, "udp_port": w.udp_port, "switch_port": w.switch_port,
                 **({"rack": w.rack} if w.rack else {})}
                for w in self.workers
            ],
        }
        if self.ps is not None:
            out["ps"] = {"ip": self.ps.ip, "mac": self.ps.mac, "switch_port": self.ps.switch_port}
        if self.priority is not None:
            out["priority"] = self.priority
        if self.release_us is not None:
            out["release_us"] = self.release_us
        return out

    @classmethod
    def load(cls, path: str | Path, *, max_workers: int = MAX_WORKERS) -> JobConfig:
        """Read and validate a job file (against `max_workers`, the switch program's bitmap width)."""
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise JobConfigError(f"cannot read job file {path}: {exc.strerror}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise JobConfigError(f"{path}: not valid JSON: {exc}") from None
        try:
            return cls.from_dict(data, max_workers=max_workers)
        except JobConfigError as exc:
            raise JobConfigError(f"{path}: {exc}") from None

    def save(self, path: str | Path) -> None:
        """Write the job file (pretty-printed JSON)."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")
