"""The protocol interface: everything a tool needs to know of an all-reduce protocol, declared once, in the protocol's
own folder (`worker/switchml/plugin.py`, `worker/atp/plugin.py`, `worker/host/plugin.py`, or a plug-in folder of
one's own: docs/adding-a-protocol.md) and read from the registry (`worker.protocols`).

A `ProtocolSpec` holds facts (its P4 program, header, UDP port, default window, whether the switch aggregates,
whether a parameter server joins, how its state sits in switch memory) and the factories every tool calls:

- `rank`: one rank of an in-network protocol without sockets (`worker.collective.Rank`): the worker's CLI runs its
  cores over UDP, the in-process network (`topo.inprocess`) in fake time, the soak and the fuzzing on top of that;
- `open`: a host baseline's `worker.collective.Collective` (in-network protocols get `InaCollective` over `rank`);
- `host_steps`: a host baseline's algorithm as data (`worker.host.schedule`), which its `open` runs over sockets and
  the packet simulator over its TCP model;
- `ps_core`: the sans-IO parameter server of a protocol that has one (`ps_module` runs it as a host process);
- `faults`: its packets and state as a fault plan names them (`worker.faultmodel.ProtocolFaults`);
- `accounting`: the exactly-once check of an in-process run (every contribution counted once);
- `add_arguments` / `options`: its own command-line knobs and the options object its rank reads.

Its control plane is a `controller.base.ProgramController` subclass registered for its program (a floor above:
`controller.programs.controller_for(spec.program)`), which also gives the controller CLI its view of the switch.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worker.codec import find_program_json
from worker.collective import Collective, CollectiveOptions, InaCollective, Rank
from worker.driver import WindowOptions
from worker.faultmodel import ProtocolFaults
from worker.job import JobConfig

__all__ = ["P4SRC", "ProtocolSpec"]

P4SRC = Path(__file__).resolve().parents[1] / "p4src"
"""The repository's P4 programs (a built-in protocol's program is p4src/<program>.p4)."""


@dataclass(frozen=True)
class ProtocolSpec:
    """A registered protocol: its facts and its factories (see the module docstring)."""

    name: str
    description: str
    open: Callable[[JobConfig, int, CollectiveOptions], Collective] | None = None
    """A host baseline's rank (in-network protocols: None, `InaCollective` over `rank`)."""
    host_steps: Callable[[int, int], Sequence[Any]] | None = None
    """A host baseline: (rank, ranks) -> that rank's steps (`worker.host.schedule.Step`), the algorithm `open` runs
    over TCP sockets and the packet simulator (`topo.sim.hosts`) over its TCP model."""
    rank: Callable[[JobConfig, int, Any, CollectiveOptions], Rank] | None = None
    """In-network protocols: (job, rank, codec, options) -> the sans-IO rank."""
    codec: Any = None
    """In-network protocols: its packet codec class (`from_program_json(path or dict)`, `encode(header, values)`,
    `decode(data)`, `num_elems`), derived from the compiled program's JSON."""
    program: str | None = None
    """The P4 program (p4src/<program>.p4, or `source`) the switch runs for it; None (host baselines): the default
    protocol's, whose L2 forwarding carries their traffic."""
    source: Path | None = None
    """The program's P4 source (default: p4src/<program>.p4)."""
    program_env: str | None = None
    """The environment variable naming its compiled JSON (default: INA_<PROGRAM>_JSON)."""
    in_network: bool = False
    """The switch aggregates (the program's job must be installed); False: a host-based baseline."""
    needs_ps: bool = False
    """A parameter server host joins the network (and the job file names it)."""
    levels: int = 1
    """Levels of switches that can aggregate (2: rack switches and the switch above them)."""
    default_window: int | None = None
    """In-network protocols: packets in flight per worker when the options leave the window unset."""
    header_type: str | None = None
    """In-network protocols: the header type of its packets in the compiled program's BMv2 JSON."""
    udp_port: int | None = None
    """In-network protocols: the UDP port its packets are addressed to."""
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    """Adds its own options to the worker's command line (`python -m worker`)."""
    options: Callable[[argparse.Namespace], Any] | None = None
    """Its options object from the parsed command line (`CollectiveOptions.protocol`)."""
    ps_module: str | None = None
    """With needs_ps: the module the parameter server host runs (`python -m <ps_module>`)."""
    ps_core: Callable[[JobConfig, int], Any] | None = None
    """With needs_ps: the sans-IO parameter server of one job, (job, elements per packet) -> a core whose
    `on_packet(header, values)` returns the (header, values) replies and whose `stats` the accounting reads."""
    faults: ProtocolFaults | None = None
    """In-network protocols: its fault model for `worker.faults` (and which registers hold a job's state)."""
    trace_track: str | None = None
    """In-network protocols: the header field (`header.field[&MASK]`) whose value makes a track of the switch's
    timeline (`python -m switch --trace-track`): its slot or aggregator."""
    trace_fields: tuple[str, ...] = ()
    """Fields the switch's timeline records of every frame in and out (`--trace-field`)."""
    uplink_in_order: bool = False
    """The protocol assumes a worker's packets reach the switch in the order sent (SwitchML's window: a
    retransmission overtaking a later use of its slot would count twice), so fault plans reorder only downlinks."""
    sets_per_slot: int = 1
    """Copies of a slot's N values the switch keeps (SwitchML's shadow copies: 2): the memory a slot costs."""
    shared_pool: bool = False
    """Every job draws on one pool of the switch's memory (ATP); False: each job owns a static partition."""
    restart_error: type[Exception] | None = None
    """What a rank raises when the switch restarted mid-run (SwitchML's epochs); the soak checks it is raised."""
    accounting: Callable[[JobConfig, Any], str] | None = None
    """The exactly-once check of an in-process run (`topo.inprocess.JobRun`): "" when every contribution was
    counted once, else what differed."""
    fuzz_values: Mapping[str, Sequence[int]] = field(default_factory=dict)
    """Header field -> values the frame fuzzing draws often (message types, flags, slot bits), beside random ones."""
    scale_defines: Callable[[int], Mapping[str, str]] | None = None
    """workers -> the `-D` defines its program needs for a job of that many workers beyond the default build's
    (empty: the default build holds them); the packet simulator compiles the program with them."""

    def window_width(self, pool_size: int, window: int | None = None) -> int:
        """The packets in flight per worker this protocol keeps with a pool of pool_size slots and `--window`."""
        return WindowOptions(window=window).width(pool_size, self.default_window)

    @property
    def p4_source(self) -> Path:
        """Its program's P4 source."""
        return self.source or P4SRC / f"{self.program}.p4"

    @property
    def json_env(self) -> str:
        """The environment variable naming its compiled program's JSON."""
        return self.program_env or f"INA_{str(self.program).upper()}_JSON"

    def pool_size(self, cells: int, num_elems: int, partitions: int = 1) -> int:
        """Slots (aggregators) of one job for `cells` int32 cells of switch memory: a static partition of
        `partitions` (its share), or the whole shared pool."""
        share = 1 if self.shared_pool else partitions
        return cells // (share * self.sets_per_slot * num_elems)

    def jobs_at_once(self, jobs: int, partitions: int | None = None) -> int:
        """How many of `jobs` run at once: all of them on a shared pool, one per static partition otherwise."""
        return jobs if self.shared_pool else (partitions or jobs)

    def open_rank(self, job: JobConfig, rank: int, options: CollectiveOptions | None = None) -> Rank:
        """The sans-IO rank `rank` of job, its codec from the compiled program (options.program_json, else found by
        `worker.codec.find_program_json`)."""
        if self.rank is None:
            raise ValueError(f"{self.name} is not an in-network protocol: it has no sans-IO rank")
        options = options or CollectiveOptions()
        program = options.program_json or find_program_json(str(self.program), self.json_env)
        return self.rank(job, rank, self.codec.from_program_json(program), options)

    def open_collective(self, job: JobConfig, rank: int, options: CollectiveOptions | None = None) -> Collective:
        """Rank `rank` of job, ready to all-reduce (in-network: over its own UDP socket)."""
        options = options or CollectiveOptions()
        if self.open is not None:
            return self.open(job, rank, options)
        return InaCollective(self.open_rank(job, rank, options), options)
