"""One interface for every way of summing a tensor across a job's workers, and the registry of them.

    with open_collective("ring", job, rank) as c:
        result = c.run(array)          # RunResult(array, stats, exponents)
        verdict = c.verify(result, inputs, "float32")

`COLLECTIVES` maps a name to a `CollectiveSpec` (what it is, and the factory that opens one rank of it), the way
Mininet's `topos` maps names to topologies: the worker CLI, the experiment runner and the training job pick a
collective by name and nothing else branches on it. Registered here:

- `switchml`: in-network aggregation through the P4 switch (`worker.switchml.worker.Worker`, UDP, block floating point);
- `ring`: host-based ring all-reduce over TCP (`worker.host.ring.Ring`);
- `ps`: host-based sharded parameter server over TCP, co-located with the workers (`worker.host.ps.ShardedPS`);
- `atp`: ATP-style best-effort in-network aggregation with a parameter server host (`worker.atp.worker.AtpWorker`, UDP,
  fixed point, shared aggregator pool; the PS is `python -m worker.atp.ps`).

Each spec names the P4 program (`p4src/<program>.p4`) the switch must run for it: the host baselines only need L2
forwarding and run over switchml.p4.

A new protocol registers itself with `register(CollectiveSpec(...))`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from worker.switchml.worker import SWITCHML_WINDOW, Worker
from worker.stats import RunResult
from worker.codec import find_program_json
from worker.atp.worker import ATP_WINDOW, AtpOptions, AtpWorker, find_atp_json
from worker.atp.header import ATP_UDP_PORT, AtpCodec
from worker.switchml.header import INA_UDP_PORT, Codec
from worker.host.base import HostCollective
from worker.job import JobConfig, JobConfigError
from worker.host.peers import connect_mesh
from worker.host.ps import ShardedPS
from worker.host.ring import Ring
from worker.transport import UdpTransport
from worker.verify import Verdict, verify, verify_fixed_point
from worker.driver import WindowOptions

__all__ = ["Collective", "CollectiveOptions", "CollectiveSpec", "COLLECTIVES", "default_windows", "open_collective",
           "register"]


class Collective(Protocol):
    """One rank's end of an all-reduce algorithm."""

    world_size: int
    """Ranks taking part (the job's workers)."""

    def run(self, array: np.ndarray, dtype: str | None = None) -> RunResult:
        """The element-wise sum of array over all ranks, with the run's statistics."""
        ...

    def allreduce(self, array: np.ndarray) -> np.ndarray: ...

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        """Check run against every rank's input, with this algorithm's error model."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Collective: ...

    def __exit__(self, *exc: object) -> None: ...


@dataclass(frozen=True)
class CollectiveOptions:
    """Knobs of opening one rank; each collective reads the ones it needs."""

    window: WindowOptions = field(default_factory=WindowOptions)
    """INA protocols: window, timeouts, retries."""
    program_json: Path | None = None
    """INA protocols: the compiled switch program the packet layout comes from (default: find_program_json())."""
    bind_ip: str | None = None
    """Local address to bind instead of the job's worker address."""
    switch_port: int = INA_UDP_PORT
    connect_timeout: float = 30.0
    """Host baselines: how long to wait for the peers' TCP connections."""
    io_timeout: float = 30.0
    """Host baselines: how long a send or receive may stall before the peer is declared gone."""
    atp: AtpOptions = field(default_factory=AtpOptions)
    """ATP: fixed-point scaling and initial congestion window."""


@dataclass(frozen=True)
class CollectiveSpec:
    """A registered collective: its name, a one-line description and its factory."""

    name: str
    description: str
    open: Callable[[JobConfig, int, CollectiveOptions], Collective]
    program: str = "switchml"
    """The P4 program (p4src/<program>.p4) the switch runs for this collective."""
    in_network: bool = False
    """The switch aggregates (the program's job must be installed); False: a host-based baseline that needs only
    the program's L2 forwarding."""
    default_window: int | None = None
    """INA protocols: packets in flight per worker when the options leave the window unset, within the job's pool
    (None: the whole pool)."""

    def window_width(self, pool_size: int, window: int | None = None) -> int:
        """The packets in flight per worker this collective keeps with a pool of pool_size slots and `--window`."""
        return WindowOptions(window=window).width(pool_size, self.default_window)


