"""One rank of PyTorch DistributedDataParallel training whose gradient buckets go through a testbed collective.

    python -m worker.training.ddp --job job.json --rank R --init tcp://10.0.1.1:29500 [--protocol switchml]
                        [--backend hook|ina] [--steps 30] [--batch 64] [--lr 0.1] [--hidden 256] [--seed 0]
                        [--check] [--program-json out/switchml.json] [--barrier DIR]

torch.distributed runs with gloo (`--init` is its rendezvous; set GLOO_SOCKET_IFNAME to the host's interface) for
what DDP does besides all-reducing: the initial broadcast of rank 0's parameters. The gradients go through the
collective — for SwitchML, the P4 switch — by DDP's comm hook (`--backend hook`, `worker.training.torch_hook`) or by
the "ina" torch.distributed backend (`--backend ina`, `worker.training.torch_backend`: DDP as any script runs it). With `--check`, each bucket is also
all-gathered and all-reduced over gloo, and the collective's result is verified against the exact sum within its
protocol's bound (SwitchML: block floating point quantization) and compared with gloo's.

Prints one JSON object per step (step, loss, comm_s and, with --check, the bucket verdicts) and a final one with
"done": true, the test accuracy and the parameters' checksum (equal on every rank when training stayed in step).
Exit codes as `python -m worker.training` (2: switch, peer or gloo unreachable; 3: bad configuration; 4: a bucket
outside its bound). torch is an optional extra (`make torch`).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from worker.barrier import BarrierError, file_barrier
from worker.collective import Collective, CollectiveOptions
from worker.driver import WindowOptions
from worker.errors import Unreachable
from worker.job import JobConfig, JobConfigError
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, open_collective
from worker.training.data import load_digits_split
from worker.training.torch_hook import collective_hook, verify_bucket


@dataclass
class CheckedState:
    """The comm hook's state: the collective, and (with `check`) what each bucket's verification found."""

    coll: Collective
    check: bool
    comm_s: float = 0.0
    buckets: list[dict[str, Any]] = field(default_factory=list)

    @property
    def world_size(self) -> int:
        return self.coll.world_size

    def allreduce(self, arr: np.ndarray) -> np.ndarray:
        t0 = time.perf_counter()
        run = self.coll.run(arr, "float32")
        self.comm_s += time.perf_counter() - t0
        if self.check:
            self.buckets.append(self.verify(arr, run))
        return run.array

    def verify(self, arr: np.ndarray, run: Any) -> dict[str, Any]:
        import torch
        import torch.distributed as dist

        def gather(t: Any) -> list[Any]:
            out = [torch.empty_like(t) for _ in range(self.world_size)]
            dist.all_gather(out, t)
            return out
        return verify_bucket(self.coll, arr, run, gather, dist.all_reduce)


def build_model(hidden: int, seed: int) -> Any:
    """64 → hidden → hidden → 10 MLP (hidden 256: 85,002 parameters)."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 10))


