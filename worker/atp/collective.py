"""ATP behind the shared interface: `worker.atp.worker.AtpWorker` over its own UDP socket, as a Collective."""

from __future__ import annotations

import numpy as np

from worker.atp.header import ATP_UDP_PORT, AtpCodec
from worker.atp.worker import AtpWorker, find_atp_json
from worker.collective import CollectiveOptions, UdpCollective
from worker.job import JobConfig, JobConfigError
from worker.stats import RunResult
from worker.transport import UdpTransport
from worker.verify import Verdict, verify_fixed_point

__all__ = ["AtpCollective"]


class AtpCollective(UdpCollective):
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
            self.worker = AtpWorker(job, rank, self.transport, codec, options.window, options.atp,
                                    timeline=options.timeline)
        except BaseException:
            self.transport.close()
            raise

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        return self.worker.run(array).array

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        return verify_fixed_point(run.array, inputs, dtype, self.scale_bits)
