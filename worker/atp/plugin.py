"""ATP as a registered protocol: its rank, its parameter server, packets, fault model and accounting."""

from __future__ import annotations

import argparse
from typing import Any

from worker.atp.faults import FAULTS
from worker.atp.header import ACK, ATP_HEADER_TYPE, ATP_UDP_PORT, COLLISION, FLOAT, OVERFLOW, RAW, RESEND, AtpCodec
from worker.atp.ps import PsCore
from worker.atp.worker import ATP_WINDOW, AtpOptions, AtpWorker
from worker.job import JobConfig
from worker.plugin import ProtocolSpec

__all__ = ["ATP"]


def accounting(job: JobConfig, run: Any) -> str:
    """Exactly once: the PS merged workers x sequences contributions (in switch aggregates or on their own) and
    completed every sequence."""
    st = run.ps.stats
    seqs = run.windows[0].plan.num_packets
    got = st.contributions_in_switch + st.contributions_at_ps
    out = []
    if st.raw_sequences == 0 and got != job.num_workers * seqs:
        out.append(f"PS merged {got} contributions ({st.contributions_in_switch} in switch aggregates), expected "
                   f"{job.num_workers * seqs} (workers x sequences)")
    if st.completed != seqs:
        out.append(f"PS completed {st.completed} of {seqs} sequences")
    return "; ".join(out)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale-bits", type=int, default=AtpOptions().scale_bits,
                   help="atp: float32 values are sent as rint(x * 2^BITS) (default %(default)s)")


def options(args: argparse.Namespace) -> AtpOptions:
    return AtpOptions(scale_bits=args.scale_bits)


def scale_defines(workers: int) -> dict[str, str]:
    """A larger L2 table once the workers, the PS and the broadcast entry outgrow the default 1,024 entries (the
    bitmaps are per rack: two levels hold 32 x 32 workers)."""
    entries = workers + 2
    return {} if entries <= 1024 else {"ATP_L2_SIZE": str(1 << (entries - 1).bit_length())}


ATP = ProtocolSpec(
    "atp", "in-network aggregation ATP-style (UDP, fixed point, aggregator pool shared by jobs, collisions and loss "
    "completed by a parameter server host)",
    rank=lambda job, rank, codec, o: AtpWorker(job, rank, None, codec, o.window, o.protocol, timeline=o.timeline),
    codec=AtpCodec, program="atp", program_env="INA_ATP_JSON", in_network=True, needs_ps=True, levels=2,
    default_window=ATP_WINDOW, header_type=ATP_HEADER_TYPE, udp_port=ATP_UDP_PORT, add_arguments=add_arguments,
    options=options, ps_module="worker.atp.ps", ps_core=PsCore, faults=FAULTS, trace_track="atp.agtr",
    trace_fields=("atp.seq", "atp.flags", "atp.rank", "ipv4.diffserv"), shared_pool=True, accounting=accounting,
    fuzz_values={"flags": (0, 0, ACK, RESEND, COLLISION, OVERFLOW, RAW, RAW | FLOAT, ACK | RESEND),
                 "bitmap0": (0, 1, 2, 4, 7), "bitmap1": (0, 1, 2, 2**31), "fan_in0": tuple(range(6)),
                 "fan_in1": tuple(range(4)), "seq": tuple(range(7)),
                 "agtr": (*range(0, 71), 4095, 4096, 65535)},
    scale_defines=scale_defines)