def params_digest(model: Any) -> str:
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()[:16]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m worker.training.ddp", description=__doc__.split("\n\n")[0])
    p.add_argument("--job", required=True)
    p.add_argument("--rank", required=True, type=int)
    p.add_argument("--init", required=True, help="torch.distributed init_method, e.g. tcp://10.0.1.1:29500")
    p.add_argument("--protocol", "--algo", dest="protocol", choices=sorted(PROTOCOLS), default=DEFAULT_PROTOCOL)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=64, help="global batch (split over the ranks)")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=["hook", "ina"], default="hook",
                   help="hook: a gloo process group, the gradients through the collective by DDP's comm hook; ina: "
                        "the ina torch.distributed backend (worker.training.torch_backend), DDP unmodified")
    p.add_argument("--check", action="store_true", help="verify every bucket against the exact sum and gloo's")
    p.add_argument("--timeout", type=float, default=60.0, help="bound on gloo's rendezvous and each of its calls, s")
    p.add_argument("--barrier", metavar="DIR")
    p.add_argument("--program-json", type=Path)
    p.add_argument("--switch-port", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
    except ImportError:
        print(json.dumps({"ok": False, "error": "torch is not installed (make torch)"}))
        return 3
    try:
        job = JobConfig.load(args.job)
        job.worker(args.rank)
        if args.batch < job.num_workers or args.steps < 1:
            raise JobConfigError(f"--batch {args.batch} must be at least the {job.num_workers} workers and --steps "
                                 "at least 1")
    except (JobConfigError, ValueError) as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
        return 3
    data = load_digits_split(seed=args.seed)
    world, rank = job.num_workers, args.rank
    options = CollectiveOptions(window=WindowOptions(), program_json=args.program_json, udp_port=args.switch_port)
    try:
        ina = args.backend == "ina"
        if ina:  # the backend opens this rank's collective itself, from the environment
            os.environ.update(INA_JOB=str(args.job), INA_PROTOCOL=args.protocol, INA_CHECK="1" if args.check else "0")
            if args.switch_port:
                os.environ["INA_SWITCH_PORT"] = str(args.switch_port)
            if args.program_json:
                os.environ["INA_PROGRAM_JSON"] = str(args.program_json)
            import worker.training.torch_backend  # noqa: F401 (registers the "ina" backend)
        with contextlib.nullcontext() if ina else open_collective(args.protocol, job, rank, options) as coll:
            dist.init_process_group("ina" if ina else "gloo", init_method=args.init, rank=rank, world_size=world,
                                    timeout=datetime.timedelta(seconds=args.timeout))
            try:
                model = DDP(build_model(args.hidden, args.seed))  # broadcasts rank 0's parameters over gloo
                if ina:
                    state: Any = dist.group.WORLD  # the InaProcessGroup: comm_s, checks
                else:
                    state = CheckedState(coll, args.check)
                    model.register_comm_hook(state=state, hook=collective_hook)
                opt = torch.optim.SGD(model.parameters(), lr=args.lr)
                x = torch.from_numpy(data.x_train)
                y = torch.from_numpy(data.y_train.astype(np.int64))
                per = args.batch // world
                if args.barrier:
                    file_barrier(args.barrier, rank, world, 60.0)
                started = time.perf_counter()
                for step in range(args.steps):
                    lo = (step * args.batch + rank * per) % (len(x) - per)
                    opt.zero_grad()
                    loss = torch.nn.functional.cross_entropy(model(x[lo:lo + per]), y[lo:lo + per])
                    loss.backward()  # DDP all-reduces each bucket: the hook, or the backend's all_reduce
                    opt.step()
                    rec: dict[str, Any] = {"step": step + 1, "loss": round(float(loss), 6),
                                           "comm_s": round(state.comm_s, 6)}
                    if args.check:
                        if ina:
                            rec["buckets"], state.checks = state.checks, []
                        else:
                            rec["buckets"], state.buckets = state.buckets, []
                    print(json.dumps(rec), flush=True)
                    if args.check and not all(b["ok"] for b in rec["buckets"]):
                        bad = next(b for b in rec["buckets"] if not b["ok"])
                        print(json.dumps({"ok": False, "error": f"step {step + 1}: {bad['message']}"}))
                        return 4
                elapsed = time.perf_counter() - started
                with torch.no_grad():
                    pred = model(torch.from_numpy(data.x_test)).argmax(1).numpy()
                accuracy = float(np.mean(pred == data.y_test))
            finally:
                dist.destroy_process_group()
    except (Unreachable, BarrierError, RuntimeError) as exc:
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}))
        print(f"ddp: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"ok": True, "done": True, "protocol": args.protocol, "rank": rank, "steps": args.steps,
                      "parameters": sum(p.numel() for p in model.parameters()), "test_accuracy": accuracy,
                      "elapsed_s": round(elapsed, 4), "comm_s": round(state.comm_s, 4),
                      "digest": params_digest(model.module)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
