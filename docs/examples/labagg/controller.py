"""labagg's control plane: installs a job (workers, job, destinations, multicast group), clears its slots, shows
them to the controller CLI (`python -m controller slots`)."""

from __future__ import annotations

import argparse

import finsy
from finsy import P4TableAction, P4TableEntry, P4TableMatch

from controller.base import CliCommand, ProgramController, _first_count
from worker.job import JobConfig

INGRESS, EGRESS = "LabIngress", "LabEgress"


def _slots(ctl: LabController, args: argparse.Namespace) -> str:
    regs = {n: ctl.registers.read_range(f"{INGRESS}.lab_{n}", 2 * args.first, 2 * args.count)
            for n in ("bitmap", "count")}
    lines = ["slot set  bitmap                            count"]
    lines += [f"{args.first + i // 2:>4} {i % 2:>3}  {regs['bitmap'][i]:032b}  {regs['count'][i]:>5}"
              for i in range(2 * args.count)]
    return "\n".join(lines)


class LabController(ProgramController, program="labagg"):
    """Programs a switch running labagg.p4."""

    INGRESS, EGRESS = INGRESS, EGRESS
    COUNTERS = tuple(f"{INGRESS}.lab_{n}" for n in ("received", "aggregated", "retx_answered", "drop_unknown",
                                                     "drop_malformed", "drop_retx_incomplete", "drop_sim_ingress")) \
        + tuple(f"{EGRESS}.lab_{n}" for n in ("results_sent", "drop_sim_egress"))
    COUNTER_PREFIX = "lab_"
    JOB_TABLE = (f"{INGRESS}.lab_jobs", "hdr.lab.job_id")
    RECEIVED = "lab_received"
    OUTCOMES = ("lab_aggregated", "lab_retx_answered", "lab_drop_unknown", "lab_drop_malformed",
                "lab_drop_retx_incomplete")
    CLI = (CliCommand("slots", "show slot state (bitmap, count) of both sets", _first_count, _slots),)
    STATE = "slots"

    def create_job(self, job: JobConfig, *, mgid: int | None = None) -> int:
        mgid = mgid if mgid is not None else job.job_id + 1
        updates: list[object] = [
            finsy.P4MulticastGroupEntry(mgid, replicas=[(w.switch_port, w.rank) for w in job.workers]),
            P4TableEntry(f"{INGRESS}.lab_jobs", match=P4TableMatch({"hdr.lab.job_id": job.job_id}),
                         action=P4TableAction(f"{INGRESS}.lab_set_job", num_workers=job.num_workers, mgid=mgid,
                                              pool_base=job.pool.base, pool_size=job.pool.size))]
        self.client.insert(*updates, *self.worker_entries(job, job.workers))
        self.reset_job(job)
        return mgid

    def reset_job(self, job: JobConfig) -> None:
        """Clear the bitmaps and counts of the job's slots (both sets); values need no reset."""
        for name in ("bitmap", "count"):
            self.registers.fill(f"{INGRESS}.lab_{name}", 2 * job.pool.base, 2 * job.pool.size, 0)
