"""A Python reference model of the switch's INA slot logic (SwitchML algorithm, anchors §2a), for worker tests.

Per slot and set: a worker bitmap, a countdown of missing contributions, the int32 element sums and the max exponent.
First contribution overwrites, later ones add (int32 wraparound), the exponent takes the max; writing one set clears
the worker's bit in the other set (lazy reset). The contribution that completes a slot multicasts the result to
every worker of the job; a retransmission to a completed slot is answered by unicast with the stored result; a
retransmission to an incomplete slot is dropped. Workers are recognised by (ip, udp_port); unknown senders,
packets of another job, bad slots and malformed packets are dropped and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from worker.codec import MalformedPacket
from worker.job import JobConfig
from worker.switchml.header import MSG_DATA, MSG_RESULT, Codec, InaHeader

Endpoint = tuple[str, int]


@dataclass
class SlotState:
    """One (slot, set) cell."""

    bitmap: int = 0
    count: int = 0
    values: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    exponent: int = 0


class SwitchModel:
    """The slot logic of p4src/switchml.p4, as the worker expects it."""

    def __init__(self, codec: Codec, jobs: list[JobConfig], num_slots: int = 1024) -> None:
        self.codec = codec
        self.num_slots = num_slots
        self.senders: dict[Endpoint, tuple[JobConfig, int]] = {}
        for job in jobs:
            for w in job.workers:
                self.senders[(w.ip, w.udp_port)] = (job, w.rank)
        self.cells = [[SlotState(values=np.zeros(codec.num_elems, np.int32)) for _ in range(2)]
                      for _ in range(num_slots)]
        self.counters: Counter[str] = Counter()
        self.alive = True

    def receive(self, src: Endpoint, data: bytes) -> list[tuple[Endpoint, bytes]]:
        """Process one DATA payload from src; returns the (destination, payload) pairs the switch sends."""
        if not self.alive:
            return []
        sender = self.senders.get(src)
        if sender is None:
            self.counters["unknown_sender"] += 1
            return []
        job, rank = sender
        try:
            hdr, values = self.codec.decode(data)
        except MalformedPacket:
            self.counters["malformed"] += 1
            return []
        if hdr.msg_type != MSG_DATA or hdr.job_id != job.job_id or hdr.slot >= self.num_slots:
            self.counters["dropped"] += 1
            return []
        self.counters["received"] += 1
        cell = self.cells[hdr.slot][hdr.set]
        other = self.cells[hdr.slot][1 - hdr.set]
        wbit = 1 << rank
        before = cell.bitmap
        cell.bitmap |= wbit
        other.bitmap &= ~wbit
        if before & wbit:  # retransmission
            if cell.count == 0:
                self.counters["retransmission_answered"] += 1
                return [(src, self._result(hdr, cell, rank))]
            self.counters["retransmission_dropped"] += 1
            return []
        self.counters["aggregated"] += 1
        if before == 0:
            cell.values = values.copy()
            cell.exponent = hdr.exponent
            cell.count = job.num_workers - 1
        else:
            cell.values = (cell.values.astype(np.int64) + values).astype(np.uint32).view(np.int32).copy()
            cell.exponent = max(cell.exponent, hdr.exponent)
            cell.count -= 1
        if cell.count:
            return []
        self.counters["multicast"] += 1
        return [((w.ip, w.udp_port), self._result(hdr, cell, w.rank)) for w in job.workers]

    def _result(self, hdr: InaHeader, cell: SlotState, rank: int) -> bytes:
        res = InaHeader(MSG_RESULT, hdr.job_id, hdr.pool_index, hdr.packet_id, cell.exponent, 0, rank)
        return self.codec.encode(res, cell.values)
