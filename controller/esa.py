"""The controller of esa.p4 (ESA-style preemptive aggregator allocation, p4src/esa.p4): atp.p4's controller, plus
each job's priority in its `atp_jobs` entry and its PS's address in `esa_servers` (where a partial aggregate of the
job that a higher-priority packet evicts is sent).

Priorities are 0..255, higher preempts lower. A job's is the controller's `priorities` entry, else its job file's
`priority`, else it follows its id: job j gets 255 - j, so a job installed earlier (a lower id) keeps its aggregators
against later ones — first come, first served by job, where ATP's pool serves first come by packet. `priority JOB P`
in `python -m controller` changes it on a running switch.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from finsy import P4TableAction, P4TableEntry, P4TableMatch

from controller.atp import COUNTERS, INGRESS, AtpController, format_aggregators
from controller.base import CliCommand, _first_count, _ip, _mac
from worker.arguments import in_range
from worker.job import JobConfig

__all__ = ["EsaController", "default_priority"]


def default_priority(job_id: int) -> int:
    """A job's priority unless the controller was told otherwise: earlier ids first."""
    return max(0, 255 - job_id)


def _priority_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("job", type=in_range(1, 255, "a job id"))
    p.add_argument("priority", type=in_range(0, 255, "a priority"))


def _set_priority(ctl: EsaController, args: argparse.Namespace) -> str:
    ctl.set_priority(args.job, args.priority)
    return f"job {args.job}: priority {args.priority}"


def _aggregators(ctl: EsaController, args: argparse.Namespace) -> str:
    owners = ctl.registers.read_range(f"{INGRESS}.atp_priority", args.first, args.count)
    lines = format_aggregators(ctl, args.first, args.count).splitlines()
    return "\n".join([lines[0] + "  priority"] + [f"{line}  {p}" for line, p in zip(lines[1:], owners)])


class EsaController(AtpController, program="esa"):
    """Programs one switch running esa.p4 for one or more jobs (see the module)."""

    COUNTERS = (*COUNTERS, f"{INGRESS}.atp_evicted")
    STATE_REGISTERS = (*AtpController.STATE_REGISTERS, "priority", "evicted_owner")
    CLI = (CliCommand("aggregators", "esa: show aggregator state (owner job/seq, bitmap, count, flags, priority)",
                      _first_count, _aggregators),
           *AtpController.CLI[1:],
           CliCommand("priority", "esa: set a job's priority (0..255, higher evicts lower)", _priority_arguments,
                      _set_priority, writes=True))

    def __init__(self, client: Any, registers: Any, *, rng: random.Random | None = None,
                 priorities: dict[int, int] | None = None) -> None:
        super().__init__(client, registers, rng=rng)
        self.priorities = dict(priorities or {})
        """Job id -> priority, for the jobs installed from now on (before the job file's `priority`)."""

    def job_parameters(self, job: JobConfig, level: int, mgid: int, rack: int) -> dict[str, int]:
        given = self.priorities.get(job.job_id, job.priority)
        return {**super().job_parameters(job, level, mgid, rack),
                "priority": given if given is not None else default_priority(job.job_id)}

    def job_entries(self, job: JobConfig) -> list[P4TableEntry]:
        assert job.ps is not None
        return [P4TableEntry(f"{INGRESS}.esa_servers", match=P4TableMatch({"meta.victim_job": job.job_id}),
                             action=P4TableAction(f"{INGRESS}.esa_set_server", ps_mac=_mac(job.ps.mac),
                                                  ps_ip=_ip(job.ps.ip)))]

    def set_priority(self, job_id: int, priority: int) -> None:
        """Change an installed job's priority (and remember it for the job's next install)."""
        if not 0 <= priority <= 255:
            raise ValueError(f"priority must be 0..255, got {priority}")
        self.modify_job(job_id, priority=priority)
        self.priorities[job_id] = priority

    def modify_job(self, job_id: int, **changes: int) -> None:
        """Change parameters of an installed job's atp_jobs entry, read back from the switch (nothing kept here);
        ValueError for a job that is not installed."""
        match = P4TableMatch({"hdr.atp.job_id": job_id})
        (current,) = self.client.read(P4TableEntry(f"{INGRESS}.atp_jobs", match=match)) or (None,)
        if current is None:
            raise ValueError(f"job {job_id} is not installed on this switch")
        params = {k: int.from_bytes(v, "big") if isinstance(v, bytes) else int(v)
                  for k, v in current.action.args.items()}
        self.client.modify(P4TableEntry(f"{INGRESS}.atp_jobs", match=match, action=P4TableAction(
            f"{INGRESS}.atp_set_job", **{**params, **changes})))
