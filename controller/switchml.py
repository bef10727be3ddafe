"""SwitchMLController: the control plane of p4src/switchml.p4 — jobs, forwarding, loss injection, inspection.

Table, action, register and counter names are those of `p4src/README.md` (the program's control-plane contract).
Everything goes over P4Runtime except register access, which uses `controller.registers` (P4Runtime on the embedded
switch, BMv2's Thrift runtime on real BMv2).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import finsy
from finsy import P4TableAction, P4TableEntry, P4TableMatch

from controller.client import P4RuntimeClient
from controller.registers import Registers
from worker.job import JobConfig

__all__ = ["SlotState", "SwitchMLController", "COUNTERS", "FLOOD_MGID"]

INGRESS = "SwitchMLIngress"
EGRESS = "SwitchMLEgress"
NO_JOB_INDEX = 256
"""Counter cell of packets without a readable job id."""
FLOOD_MGID = 1024
"""Multicast group used to flood broadcast frames (ARP) to every host port."""
PROB_SCALE = 65535
"""Drop probability p is installed as round(p * 65535)."""

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
        return [r for r in range(32) if self.bitmap >> r & 1]


def _mac(text: str) -> int:
    return int(text.replace(":", ""), 16)


def _ip(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


class SwitchMLController:
    """Programs one switch running switchml.p4 for one or more all-reduce jobs."""

    def __init__(self, client: P4RuntimeClient, registers: Registers) -> None:
        self.client = client
        self.registers = registers

    # --- setup ------------------------------------------------------------------------------------------------

    def install_forwarding(self, hosts: list[tuple[str, int]], ports: list[int]) -> None:
        """L2 entries for (host MAC, switch port) pairs, and broadcast flooding to `ports`."""
        entries = [P4TableEntry(f"{INGRESS}.l2_forward", match=P4TableMatch({"hdr.ethernet.dstAddr": _mac(mac)}),
                                action=P4TableAction(f"{INGRESS}.l2_set_port", port=port)) for mac, port in hosts]
        entries.append(P4TableEntry(f"{INGRESS}.l2_forward",
                                    match=P4TableMatch({"hdr.ethernet.dstAddr": 0xFFFFFFFFFFFF}),
                                    action=P4TableAction(f"{INGRESS}.l2_flood", mgid=FLOOD_MGID)))
        self.client.insert(finsy.P4MulticastGroupEntry(FLOOD_MGID, replicas=[(port, 0) for port in ports]), *entries)

    def create_job(self, job: JobConfig, *, mgid: int | None = None) -> int:
        """Install a job: its ina_jobs entry, one ina_workers and ina_destinations entry and one replica per
        worker, then reset its slots. Returns the job's multicast group id."""
        mgid = mgid if mgid is not None else job.job_id + 1
        updates: list[object] = [
            finsy.P4MulticastGroupEntry(mgid, replicas=[(w.switch_port, w.rank) for w in job.workers]),
            P4TableEntry(f"{INGRESS}.ina_jobs", match=P4TableMatch({"hdr.ina.job_id": job.job_id}),
                         action=P4TableAction(f"{INGRESS}.ina_set_job", num_workers=job.num_workers, mgid=mgid,
                                              pool_base=job.pool.base, pool_size=job.pool.size)),
        ]
        for w in job.workers:
            updates.append(P4TableEntry(
                f"{INGRESS}.ina_workers",
                match=P4TableMatch({"standard_metadata.ingress_port": w.switch_port, "hdr.ipv4.srcAddr": _ip(w.ip),
                                    "hdr.udp.srcPort": w.udp_port, "hdr.ina.job_id": job.job_id}),
                action=P4TableAction(f"{INGRESS}.ina_set_worker", rank=w.rank)))
            updates.append(P4TableEntry(
                f"{EGRESS}.ina_destinations",
                match=P4TableMatch({"hdr.ina.job_id": job.job_id, "meta.dst_rank": w.rank}),
                action=P4TableAction(f"{EGRESS}.ina_set_destination", switch_mac=_mac(job.switch.mac),
                                     switch_ip=_ip(job.switch.ip), worker_mac=_mac(w.mac), worker_ip=_ip(w.ip),
                                     worker_port=w.udp_port)))
        self.client.insert(*updates)
        self.reset_job(job)
        return mgid

    def reset_job(self, job: JobConfig) -> None:
        """Clear the bitmaps and countdowns of the job's slots (both sets); values need no reset."""
        start, count = 2 * job.pool.base, 2 * job.pool.size
        for name in (f"{INGRESS}.ina_bitmap", f"{INGRESS}.ina_countdown"):
            self.registers.fill(name, start, count, 0)

    def set_drop_probability(self, port: int, *, ingress: float | None = None, egress: float | None = None) -> None:
        """Simulated loss on a switch port: probability in [0, 1] per direction (None leaves it unchanged)."""
        for direction, prob, ctl in (("ingress", ingress, INGRESS), ("egress", egress, EGRESS)):
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

    # --- inspection -------------------------------------------------------------------------------------------

    def counters(self, job_id: int | None) -> dict[str, tuple[int, int]]:
        """(packets, bytes) of every INA counter for a job (None: traffic without a readable job id)."""
        index = NO_JOB_INDEX if job_id is None else job_id
        out = {}
        for name in COUNTERS:
            (entry,) = self.client.read(finsy.P4CounterEntry(name, index=index))
            data = entry.data or finsy.P4CounterData()
            out[name.split(".", 1)[1]] = (data.packet_count, data.byte_count)
        return out

    def slots(self, first: int, count: int) -> list[SlotState]:
        """State of slots [first, first+count), both sets."""
        regs = {name: self.registers.read_range(f"{INGRESS}.ina_{name}", 2 * first, 2 * count)
                for name in ("bitmap", "countdown", "exponent")}
        return [SlotState(slot=first + i // 2, set=i % 2, bitmap=regs["bitmap"][i], countdown=regs["countdown"][i],
                          exponent=regs["exponent"][i]) for i in range(2 * count)]
