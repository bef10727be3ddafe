"""SwitchML behind the shared interface: `worker.switchml.worker.Worker` over its own UDP socket, as a Collective."""

from __future__ import annotations

import numpy as np

from worker.codec import find_program_json
from worker.collective import CollectiveOptions, UdpCollective
from worker.job import JobConfig
from worker.stats import RunResult
from worker.switchml.header import Codec
from worker.switchml.worker import Worker
from worker.transport import UdpTransport
from worker.verify import Verdict, verify

__all__ = ["SwitchMLCollective"]

PROGRAM = "switchml"
"""The P4 program whose compiled JSON gives the packet layout (p4src/switchml.p4)."""


class SwitchMLCollective(UdpCollective):
    """`worker.switchml.worker.Worker` over its own UDP socket, as a Collective."""

    def __init__(self, job: JobConfig, rank: int, options: CollectiveOptions) -> None:
        codec = Codec.from_program_json(options.program_json or find_program_json(PROGRAM))
        me = job.worker(rank)
        self.world_size = job.num_workers
        self.transport = UdpTransport((options.bind_ip or me.ip, me.udp_port), (job.switch.ip, options.switch_port))
        try:
            self.worker = Worker(job, rank, self.transport, codec, options.window, timeline=options.timeline)
        except BaseException:
            self.transport.close()
            raise

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        return self.worker.allreduce(array)

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        return verify(run.array, inputs, self.worker.job.num_elems, dtype, run.exponents)
