"""The controller of release.p4 (straggler-tolerant aggregation, p4src/release.p4): esa.p4's controller, plus each
job's timeout in its `atp_jobs` entry: microseconds after a partial aggregate's first contribution at which the
switch may release it to the job's PS (0: never).

A job's timeout is the controller's `timeouts` entry, else its job file's `release_us`, else `DEFAULT_TIMEOUT_US`.
Every job gets the same priority (`EQUAL_PRIORITY`) unless its job file or `priorities` says otherwise, so only the
timeout evicts. `timeout JOB US` in `python -m controller` changes a job's timeout on a running switch.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from controller.atp import COUNTERS, INGRESS, AtpController
from controller.base import CliCommand, _first_count
from controller.esa import EsaController
from worker.arguments import in_range
from worker.job import JobConfig

__all__ = ["DEFAULT_TIMEOUT_US", "EQUAL_PRIORITY", "ReleaseController"]

DEFAULT_TIMEOUT_US = 10_000
"""Half the workers' least retransmission timeout (20 ms): a lagging partial aggregate leaves before they resend."""
EQUAL_PRIORITY = 0
MAX_TIMEOUT_US = 2**32 - 1


def _timeout_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("job", type=in_range(1, 255, "a job id"))
    p.add_argument("us", type=in_range(0, MAX_TIMEOUT_US, "a timeout in microseconds"))


def _set_timeout(ctl: ReleaseController, args: argparse.Namespace) -> str:
    ctl.set_timeout(args.job, args.us)
    return f"job {args.job}: timeout {args.us} us" + (" (never released)" if args.us == 0 else "")


def _aggregators(ctl: ReleaseController, args: argparse.Namespace) -> str:
    view = EsaController.CLI[0].run(ctl, args).splitlines()
    deadlines = ctl.registers.read_range(f"{INGRESS}.atp_deadline", args.first, args.count)
    return "\n".join([view[0] + "  deadline_us"] + [f"{line}  {d or '-'}" for line, d in zip(view[1:], deadlines)])


class ReleaseController(EsaController, program="release"):
    """Programs one switch running release.p4 for one or more jobs (see the module)."""

    COUNTERS = (*COUNTERS, f"{INGRESS}.atp_evicted", f"{INGRESS}.atp_expired")
    STATE_REGISTERS = (*EsaController.STATE_REGISTERS, "deadline")
    CLI = (CliCommand("aggregators", "release: show aggregator state (owner job/seq, bitmap, count, flags, "
                      "priority, deadline)", _first_count, _aggregators),
           *AtpController.CLI[1:],
           *EsaController.CLI[len(AtpController.CLI):],
           CliCommand("timeout", "release: set a job's timeout (us after a partial aggregate's first contribution "
                      "at which the switch may release it to the PS; 0: never)", _timeout_arguments, _set_timeout,
                      writes=True))

    def __init__(self, client: Any, registers: Any, *, rng: random.Random | None = None,
                 priorities: dict[int, int] | None = None, timeouts: dict[int, int] | None = None) -> None:
        super().__init__(client, registers, rng=rng, priorities=priorities)
        for job_id, us in (timeouts or {}).items():
            if not 0 <= us <= MAX_TIMEOUT_US:
                raise ValueError(f"job {job_id}: timeout must be 0..{MAX_TIMEOUT_US} us, got {us}")
        self.timeouts = dict(timeouts or {})
        """Job id -> timeout in us, for the jobs installed from now on (before the job file's `release_us`)."""

    def job_parameters(self, job: JobConfig, level: int, mgid: int, rack: int) -> dict[str, int]:
        params = super().job_parameters(job, level, mgid, rack)
        given = self.priorities.get(job.job_id, job.priority)
        timeout = self.timeouts.get(job.job_id, job.release_us)
        return {**params, "priority": EQUAL_PRIORITY if given is None else given,
                "timeout": DEFAULT_TIMEOUT_US if timeout is None else timeout}

    def set_timeout(self, job_id: int, us: int) -> None:
        """Change an installed job's timeout (and remember it for the job's next install)."""
        if not 0 <= us <= MAX_TIMEOUT_US:
            raise ValueError(f"timeout must be 0..{MAX_TIMEOUT_US} us, got {us}")
        self.modify_job(job_id, timeout=us)
        self.timeouts[job_id] = us
