"""AtpController: the control plane of p4src/atp.p4 — job roles, the PS, ECN threshold, aggregator inspection.

Names are those of `p4src/README.md`. A job is installed per switch with its level there: 0 on the workers' switch
(first level; it knows the workers and its rack), 1 on the PS's switch in a two-level network (merges racks). ACKs are
accepted only from the port towards the PS. Register access goes through `controller.registers` as for SwitchML.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import finsy
from finsy import P4TableAction, P4TableEntry, P4TableMatch

from controller.base import CliCommand, ProgramController, _first_count, _ip, _mac
from worker.arguments import at_least, in_range
from worker.atp.bitmap import Contributions
from worker.atp.header import ATP_UDP_PORT, flag_names
from worker.job import MAX_WORKERS, JobConfig, JobConfigError

__all__ = ["AggregatorState", "AtpController", "COUNTERS", "ECN_OFF", "RACK_RID_BASE"]

INGRESS = "AtpIngress"
EGRESS = "AtpEgress"
ECN_OFF = 0x7FFFF
"""ECN threshold that never marks (deq_qdepth has 19 bits)."""
RACK_RID_BASE = 256
"""Replica ids of a second-level switch's copies towards first-level switches (ranks are < 32)."""

COUNTERS = tuple(f"{INGRESS}.atp_{n}" for n in (
    "received", "aggregated", "duplicates", "collisions", "resend_to_ps", "raw_to_ps", "completed", "flushed", "acks",
    "freed", "transit", "drop_unknown", "drop_malformed", "drop_sim_ingress")) + tuple(
    f"{EGRESS}.atp_{n}" for n in ("acks_sent", "ecn_marked", "drop_sim_egress"))


@dataclass(frozen=True)
class AggregatorState:
    """One aggregator of the shared pool as the switch holds it."""

    index: int
    job_id: int
    seq: int
    bitmap: int
    racks: int
    count: int
    flags: int

    @property
    def free(self) -> bool:
        return self.job_id == 0 and self.seq == 0

    def contributors(self) -> list[int]:
        return [r for r in range(32) if self.bitmap >> r & 1]


def format_aggregators(ctl: AtpController, first: int, count: int) -> str:
    """One line per aggregator: owner (job, seq) or free, bitmap, contributors, count, flags."""
    lines = ["agtr  job        seq  bitmap                            count flags     contributors"]
    for a in ctl.aggregators(first, count):
        owner = f"{a.job_id:>3} {a.seq:>10}" if not a.free else f"{'free':>14}"
        lines.append(f"{a.index:>4}  {owner}  {a.bitmap:032b}  {a.count:>5} {flag_names(a.flags):<9} "
                     f"{','.join(map(str, a.contributors())) or '-'}")
    return "\n".join(lines)


def _aggregators(ctl: AtpController, args: argparse.Namespace) -> str:
    return format_aggregators(ctl, args.first, args.count)


def _threshold(text: str) -> int | None:
    return None if text == "off" else at_least(0)(text)


def _ecn_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("threshold", type=_threshold)


def _ecn(ctl: AtpController, args: argparse.Namespace) -> str:
    ctl.set_ecn_threshold(args.threshold)
    return f"ECN threshold {args.threshold if args.threshold is not None else 'off'}"


def _rack_port(text: str) -> tuple[int, int]:
    rack, sep, number = text.partition(":")
    if sep and rack.isdigit() and number.isdigit() and int(number) <= 511:
        return int(rack), int(number)
    raise argparse.ArgumentTypeError(f"{text!r} is not RACK:PORT (rack >= 0, port in [0, 511])")


