"""What every INA program's controller shares: L2 forwarding, the drop simulator, per-job counters.

Each program of `p4src/` has the same L2 table (`l2_forward`), drop simulator (`drop_sim_ingress` /
`drop_sim_egress`) and per-job counter arrays (index = job id, 256 = no readable job id) in its own ingress and egress
controls; a subclass names those controls and its counters (`SwitchMLController`, `AtpController`).
"""

from __future__ import annotations

import ipaddress
from typing import ClassVar

import finsy
from finsy import P4TableAction, P4TableEntry, P4TableMatch

from controller.client import P4RuntimeClient
from controller.registers import Registers
from worker.job import JobConfig

__all__ = ["ProgramController", "NO_JOB_INDEX", "FLOOD_MGID", "PROB_SCALE"]

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


class ProgramController:
    """The controller of one switch running one of the INA programs."""

    INGRESS: ClassVar[str]
    EGRESS: ClassVar[str]
    COUNTERS: ClassVar[tuple[str, ...]]
    """Fully qualified names of the program's per-job counters."""
    COUNTER_PREFIX: ClassVar[str]
    """Stripped from counter names in counters()."""
    JOB_TABLE: ClassVar[tuple[str, str]]
    """(table, match field) of the table that holds one entry per installed job, keyed by job id alone."""

    @classmethod
    def runs_on(cls, p4info_tables: set[str]) -> bool:
        """Whether a pipeline with these (fully qualified) table names is this controller's program."""
        return cls.JOB_TABLE[0] in p4info_tables

    def installed_jobs(self) -> list[int]:
        """The job ids installed on this switch (entries of JOB_TABLE)."""
        entries = self.client.read(P4TableEntry(self.JOB_TABLE[0]))
        return sorted(int(next(iter(e.match.values()))) for e in entries if e.match)

    def __init__(self, client: P4RuntimeClient, registers: Registers) -> None:
        self.client = client
        self.registers = registers

    def create_job(self, job: JobConfig) -> int:
        """Install a job on this switch; returns its multicast group id."""
        raise NotImplementedError

    def reset_job(self, job: JobConfig) -> None:
        """Clear the job's aggregation state on this switch."""
        raise NotImplementedError

    def missing_ranks(self, job: JobConfig) -> list[int]:
        """Ranks absent from every partial aggregate the switch holds for the job (after a worker died: that
        worker); [] when no aggregate is partial."""
        return []

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
