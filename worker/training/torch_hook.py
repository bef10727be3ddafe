"""A PyTorch DistributedDataParallel communication hook that all-reduces gradient buckets through a testbed collective.

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from worker.training.torch_hook import collective_hook
    from worker.protocols import open_collective

    coll = open_collective("switchml", job, rank)          # or "ring", "ps"
    model = DDP(net)                                        # any process group (gloo) for DDP's own set-up
    model.register_comm_hook(state=coll, hook=collective_hook)

Each bucket (a flat float32 tensor) is summed over the job's workers by the collective and divided by the world size
(DDP averages gradients); the returned future is already completed (the collective call is synchronous). torch is an
optional extra (`pip install torch`): this module imports it lazily, and its test is skipped without it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from worker.collective import Collective
from worker.verify import verify_float_sum

__all__ = ["collective_hook", "verify_bucket"]


def collective_hook(state: Any, bucket):  # type: ignore[no-untyped-def]
    """DDP comm hook: `state` is a worker.collective.Collective; returns a completed torch.futures.Future.

    `bucket` and the result are left unannotated: DDP's register_comm_hook reads the signature and refuses any
    annotation but dist.GradBucket and torch.futures.Future[torch.Tensor] (a string one, too), and torch is optional."""
    import torch

    tensor = bucket.buffer()
    world = state.world_size
    arr = tensor.detach().cpu().numpy().astype(np.float32, copy=False)
    summed = state.allreduce(arr)
    out = torch.from_numpy(np.asarray(summed, dtype=np.float32) / world).to(tensor.device, tensor.dtype)
    fut: Any = torch.futures.Future()
    fut.set_result(out)
    return fut


def verify_bucket(coll: Collective, arr: np.ndarray, run: Any, gather: Any, reduce: Any) -> dict[str, Any]:
    """The collective's sum of `arr` (its RunResult `run`) against the exact sum of every rank's `arr` (`gather(t)`:
    their tensors) and against another all-reduce of it (`reduce(t)`: gloo's, in place)."""
    import torch

    mine = torch.from_numpy(np.ascontiguousarray(arr, dtype=np.float32))
    inputs = [g.numpy() for g in gather(mine)]
    ref = mine.clone()
    reduce(ref)
    ours, theirs = coll.verify(run, inputs, "float32"), verify_float_sum(ref.numpy(), inputs, "float32")
    diff = float(np.max(np.abs(run.array.ravel().astype(np.float64) - ref.numpy().astype(np.float64)))) \
        if arr.size else 0.0
    return {"elements": int(arr.size), "ok": ours.ok and theirs.ok, "of_bound": ours.max_error_over_bound,
            "max_error": ours.max_error, "gloo_max_error": theirs.max_error, "max_diff_vs_gloo": diff,
            "message": ours.message if not ours.ok else theirs.message}
