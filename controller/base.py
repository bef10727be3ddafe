"""What every INA program's controller shares: L2 forwarding, the drop simulator, per-job counters, the CLI's view.

Each program of `p4src/` has the same L2 table (`l2_forward`), drop simulator (`drop_sim_ingress` /
`drop_sim_egress`) and per-job counter arrays (index = job id, 256 = no readable job id) in its own ingress and egress
controls; a subclass names its program (`class SwitchMLController(ProgramController, program="switchml")`, which
registers it in `CONTROLLERS`), those controls, its counters and its commands in the controller CLI (`CLI`: how its
switch state reads, e.g. `slots`; what else it sets, e.g. ATP's `ecn`).
"""

from __future__ import annotations

import argparse
import ipaddress
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import finsy
from finsy import P4TableAction, P4TableEntry, P4TableMatch

from controller.client import P4RuntimeClient
from controller.registers import Registers
from worker.job import JobConfig, WorkerSpec

__all__ = ["CONTROLLERS", "CliCommand", "ProgramController", "NO_JOB_INDEX", "FLOOD_MGID", "PROB_SCALE"]

NO_JOB_INDEX = 256
"""Counter cell of packets without a readable job id."""
FLOOD_MGID = 1024
"""Multicast group used to flood broadcast frames (ARP) to every host port."""
PROB_SCALE = 65535
"""Drop probability p is installed as round(p * 65535)."""


def _mac(text: str) -> int:
    return int(text.replace(":", ""), 16)


