"""SwitchMLController: the control plane of p4src/switchml.p4 — jobs, forwarding, loss injection, inspection.

Table, action, register and counter names are those of `p4src/README.md` (the program's control-plane contract).
Everything goes over P4Runtime except register access, which uses `controller.registers` (P4Runtime on the embedded
switch, BMv2's Thrift runtime on real BMv2).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import finsy
from finsy import P4TableAction, P4TableEntry, P4TableMatch

from controller.base import FLOOD_MGID, CliCommand, ProgramController, _first_count
from worker.job import JobConfig

__all__ = ["SlotState", "SwitchMLController", "COUNTERS", "FLOOD_MGID", "max_workers"]

INGRESS = "SwitchMLIngress"
EGRESS = "SwitchMLEgress"
EPOCHS = 127
"""Epochs are 1..127 (7 bits of a RESULT's flags)."""

COUNTERS = (
    f"{INGRESS}.ina_received", f"{INGRESS}.ina_aggregated", f"{INGRESS}.ina_multicast",
    f"{INGRESS}.ina_retx_answered", f"{INGRESS}.ina_drop_unknown", f"{INGRESS}.ina_drop_malformed",
    f"{INGRESS}.ina_drop_retx_incomplete", f"{INGRESS}.ina_drop_sim_ingress", f"{EGRESS}.ina_results_sent",
    f"{EGRESS}.ina_drop_sim_egress", f"{EGRESS}.ina_drop_no_destination",
)


@dataclass(frozen=True)
class SlotState:
    """One (slot, set) of the aggregation pool as the switch holds it."""

    slot: int
    set: int
    bitmap: int
    countdown: int
    exponent: int

    def contributors(self) -> list[int]:
        """Ranks whose contribution the set holds."""
        return [r for r in range(self.bitmap.bit_length()) if self.bitmap >> r & 1]


def max_workers(schema: Any) -> int:
    """Workers a job may have on this build of switchml.p4: the width of its worker bitmap (the P4Info's
    SwitchMLIngress.ina_bitmap, bit<W>: 32 by default, W with -D INA_MAX_WORKERS=W)."""
    return int(schema.registers[f"{INGRESS}.ina_bitmap"].type_spec.bitwidth)


def format_slots(ctl: SwitchMLController, first: int, count: int) -> str:
    """One line per (slot, set): bitmap as bits (as many as the program's bitmap has), contributors, countdown,
    exponent."""
    width = ctl.max_workers()
    lines = [f"slot set  {'bitmap':<{width}}  countdown exponent contributors"]
    for s in ctl.slots(first, count):
        lines.append(f"{s.slot:>4} {s.set:>3}  {s.bitmap:0{width}b}  {s.countdown:>9} {s.exponent:>8} "
                     f"{','.join(map(str, s.contributors())) or '-'}")
    return "\n".join(lines)


def _slots(ctl: SwitchMLController, args: argparse.Namespace) -> str:
    return format_slots(ctl, args.first, args.count)


class SwitchMLController(ProgramController, program="switchml"):
    """Programs one switch running switchml.p4 for one or more all-reduce jobs."""

    INGRESS = INGRESS
    EGRESS = EGRESS
    COUNTERS = COUNTERS
    COUNTER_PREFIX = "ina_"
    JOB_TABLE = (f"{INGRESS}.ina_jobs", "hdr.ina.job_id")
    RECEIVED = "ina_received"
    OUTCOMES = ("ina_aggregated", "ina_retx_answered", "ina_drop_unknown", "ina_drop_malformed",
                "ina_drop_retx_incomplete")
    CLI = (CliCommand("slots", "show slot state (bitmap, countdown, exponent) of both sets", _first_count, _slots),)
    STATE = "slots"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._epochs: dict[int, int] = {}

    # --- setup ------------------------------------------------------------------------------------------------

    def create_job(self, job: JobConfig, *, mgid: int | None = None, epoch: int | None = None) -> int:
        """Install a job: its ina_jobs entry, a fresh epoch in ina_epochs (`epoch`, default: different from the
        last one this controller gave, starting at random), one ina_workers and ina_destinations entry and one
        replica per worker, then reset its slots. Returns the job's multicast group id. ValueError when the job has
        more workers than the program's worker bitmap holds (`max_workers`)."""
        limit = self.max_workers()
        if job.num_workers > limit:
            raise ValueError(f"job {job.job_id} has {job.num_workers} workers, but the switch's program holds at most "
                             f"{limit} per job (its worker bitmap {INGRESS}.ina_bitmap is bit<{limit}>): build "
                             f"switchml.p4 with -D INA_MAX_WORKERS=W for W = 64, 128, 256 or 512 workers")
        mgid = mgid if mgid is not None else job.job_id + 1
        if epoch is None:
            last = self._epochs.get(job.job_id, self.rng.randrange(EPOCHS))
            epoch = last % EPOCHS + 1
        if not 1 <= epoch <= EPOCHS:
            raise ValueError(f"epoch must be 1..{EPOCHS}, got {epoch}")
        self._epochs[job.job_id] = epoch
        updates: list[object] = [
            finsy.P4MulticastGroupEntry(mgid, replicas=[(w.switch_port, w.rank) for w in job.workers]),
            P4TableEntry(f"{INGRESS}.ina_jobs", match=P4TableMatch({"hdr.ina.job_id": job.job_id}),
                         action=P4TableAction(f"{INGRESS}.ina_set_job", num_workers=job.num_workers, mgid=mgid,
                                              pool_base=job.pool.base, pool_size=job.pool.size)),
            P4TableEntry(f"{INGRESS}.ina_epochs", match=P4TableMatch({"hdr.ina.job_id": job.job_id}),
                         action=P4TableAction(f"{INGRESS}.ina_set_epoch", epoch=epoch)),
        ]
        self.client.insert(*updates, *self.worker_entries(job, job.workers))
        self.reset_job(job)
        return mgid

    def reset_job(self, job: JobConfig) -> None:
        """Clear the bitmaps and countdowns of the job's slots (both sets); values need no reset."""
        start, count = 2 * job.pool.base, 2 * job.pool.size
        for name in (f"{INGRESS}.ina_bitmap", f"{INGRESS}.ina_countdown"):
            self.registers.fill(name, start, count, 0)

    def pool_slots(self) -> int:
        """Slots of the program's pool (half the cells of its per-set registers)."""
        schema = getattr(self.client, "schema", None)
        if schema is not None:
            return schema.registers[f"{INGRESS}.ina_bitmap"].size // 2
        raise ValueError("no P4Info: push the program or attach to a switch that runs it")

    def max_workers(self) -> int:
        """Workers a job may have on the program (the width of its worker bitmap, `max_workers(schema)`)."""
        schema = getattr(self.client, "schema", None)
        if schema is not None:
            return max_workers(schema)
        raise ValueError("no P4Info: push the program or attach to a switch that runs it")

    @property
    def epochs(self) -> dict[int, int]:
        """The epoch this controller last installed for each job id."""
        return dict(self._epochs)

    # --- inspection -------------------------------------------------------------------------------------------

    def missing_ranks(self, job: JobConfig) -> list[int]:
        everyone = (1 << job.num_workers) - 1
        # in progress = contributions still expected (countdown > 0); a finished set keeps stale bits (cleared
        # lazily, worker by worker, by the next use of the other set), so its bitmap says nothing
        partial = [s.bitmap for s in self.slots(job.pool.base, job.pool.size) if s.countdown > 0]
        missing = everyone
        for bitmap in partial:
            missing &= ~bitmap
        return [r for r in range(job.num_workers) if partial and missing >> r & 1]

    def slots(self, first: int, count: int) -> list[SlotState]:
        """State of slots [first, first+count), both sets (ValueError naming the valid range when outside it)."""
        size = self.pool_slots()
        if count < 1 or first < 0 or first + count > size:
            raise ValueError(f"slots {first}..{first + count - 1} are outside the pool: slots 0..{size - 1} "
                             f"({size} slots, two sets each), at least one")
        regs = {name: self.registers.read_range(f"{INGRESS}.ina_{name}", 2 * first, 2 * count)
                for name in ("bitmap", "countdown", "exponent")}
        return [SlotState(slot=first + i // 2, set=i % 2, bitmap=regs["bitmap"][i], countdown=regs["countdown"][i],
                          exponent=regs["exponent"][i]) for i in range(2 * count)]
