"""OmniReduce-style sparse blocks as a registered protocol: SwitchML's slots, sets and retransmission over
omnireduce.p4, where only blocks that are non-zero in some worker get a round and a zero block travels as a header
(`worker.switchml.sparse`). It lives in SwitchML's folder because its switch program, quantization and error model
are SwitchML's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from worker.job import JobConfig
from worker.stats import RunResult
from worker.switchml.faults import FAULTS
from worker.switchml.plugin import SWITCHML
from worker.switchml.sparse import NO_BLOCK, OMNIREDUCE_HEADER_TYPE, SparseCodec, SparsePlan, StreamWindow
from worker.switchml.worker import Worker

__all__ = ["OMNIREDUCE", "SparseWorker"]


class SparseWorker(Worker):
    """One rank of an omnireduce.p4 job: SwitchML's `Worker` (addresses, codec checks, sets continuing from one
    all-reduce to the next, verification) with a `StreamWindow` per all-reduce."""

    def begin(self, array: np.ndarray, dtype: str | None = None) -> StreamWindow:  # type: ignore[override]
        arr = np.asarray(array)
        mode = dtype or ("int32" if np.issubdtype(arr.dtype, np.integer) else "float32")
        w = self.window_for(-(-arr.size // self.job.num_elems))
        plan = SparsePlan(arr, self.job.num_elems, self.job.num_workers, w, mode)
        base = self.job.pool.base
        win = StreamWindow(plan=plan, job_id=self.job.job_id, rank=self.rank, slots=[base + i for i in range(w)],
                           first_set=self._next_set[:w], options=self.options, timeline=self.timeline)
        win.stats.elements = arr.size
        return win

    def end(self, win: StreamWindow) -> RunResult:  # type: ignore[override]
        self._next_set[: win.width] = win.next_first_set()
        plan = win.plan
        return RunResult(array=plan.output(), stats=win.stats,
                         exponents=plan.agreed if plan.mode == "float32" else None)


def accounting(job: JobConfig, run: Any) -> str:
    """Exactly once: the switch aggregated workers x rounds contributions (`ina_aggregated`), the rounds being the
    run's (the same in every worker: one per stream to announce, one per block non-zero in some worker)."""
    rounds = {w.total_rounds for w in run.windows}
    if len(rounds) != 1:
        return f"the workers took different numbers of rounds: {sorted(rounds)}"
    want = job.num_workers * rounds.pop()
    got = run.counters.get("ina_aggregated", 0)
    return "" if got == want else f"ina_aggregated {got}, expected {want} (workers x rounds)"


OMNIREDUCE = replace(
    SWITCHML, name="omnireduce",
    description="OmniReduce-style sparse blocks through the P4 switch (SwitchML's slots as streams; only blocks "
    "non-zero in some worker get a round, a zero block travels as a header)",
    rank=lambda job, rank, codec, o: SparseWorker(job, rank, None, codec, o.window, timeline=o.timeline),
    codec=SparseCodec, program="omnireduce", program_env="INA_OMNIREDUCE_JSON", header_type=OMNIREDUCE_HEADER_TYPE,
    trace_fields=("ina.msg_type", "ina.packet_id", "ina.pool_index", "ina.next_block", "ina.worker_rank"),
    faults=replace(FAULTS, state=[*FAULTS.state, ("SwitchMLIngress.ina_next", 2)]),
    accounting=accounting,
    fuzz_values={**SWITCHML.fuzz_values, "next_block": (0, 1, 2, NO_BLOCK)})
