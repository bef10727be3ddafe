"""A torch.distributed backend, "ina": all_reduce through a testbed collective, so an unmodified DDP script aggregates
its gradients in the switch.

    import worker.training.torch_backend                  # registers the backend
    # INA_JOB=job.json (this job's file), INA_PROTOCOL=switchml (default), INA_PROGRAM_JSON=out/switchml.json
    dist.init_process_group("ina", init_method="tcp://10.0.1.1:29500", rank=r, world_size=n)
    model = DDP(net)                                       # its bucket all-reduces go through the switch

all_reduce of a CPU float32 or int32 tensor with SUM goes through the collective (`worker.protocols.open_collective`
for this rank of the job); everything else — other dtypes and reduce ops, broadcast (DDP's initial parameter sync),
all_gather, barrier, reduce_scatter, point-to-point — goes to a gloo process group the backend opens on the same
store, so any script runs. With INA_CHECK=1 each all_reduce through the collective is also verified against the exact
sum of every rank's input (gathered over gloo) within its protocol's bound and compared with gloo's own all_reduce;
the verdicts accumulate in the process group's `checks` (see `worker.training.ddp`). torch is an optional extra.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from worker.collective import CollectiveOptions
from worker.job import JobConfig, JobConfigError
from worker.protocols import DEFAULT_PROTOCOL, open_collective
from worker.training.torch_hook import verify_bucket

__all__ = ["BACKEND", "InaProcessGroup"]

BACKEND = "ina"
_DTYPES = {torch.float32: "float32", torch.int32: "int32"}


class _Done(dist._Work):
    """A collective that completed before it was returned (the testbed's collectives are synchronous)."""

    def __init__(self, result: Any) -> None:
        super().__init__()
        self._future: Any = torch.futures.Future()
        self._future.set_result(result)

    def wait(self, timeout: Any = None) -> bool:
        return True

    def get_future(self) -> Any:
        return self._future


class InaProcessGroup(dist.ProcessGroup):
    """all_reduce (SUM, CPU float32/int32) through a testbed collective; the rest through gloo."""

    def __init__(self, store: Any, rank: int, size: int, timeout: Any) -> None:
        super().__init__(rank, size)
        job_file = os.environ.get("INA_JOB")
        if not job_file:
            raise ValueError("the ina backend needs INA_JOB: the job file of this rank's job")
        job = JobConfig.load(job_file)
        if job.num_workers != size:
            raise JobConfigError(f"{job_file}: {job.num_workers} workers, but world_size is {size}")
        program = os.environ.get("INA_PROGRAM_JSON")
        options = CollectiveOptions(program_json=Path(program) if program else None,
                                    udp_port=int(os.environ["INA_SWITCH_PORT"]) if os.environ.get("INA_SWITCH_PORT")
                                    else None)
        self.gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
        self.coll = open_collective(os.environ.get("INA_PROTOCOL", DEFAULT_PROTOCOL), job, rank, options)
        self.check = os.environ.get("INA_CHECK") == "1"
        self.checks: list[dict[str, Any]] = []
        """With INA_CHECK=1: one verdict per all_reduce through the collective (`verify_bucket`)."""
        self.comm_s = 0.0

    def getBackendName(self) -> str:  # noqa: N802 (torch's name)
        return BACKEND

    def allreduce(self, tensors: list[torch.Tensor], opts: Any = None) -> Any:
        op = getattr(opts, "reduceOp", dist.ReduceOp.SUM)
        if op != dist.ReduceOp.SUM or any(t.device.type != "cpu" or t.dtype not in _DTYPES for t in tensors):
            return self.gloo.allreduce(tensors, opts) if opts is not None else self.gloo.allreduce(tensors)
        for t in tensors:
            arr = t.detach().contiguous().numpy()
            t0 = time.perf_counter()
            run = self.coll.run(arr, _DTYPES[t.dtype])
            self.comm_s += time.perf_counter() - t0
            if self.check and t.dtype == torch.float32:
                self.checks.append(verify_bucket(self.coll, arr, run, self._gather, self._reduce))
            t.copy_(torch.from_numpy(np.asarray(run.array, dtype=arr.dtype).reshape(arr.shape)))
        return _Done(tensors)

    def _gather(self, t: torch.Tensor) -> list[torch.Tensor]:
        out = [torch.empty_like(t) for _ in range(self.size())]
        self.gloo.allgather([out], [t]).wait()
        return out

    def _reduce(self, t: torch.Tensor) -> None:
        self.gloo.allreduce([t]).wait()

    # everything else: gloo
    def broadcast(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.broadcast(*args, **kwargs)

    def allgather(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.allgather(*args, **kwargs)

    def _allgather_base(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo._allgather_base(*args, **kwargs)

    def allreduce_coalesced(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.allreduce_coalesced(*args, **kwargs)

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.reduce(*args, **kwargs)

    def gather(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.gather(*args, **kwargs)

    def scatter(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.scatter(*args, **kwargs)

    def reduce_scatter(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.reduce_scatter(*args, **kwargs)

    def _reduce_scatter_base(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo._reduce_scatter_base(*args, **kwargs)

    def alltoall_base(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.alltoall_base(*args, **kwargs)

    def send(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.send(*args, **kwargs)

    def recv(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.recv(*args, **kwargs)

    def barrier(self, *args: Any, **kwargs: Any) -> Any:
        return self.gloo.barrier(*args, **kwargs)

    def shutdown(self) -> None:
        self.coll.close()
        self.gloo.shutdown()


def _create(store: Any, rank: int, size: int, timeout: Any) -> InaProcessGroup:
    return InaProcessGroup(store, rank, size, timeout)


if BACKEND not in dist.Backend.backend_list:
    dist.Backend.register_backend(BACKEND, _create, devices=["cpu"])