COLLECTIVES: dict[str, CollectiveSpec] = {}


def register(spec: CollectiveSpec) -> CollectiveSpec:
    COLLECTIVES[spec.name] = spec
    return spec


def default_windows() -> str:
    """The INA protocols' default windows, for help texts: "switchml 64, atp 32"."""
    return ", ".join(f"{c.name} {c.default_window}" for c in COLLECTIVES.values() if c.default_window)


def open_collective(name: str, job: JobConfig, rank: int, options: CollectiveOptions | None = None) -> Collective:
    """Open rank `rank` of collective `name` for job (ValueError naming the choices for an unknown name)."""
    spec = COLLECTIVES.get(name)
    if spec is None:
        raise ValueError(f"unknown collective {name!r}; choose one of {', '.join(sorted(COLLECTIVES))}")
    job.worker(rank)  # validates the rank
    return spec.open(job, rank, options or CollectiveOptions())


class SwitchMLCollective:
    """`worker.switchml.worker.Worker` over its own UDP socket, as a Collective."""

    def __init__(self, job: JobConfig, rank: int, options: CollectiveOptions) -> None:
        codec = Codec.from_program_json(options.program_json or find_program_json())
        me = job.worker(rank)
        self.world_size = job.num_workers
        self.transport = UdpTransport((options.bind_ip or me.ip, me.udp_port), (job.switch.ip, options.switch_port))
        try:
            self.worker = Worker(job, rank, self.transport, codec, options.window)
        except BaseException:
            self.transport.close()
            raise

    def run(self, array: np.ndarray, dtype: str | None = None) -> RunResult:
        return self.worker.run(array, dtype)

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        return self.worker.allreduce(array)

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        return verify(run.array, inputs, self.worker.job.num_elems, dtype, run.exponents)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> SwitchMLCollective:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AtpCollective:
    """`worker.atp.worker.AtpWorker` over its own UDP socket (to the job's PS; ACKs come from the switch), as a Collective."""

    def __init__(self, job: JobConfig, rank: int, options: CollectiveOptions) -> None:
        if job.ps is None:
            raise JobConfigError(f"job {job.job_id}: ATP needs a parameter server (\"ps\" in the job file)")
        codec = AtpCodec.from_program_json(options.program_json or find_atp_json())
        me = job.worker(rank)
        self.world_size = job.num_workers
        self.scale_bits = options.atp.scale_bits
        self.transport = UdpTransport((options.bind_ip or me.ip, me.udp_port), (job.ps.ip, ATP_UDP_PORT),
                                      accept_any_source=True)
        try:
            self.worker = AtpWorker(job, rank, self.transport, codec, options.window, options.atp)
        except BaseException:
            self.transport.close()
            raise

    def run(self, array: np.ndarray, dtype: str | None = None) -> RunResult:
        return self.worker.run(array, dtype)

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        return self.worker.run(array).array

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        return verify_fixed_point(run.array, inputs, dtype, self.scale_bits)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> AtpCollective:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_host(cls: type[HostCollective]) -> Callable[[JobConfig, int, CollectiveOptions], Collective]:
    def open_(job: JobConfig, rank: int, options: CollectiveOptions) -> Collective:
        n = job.num_workers
        peers = cls.peers_needed(rank, n)
        links = connect_mesh(rank, [(w.ip, w.udp_port) for w in job.workers], peers, job_id=job.job_id,
                             bind_ip=options.bind_ip, timeout=options.connect_timeout, io_timeout=options.io_timeout)
        return cls(rank, n, links)

    return open_


register(CollectiveSpec("switchml", "in-network aggregation through the P4 switch (SwitchML: UDP, block floating "
                                    "point, shadow-copy slots)", SwitchMLCollective, in_network=True,
                        default_window=SWITCHML_WINDOW))
register(CollectiveSpec(Ring.name, Ring.description, _open_host(Ring)))
register(CollectiveSpec(ShardedPS.name, ShardedPS.description, _open_host(ShardedPS)))
register(CollectiveSpec("atp", "in-network aggregation ATP-style (UDP, fixed point, aggregator pool shared by "
                               "jobs, collisions and loss completed by a parameter server host)", AtpCollective,
                        program="atp", in_network=True, default_window=ATP_WINDOW))