def _ip(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


CONTROLLERS: dict[str, type[ProgramController]] = {}
"""P4 program -> its controller class (each subclass registers itself; `controller.programs` imports them)."""


@dataclass(frozen=True)
class CliCommand:
    """A command of the controller CLI that belongs to one program's controller (`python -m controller NAME`)."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    """Adds the command's arguments to its subparser."""
    run: Callable[[Any, argparse.Namespace], str]
    """(the controller, the parsed arguments) -> what to print."""
    writes: bool = False
    """The command changes the switch (the CLI then arbitrates as the primary controller)."""


def _first_count(p: argparse.ArgumentParser) -> None:
    from worker.arguments import at_least

    p.add_argument("first", type=at_least(0))
    p.add_argument("count", type=at_least(1), nargs="?", default=8)


class ProgramController:
    """The controller of one switch running one of the INA programs."""

    PROGRAM: ClassVar[str]
    """The P4 program it controls (p4src/<PROGRAM>.p4)."""
    INGRESS: ClassVar[str]
    EGRESS: ClassVar[str]
    COUNTERS: ClassVar[tuple[str, ...]]
    """Fully qualified names of the program's per-job counters."""
    COUNTER_PREFIX: ClassVar[str]
    """The prefix of its names ("ina_"): stripped from counter names in reports; its per-worker tables and actions
    are `<prefix>workers`, `<prefix>set_worker`, `<prefix>destinations`, `<prefix>set_destination`."""
    JOB_TABLE: ClassVar[tuple[str, str]]
    """(table, match field) of the table that holds one entry per installed job, keyed by job id alone."""
    DESTINATION_RANK: ClassVar[str] = "meta.dst_rank"
    """The rank field its destinations table matches (with the job id): the result's addressee."""
    RECEIVED: ClassVar[str]
    """The per-job counter of every packet of its protocol the switch took in (names without the control)."""
    OUTCOMES: ClassVar[tuple[str, ...]]
    """The per-job counters of what became of them: for every job index, RECEIVED is their sum."""
    CLI: ClassVar[tuple[CliCommand, ...]] = ()
    """Its commands in the controller CLI; the first shows its switch state (`watch` shows it too)."""
    STATE: ClassVar[str] = "slots"
    """What its switch state is made of, for messages ("slots", "aggregators")."""

    def __init_subclass__(cls, program: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if program is not None:
            cls.PROGRAM = program
            CONTROLLERS[program] = cls

    @classmethod
    def add_job_arguments(cls, p: argparse.ArgumentParser) -> None:
        """Its options of the CLI's `job-create` (how a job is installed on this switch)."""

    @classmethod
    def job_options(cls, args: argparse.Namespace) -> dict[str, Any]:
        """`create_job` keyword arguments from the parsed `job-create` options."""
        return {}

    @property
    def epochs(self) -> dict[int, int]:
        """The epoch this controller last installed for each job id (a program without epochs: none)."""
        return {}

    def format_state(self, first: int, count: int) -> str:
        """Its state command's table of [first, first + count)."""
        return self.CLI[0].run(self, argparse.Namespace(first=first, count=count)) if self.CLI else ""

    @classmethod
    def runs_on(cls, p4info_tables: set[str]) -> bool:
        """Whether a pipeline with these (fully qualified) table names is this controller's program."""
        return cls.JOB_TABLE[0] in p4info_tables

    def installed_jobs(self) -> list[int]:
        """The job ids installed on this switch (entries of JOB_TABLE)."""
        entries = self.client.read(P4TableEntry(self.JOB_TABLE[0]))
        return sorted(int(next(iter(e.match.values()))) for e in entries if e.match)

    def __init__(self, client: P4RuntimeClient, registers: Registers, *, rng: random.Random | None = None) -> None:
        self.client = client
        self.registers = registers
        self.rng = rng or random.Random()
        """Where the controller's choices come from (SwitchML's epochs): seeded, a run replays."""

    def create_job(self, job: JobConfig, **options: Any) -> int:
        """Install a job on this switch; returns its multicast group id. `options` are the program's own (a
        two-level program's `level`, `rack`, `ack_port`, `rack_ports`: topo.twotier installs them)."""
        raise NotImplementedError

    def reset_job(self, job: JobConfig) -> None:
        """Clear the job's aggregation state on this switch."""
        raise NotImplementedError

    def missing_ranks(self, job: JobConfig) -> list[int]:
        """Ranks absent from every partial aggregate the switch holds for the job (after a worker died: that
        worker); [] when no aggregate is partial."""
        return []

    def worker_entries(self, job: JobConfig, workers: Iterable[WorkerSpec],
                       bits: Mapping[int, int] | None = None) -> list[P4TableEntry]:
        """Each worker's entries in the tables every INA program names alike (after COUNTER_PREFIX):
        `<prefix>workers` (its port, IPv4 and UDP source and the job -> its rank, `<prefix>set_worker`; `bits`: rank ->
        the value set_worker gets instead) in ingress, `<prefix>destinations` ((job, rank) -> the switch's and the
        worker's addresses, `<prefix>set_destination`) in egress."""
        ig, eg, prefix, job_field = self.INGRESS, self.EGRESS, self.COUNTER_PREFIX, self.JOB_TABLE[1]
        out = []
        for w in workers:
            out.append(P4TableEntry(
                f"{ig}.{prefix}workers",
                match=P4TableMatch({"standard_metadata.ingress_port": w.switch_port, "hdr.ipv4.srcAddr": _ip(w.ip),
                                    "hdr.udp.srcPort": w.udp_port, job_field: job.job_id}),
                action=P4TableAction(f"{ig}.{prefix}set_worker",
                                     rank=w.rank if bits is None else bits[w.rank])))
            out.append(P4TableEntry(
                f"{eg}.{prefix}destinations", match=P4TableMatch({job_field: job.job_id, self.DESTINATION_RANK: w.rank}),
                action=P4TableAction(f"{eg}.{prefix}set_destination", switch_mac=_mac(job.switch.mac),
                                     switch_ip=_ip(job.switch.ip), worker_mac=_mac(w.mac), worker_ip=_ip(w.ip),
                                     worker_port=w.udp_port)))
        return out

    def install_forwarding(self, hosts: list[tuple[str, int]], ports: list[int]) -> None:
        """L2 entries for (host MAC, switch port) pairs, and broadcast flooding to `ports`."""
        ig = self.INGRESS
        entries = [P4TableEntry(f"{ig}.l2_forward", match=P4TableMatch({"hdr.ethernet.dstAddr": _mac(mac)}),
                                action=P4TableAction(f"{ig}.l2_set_port", port=port)) for mac, port in hosts]
        entries.append(P4TableEntry(f"{ig}.l2_forward", match=P4TableMatch({"hdr.ethernet.dstAddr": 0xFFFFFFFFFFFF}),
                                    action=P4TableAction(f"{ig}.l2_flood", mgid=FLOOD_MGID)))
        self.client.insert(finsy.P4MulticastGroupEntry(FLOOD_MGID, replicas=[(port, 0) for port in ports]), *entries)

    def set_drop_probability(self, port: int, *, ingress: float | None = None, egress: float | None = None) -> None:
        """Simulated loss on a switch port: probability in [0, 1] per direction (None leaves it unchanged)."""
        for direction, prob, ctl in (("ingress", ingress, self.INGRESS), ("egress", egress, self.EGRESS)):
            if prob is None:
                continue
            if not 0.0 <= prob <= 1.0:
                raise ValueError(f"{direction} drop probability {prob} is not in [0, 1]")
            entry = P4TableEntry(f"{ctl}.drop_sim_{direction}",
                                 match=P4TableMatch({f"standard_metadata.{direction}_port": port}),
                                 action=P4TableAction(f"{ctl}.set_{direction}_drop_prob",
                                                      prob=round(prob * PROB_SCALE)))
            existing = self.client.read(P4TableEntry(f"{ctl}.drop_sim_{direction}",
                                                     match=P4TableMatch({f"standard_metadata.{direction}_port": port})))
            (self.client.modify if existing else self.client.insert)(entry)

    def counters(self, job_id: int | None) -> dict[str, tuple[int, int]]:
        """(packets, bytes) of every per-job counter for a job (None: traffic without a readable job id)."""
        index = NO_JOB_INDEX if job_id is None else job_id
        out = {}
        for name in self.COUNTERS:
            (entry,) = self.client.read(finsy.P4CounterEntry(name, index=index))
            data = entry.data or finsy.P4CounterData()
            out[name.split(".", 1)[1]] = (data.packet_count, data.byte_count)
        return out
