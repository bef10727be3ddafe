"""One interface for every way of summing a tensor across a job's workers, and its implementations.

    with open_collective("ring", job, rank) as c:     # worker.protocols.open_collective
        result = c.run(array)          # RunResult(array, stats, exponents)
        verdict = c.verify(result, inputs, "float32")

`Collective` is what every protocol's rank offers; `SwitchMLCollective`, `AtpCollective` and the host baselines
(`open_host(Ring)`, `open_host(ShardedPS)`) implement it. Which name means which is `worker.protocols`' registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from worker.switchml.worker import Worker
from worker.stats import RunResult
from worker.codec import find_program_json
from worker.atp.worker import AtpOptions, AtpWorker, find_atp_json
from worker.atp.header import ATP_UDP_PORT, AtpCodec
from worker.switchml.header import INA_UDP_PORT, Codec
from worker.host.base import HostCollective
from worker.job import JobConfig, JobConfigError
from worker.host.peers import connect_mesh
from worker.transport import UdpTransport
from worker.verify import Verdict, verify, verify_fixed_point
from worker.driver import WindowOptions

__all__ = ["AtpCollective", "Collective", "CollectiveOptions", "SwitchMLCollective", "open_host"]


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


def open_host(cls: type[HostCollective]) -> Callable[[JobConfig, int, CollectiveOptions], Collective]:
    """The factory of a host baseline: connect the rank's TCP links to the peers it needs, then open it."""
    def open_(job: JobConfig, rank: int, options: CollectiveOptions) -> Collective:
        n = job.num_workers
        peers = cls.peers_needed(rank, n)
        links = connect_mesh(rank, [(w.ip, w.udp_port) for w in job.workers], peers, job_id=job.job_id,
                             bind_ip=options.bind_ip, timeout=options.connect_timeout, io_timeout=options.io_timeout)
        return cls(rank, n, links)

    return open_