class AtpController(ProgramController, program="atp"):
    """Programs one switch running atp.p4 for one or more jobs."""

    INGRESS = INGRESS
    EGRESS = EGRESS
    COUNTERS = COUNTERS
    COUNTER_PREFIX = "atp_"
    JOB_TABLE = (f"{INGRESS}.atp_jobs", "hdr.atp.job_id")
    DESTINATION_RANK = "standard_metadata.egress_rid"
    RECEIVED = "atp_received"
    OUTCOMES = tuple(f"atp_{n}" for n in ("aggregated", "duplicates", "collisions", "resend_to_ps", "raw_to_ps", "acks",
                                          "transit", "drop_unknown", "drop_malformed"))
    CLI = (CliCommand("aggregators", "atp: show aggregator state (owner job/seq, bitmap, count, flags)", _first_count,
                      _aggregators),
           CliCommand("ecn", "atp: mark ECN when the egress queue holds >= THRESHOLD packets ('off': never)",
                      _ecn_arguments, _ecn, writes=True))
    STATE = "aggregators"
    STATE_REGISTERS = ("owner", "bitmap", "racks", "count", "flags")
    """The per-aggregator registers (after `atp_`) a reset clears."""

    @classmethod
    def add_job_arguments(cls, p: argparse.ArgumentParser) -> None:
        p.add_argument("--level", type=int, choices=(0, 1), default=0,
                       help="atp: 0 = this switch aggregates the job's workers (first level), 1 = it merges racks")
        p.add_argument("--rack", type=at_least(0), default=0,
                       help="atp, level 0: this switch's rack (whose workers it serves)")
        p.add_argument("--ack-port", type=in_range(0, 511, "a switch port"), default=None,
                       help="atp: port the PS's ACKs arrive on (default: the PS's)")
        p.add_argument("--rack-port", type=_rack_port, action="append", default=[], metavar="RACK:PORT",
                       help="atp, level 1: the port towards rack RACK's switch (repeat)")

    @classmethod
    def job_options(cls, args: argparse.Namespace) -> dict[str, Any]:
        return {"level": args.level, "rack": args.rack, "ack_port": args.ack_port,
                "rack_ports": dict(args.rack_port) or None}

    def create_job(self, job: JobConfig, *, level: int = 0, rack: int = 0, ack_port: int | None = None,
                   mgid: int | None = None, rack_ports: dict[int, int] | None = None,
                   rack_addresses: Mapping[int, tuple[str, str]] | None = None) -> int:
        """Install the job's role on this switch and return its multicast group id.

        level 0 (workers' switch): the job entry with this switch's rack, one atp_workers and atp_destinations entry
        and one replica per worker of `rack` (at most 32; each worker's bit is `worker.atp.bitmap`'s: its rank, or in a
        job of more than 32 workers its place in the rack); ACKs accepted from `ack_port` (default: the PS's port).
        level 1 (PS's switch of a two-level network): the job entry and one replica per rack (at most 32) towards
        `rack_ports[rack]`; with `rack_addresses` (rack -> (MAC, IPv4)), each rack's replica leaves addressed to its
        rack switch (UDP to ATP's port, so that switch parses it), for switches in between that forward by MAC (a
        leaf–spine network's spines); without, it leaves unchanged (the rack switch is the next hop)."""
        if job.ps is None:
            raise JobConfigError(f"job {job.job_id}: ATP needs a parameter server (\"ps\" in the job file)")
        if level not in (0, 1):
            raise ValueError(f"level must be 0 or 1, got {level}")
        mgid = mgid if mgid is not None else job.job_id + 1
        ack_port = job.ps.switch_port if ack_port is None else ack_port
        if level == 0:
            members = [w for w in job.workers if w.rack == rack]
            if len(members) > MAX_WORKERS:
                raise ValueError(f"job {job.job_id} has {len(members)} workers on this switch, but an ATP packet "
                                 f"carries a {MAX_WORKERS}-bit worker bitmap: more workers aggregate on two levels "
                                 f"(racks of at most {MAX_WORKERS})")
            replicas = [(w.switch_port, w.rank) for w in members]
        else:
            if not rack_ports:
                raise ValueError("a second-level switch needs rack_ports (rack -> port towards its switch)")
            if len(rack_ports) > MAX_WORKERS:
                raise ValueError(f"job {job.job_id} has {len(rack_ports)} racks, but an ATP packet carries a "
                                 f"{MAX_WORKERS}-bit rack bitmap")
            unknown = set(rack_addresses or {}) - set(rack_ports)
            if unknown:
                raise ValueError(f"rack_addresses for racks without a port: {sorted(unknown)}")
            members = []
            replicas = [(port, RACK_RID_BASE + r) for r, port in sorted(rack_ports.items())]
        bits = Contributions(job)
        updates: list[object] = [
            finsy.P4MulticastGroupEntry(mgid, replicas=replicas),
            P4TableEntry(f"{INGRESS}.atp_jobs", match=P4TableMatch({"hdr.atp.job_id": job.job_id}),
                         action=P4TableAction(f"{INGRESS}.atp_set_job", **self.job_parameters(job, level, mgid, rack))),
            P4TableEntry(f"{INGRESS}.atp_ack_ports",
                         match=P4TableMatch({"hdr.atp.job_id": job.job_id, "standard_metadata.ingress_port": ack_port}),
                         action=P4TableAction(f"{INGRESS}.atp_allow_ack")),
        ]
        for r, (mac, ip) in sorted((rack_addresses or {}).items()):
            updates.append(P4TableEntry(
                f"{EGRESS}.atp_destinations",
                match=P4TableMatch({"hdr.atp.job_id": job.job_id, "standard_metadata.egress_rid": RACK_RID_BASE + r}),
                action=P4TableAction(f"{EGRESS}.atp_set_destination", switch_mac=_mac(job.switch.mac),
                                     switch_ip=_ip(job.switch.ip), worker_mac=_mac(mac), worker_ip=_ip(ip),
                                     worker_port=ATP_UDP_PORT)))
        updates += self.job_entries(job)
        self.client.insert(*updates, *self.worker_entries(job, members, {w.rank: bits.bit(w.rank) for w in members}))
        return mgid

    def job_parameters(self, job: JobConfig, level: int, mgid: int, rack: int) -> dict[str, int]:
        """The parameters of the job's atp_set_job (a variant of the program may take more)."""
        return {"level": level, "mgid": mgid, "rack": rack}

    def job_entries(self, job: JobConfig) -> list[P4TableEntry]:
        """Entries a variant of the program installs per job beside atp.p4's (none here)."""
        return []

    def reset_pool(self, first: int, count: int) -> None:
        """Free aggregators [first, first+count) (every job's: the pool is shared; values need no reset)."""
        for name in self.STATE_REGISTERS:
            self.registers.fill(f"{INGRESS}.atp_{name}", first, count, 0)

    def reset_job(self, job: JobConfig) -> None:
        """Free the aggregators of the job's range (shared: do it while no job uses them)."""
        self.reset_pool(job.pool.base, job.pool.size)

    def set_ecn_threshold(self, threshold: int | None) -> None:
        """Mark ECN on ATP packets leaving while the egress queue holds >= threshold packets (None: never)."""
        value = ECN_OFF if threshold is None else threshold
        if not 0 <= value <= ECN_OFF:
            raise ValueError(f"ECN threshold must be in [0, {ECN_OFF}], got {value}")
        self.client.modify(P4TableEntry(f"{EGRESS}.atp_ecn", is_default_action=True,
                                        action=P4TableAction(f"{EGRESS}.atp_set_ecn_threshold", threshold=value)))

    def aggregators(self, first: int, count: int) -> list[AggregatorState]:
        """State of aggregators [first, first+count)."""
        regs = {n: self.registers.read_range(f"{INGRESS}.atp_{n}", first, count)
                for n in ("owner", "bitmap", "racks", "count", "flags")}
        return [AggregatorState(first + i, regs["owner"][i] >> 32, regs["owner"][i] & 0xFFFFFFFF, regs["bitmap"][i],
                                regs["racks"][i], regs["count"][i], regs["flags"][i]) for i in range(count)]

    def missing_ranks(self, job: JobConfig) -> list[int]:
        everyone = (1 << job.num_workers) - 1
        partial = [a.bitmap for a in self.aggregators(job.pool.base, job.pool.size)
                   if a.job_id == job.job_id and a.bitmap and a.bitmap != everyone]
        missing = everyone
        for bitmap in partial:
            missing &= ~bitmap
        return [r for r in range(job.num_workers) if partial and missing >> r & 1]

    def occupancy(self, first: int, count: int) -> dict[int, int]:
        """Aggregators of [first, first+count) in use, per owning job id."""
        out: dict[int, int] = {}
        for a in self.aggregators(first, count):
            if not a.free:
                out[a.job_id] = out.get(a.job_id, 0) + 1
        return out
