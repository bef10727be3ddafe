"""Workers: in-network all-reduce protocols and host-based baselines; library and CLI (`python -m worker`).

The root is the floor every protocol stands on; each protocol is a folder of its own above it, and the registry
and the tools stand on the protocols:

- root: `job` (`JobConfig`, the job file shared with topo/ and the controller), `codec` (header layouts from the
  compiled program's BMv2 JSON), `blocks` (a tensor in packets of N elements), `rto` (RFC 6298 estimator), `cwnd`
  (the adaptive window), `driver` (`WindowOptions`, the loop that runs a window core over a transport),
  `reliable` (the reliable window every in-network protocol subclasses: timers, Karn, restart, fast retransmit),
  `transport` (UDP and in-memory), `stats`, `errors`, `verify` (inputs and error bounds), `faultmodel`,
  `collective` (the `Collective` and sans-IO `Rank` interfaces, `InaCollective` over UDP), `plugin`
  (`ProtocolSpec`: the protocol interface), `barrier`, `arguments`, `launch`;
- protocols: `switchml/`, `atp/` (+ its PS, `python -m worker.atp.ps`), `host/` (ring and sharded PS over TCP),
  each with its `plugin.py`;
- registry and tools: `protocols` (name -> spec, plug-ins from $INA_PROTOCOLS), `faults` (fault plans),
  `scapy_layers`, `training/`, `__main__` (the command line).

The one-call SwitchML form is `worker.switchml.worker.allreduce(array, job, rank, options)`.
"""

from worker.driver import WindowOptions
from worker.errors import InputError, ProtocolError, Unreachable
from worker.job import JobConfig
from worker.stats import RunResult, Stats

__all__ = ["InputError", "JobConfig", "ProtocolError", "RunResult", "Stats", "Unreachable", "WindowOptions"]
