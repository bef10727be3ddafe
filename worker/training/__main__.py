"""One rank of a data-parallel training job on the digits data, gradients all-reduced by a testbed collective.

    python -m worker.training --job job.json --rank R [--protocol switchml|ring|ps] [--epochs 10] [--batch 64] [--lr 0.1]
                       [--hidden 32] [--seed 0] [--eval-every N] [--stop-at ACCURACY] [--barrier DIR]
                       [--program-json out/switchml.json]

Prints one JSON object per evaluation (each epoch, or every --eval-every steps: epoch, step, train_loss, test_loss,
test_accuracy, elapsed_s, comm_s) and a final one with "done": true, the parameter count and the CPU time the
all-reduces took (comm_cpu_s); --stop-at ends training at the first evaluation that reaches that accuracy. Exit codes as `python -m worker` (2: switch or peer unreachable, 3: bad configuration).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from worker.barrier import BarrierError, file_barrier
from worker.collective import CollectiveOptions
from worker.driver import WindowOptions
from worker.errors import Unreachable
from worker.job import JobConfig, JobConfigError
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, open_collective
from worker.training.data import load_digits_split
from worker.training.trainer import EpochRecord, TrainConfig, train


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m worker.training", description=__doc__.split("\n\n")[0])
    p.add_argument("--job", required=True)
    p.add_argument("--rank", required=True, type=int)
    p.add_argument("--protocol", "--algo", dest="protocol", choices=sorted(PROTOCOLS), default=DEFAULT_PROTOCOL)
    d = TrainConfig()
    p.add_argument("--epochs", type=int, default=d.epochs)
    p.add_argument("--batch", type=int, default=d.global_batch, help="global batch (split over the ranks)")
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--hidden", type=int, default=d.hidden)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--eval-every", type=int, default=d.eval_every, help="evaluate every N steps (0: each epoch)")
    p.add_argument("--stop-at", type=float, default=None, help="stop once the test accuracy reaches this")
    p.add_argument("--barrier", metavar="DIR")
    p.add_argument("--program-json", type=Path)
    args = p.parse_args(argv)
    try:
        job = JobConfig.load(args.job)
        cfg = TrainConfig(epochs=args.epochs, global_batch=args.batch, lr=args.lr, hidden=args.hidden,
                          seed=args.seed, eval_every=max(0, args.eval_every), stop_at=args.stop_at)
        if cfg.global_batch < job.num_workers:
            raise JobConfigError(f"--batch {cfg.global_batch} is smaller than the {job.num_workers} workers")
    except (JobConfigError, ValueError) as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
        return 3
    data = load_digits_split(seed=args.seed)
    options = CollectiveOptions(window=WindowOptions(), program_json=args.program_json)

    def report(rec: EpochRecord) -> None:
        print(json.dumps({"protocol": args.protocol, "rank": args.rank, **rec.as_dict()}), flush=True)

    try:
        with open_collective(args.protocol, job, args.rank, options) as coll:
            if args.barrier:
                file_barrier(args.barrier, args.rank, job.num_workers, 60.0)
            comm_cpu = [0.0]

            def allreduce(arr: np.ndarray) -> np.ndarray:
                c0 = time.process_time()
                try:
                    return coll.allreduce(arr)
                finally:
                    comm_cpu[0] += time.process_time() - c0
            hist = train(allreduce, args.rank, job.num_workers, data, cfg, on_epoch=report)
    except (Unreachable, BarrierError) as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
        print(f"training: error: {exc}", file=sys.stderr)
        return 2
    last = hist.epochs[-1] if hist.epochs else None
    print(json.dumps({"ok": True, "done": True, "protocol": args.protocol, "rank": args.rank,
                      "parameters": hist.params.size if hist.params is not None else 0,
                      "comm_cpu_s": round(comm_cpu[0], 4), **(last.as_dict() if last else {})}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
