"""The host baselines behind the shared interface: a rank's TCP links to its peers, then the algorithm."""

from __future__ import annotations

from collections.abc import Callable

from worker.collective import Collective, CollectiveOptions
from worker.host.base import HostCollective
from worker.host.peers import connect_mesh
from worker.job import JobConfig

__all__ = ["open_host"]


def open_host(cls: type[HostCollective]) -> Callable[[JobConfig, int, CollectiveOptions], Collective]:
    """The factory of a host baseline: connect the rank's TCP links to the peers it needs, then open it."""
    def open_(job: JobConfig, rank: int, options: CollectiveOptions) -> Collective:
        n = job.num_workers
        peers = cls.peers_needed(rank, n)
        links = connect_mesh(rank, [(w.ip, w.udp_port) for w in job.workers], peers, job_id=job.job_id,
                             bind_ip=options.bind_ip, timeout=options.connect_timeout, io_timeout=options.io_timeout)
        return cls(rank, n, links)

    return open_
