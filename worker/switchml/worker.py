"""SwitchML's rank: `Worker` makes a window core per all-reduce (`begin`/`end`, the sans-IO rank every tool runs,
`worker.collective.Rank`) and runs it over a transport (`run`); `allreduce()` is the one-call form.

A `Worker` remembers, per slot of the job's pool, which set the slot's next use takes, so consecutive all-reduces
in one process keep alternating sets (SwitchML shifts its pool index for the same reason). All workers of a job
must run the same sequence of all-reduces (same sizes, dtypes and window), as in any collective. A fresh process
assumes freshly installed (or reset) slots: every slot's first use is set 0.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from switch.timeline import Timeline
from worker.codec import CodecError, find_program_json
from worker.collective import run_rank
from worker.driver import WindowOptions
from worker.job import JobConfig
from worker.stats import RunResult
from worker.switchml.blocks import Float32Plan, Int32Plan
from worker.switchml.header import INA_UDP_PORT, Codec
from worker.switchml.verify import verify
from worker.switchml.window import Outgoing, Window
from worker.transport import Transport, UdpTransport
from worker.verify import Verdict

__all__ = ["Worker", "allreduce", "SWITCHML_WINDOW"]

SWITCHML_WINDOW = 64
"""W when the options leave it unset: the job's whole pool, as in SwitchML, where a worker keeps one packet in flight
per slot, but at most 64. Beyond that packets only queue at the switch (4 workers, a pool of 256, one network,
interleaved): 256 in flight gave 959k vs 975k elem/s without loss and 647k vs 739k at 1 % loss against 64, with more
timeouts; 128 gave 994k vs 871k without loss but 686k vs 771k at 1 %."""


class Worker:
    """One rank of a job, with its transport and codec; call allreduce() any number of times."""

    accept_any_source = False
    """Results come from the switch, the address the packets go to."""

    def __init__(
        self,
        job: JobConfig,
        rank: int,
        transport: Transport | None,
        codec: Codec,
        options: WindowOptions | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        timeline: Timeline | None = None,
    ) -> None:
        job.worker(rank)  # validates the rank
        if codec.num_elems != job.num_elems:
            raise CodecError(
                f"job {job.job_id} says num_elems={job.num_elems} but the compiled program carries "
                f"{codec.num_elems} elements per packet (compile with -D INA_NUM_ELEMS={job.num_elems})"
            )
        self.job = job
        self.rank = rank
        self.transport = transport
        self.codec = codec
        self.options = options or WindowOptions()
        self.clock = clock
        self.timeline = timeline
        self._next_set = [0] * job.pool.size
        self.decode = codec.decode
        self.decode_batch = codec.decode_batch

    def destination(self) -> tuple[str, str, int]:
        """(MAC, IP, UDP port) its packets go to: the switch."""
        return self.job.switch.mac, self.job.switch.ip, INA_UDP_PORT

    def encode(self, out: Outgoing) -> bytes:
        return self.codec.encode_fields(out.fields, out.values)

    def window_for(self, num_blocks: int) -> int:
        """W used for a tensor of num_blocks blocks (same on every worker)."""
        return max(1, min(self.options.width(self.job.pool.size, SWITCHML_WINDOW), num_blocks))

    def begin(self, array: np.ndarray, dtype: str | None = None) -> Window:
        """The window core of the next all-reduce of array; dtype "float32" or "int32" (default: from the array)."""
        arr = np.asarray(array)
        mode = dtype or ("int32" if np.issubdtype(arr.dtype, np.integer) else "float32")
        n_elems = self.job.num_elems
        num_blocks = -(-arr.size // n_elems)
        w = self.window_for(num_blocks)
        plan: Float32Plan | Int32Plan
        if mode == "float32":
            plan = Float32Plan(arr, n_elems, self.job.num_workers, w)
        elif mode == "int32":
            plan = Int32Plan(arr, n_elems)
        else:
            raise ValueError(f"dtype must be float32 or int32, got {mode!r}")
        base = self.job.pool.base
        win = Window(plan=plan, job_id=self.job.job_id, rank=self.rank, slots=[base + i for i in range(w)],
                     first_set=self._next_set[:w], options=self.options, timeline=self.timeline)
        win.stats.elements = arr.size
        return win

    def end(self, win: Window) -> RunResult:
        """The outcome of a finished core; the next all-reduce continues each slot's alternation of sets."""
        self._next_set[: win.width] = win.next_first_set()
        plan = win.plan
        return RunResult(array=plan.output(), stats=win.stats,
                         exponents=plan.agreed if isinstance(plan, Float32Plan) else None)

    def run(self, array: np.ndarray, dtype: str | None = None) -> RunResult:
        """All-reduce array over the transport; dtype "float32" or "int32" (default: from the array)."""
        if self.transport is None:
            raise ValueError("this Worker has no transport: run its cores with begin()/end()")
        return run_rank(self, self.transport, array, dtype, self.clock)

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        """The element-wise sum of array over all workers of the job (float32 or int32, same shape)."""
        return self.run(array).array

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        """Check run against every rank's input: int32 exact, float32 within the block floating point bound."""
        return verify(run.array, inputs, self.job.num_elems, dtype, run.exponents)


def allreduce(
    array: np.ndarray,
    job: JobConfig,
    rank: int,
    options: WindowOptions | None = None,
    *,
    codec: Codec | None = None,
    bind_ip: str | None = None,
    switch_port: int = INA_UDP_PORT,
) -> np.ndarray:
    """All-reduce array as rank of job over UDP (one call; opens and closes its socket).

    codec defaults to the layout of the compiled switchml.p4 found by find_program_json().
    """
    codec = codec or Codec.from_program_json(find_program_json("switchml"))
    me = job.worker(rank)
    with UdpTransport((bind_ip or me.ip, me.udp_port), (job.switch.ip, switch_port)) as transport:
        return Worker(job, rank, transport, codec, options).allreduce(array)
