"""Workers: in-network all-reduce (SwitchML) and host-based baselines; library and CLI (`python -m worker`).

Modules, lowest first:

- `job`: `JobConfig`, the job file shared with topo/ and the controller (load/save/validate).
- `header`: the INA packet `Codec`, derived from the compiled program's BMv2 JSON `header_types`.
- `scapy_layers`: Scapy layer generated from the same header types (`make_ina_layer`, `bind_ina_layer`).
- `quantize`: float32 -> int32 block floating point and its documented error bound.
- `blocks`: packet plans: int32 pass-through and float32 with the exponent sent one window ahead.
- `rto`: the adaptive retransmission timeout (RFC 6298 SRTT/RTTVAR estimator).
- `stats`: `RunTiming`, what every collective's run statistics share (elements, elapsed, goodput).
- `window`: the sans-IO protocol core: window over slots and sets, timeouts (adaptive, backoff), fast and timeout
  retransmission, statistics.
- `transport`: UDP socket transport and an in-memory fake for tests.
- `verify`: deterministic per-rank inputs and the check against the reference and the bound.
- `barrier`: a start barrier of a job's worker processes through a shared directory (CLI `--barrier`).
- `allreduce`: the driver (`Worker`) and the one-call `allreduce()`.
- `peers`: TCP links between a job's workers (and in-memory ones for tests) for the host-based baselines.
- `hostreduce`, `ring`, `ps`: the host-based baselines: ring all-reduce and a co-located sharded parameter server.
- `collective`: one interface and registry over every algorithm (`open_collective("switchml" | "ring" | "ps", ...)`).
- `__main__`: the command line (`python -m worker --job job.json --rank R ...`).

The one-call form is `worker.switchml.worker.allreduce(array, job, rank, options)` (not re-exported here, so that
`worker.switchml.worker` stays the module).
"""

from worker.driver import WindowOptions
from worker.job import JobConfig
from worker.stats import RunResult, Stats
from worker.switchml.header import Codec, InaHeader
from worker.switchml.window import SwitchUnreachable
from worker.switchml.worker import Worker

__all__ = [
    "Codec",
    "InaHeader",
    "JobConfig",
    "RunResult",
    "Stats",
    "SwitchUnreachable",
    "WindowOptions",
    "Worker",
]
