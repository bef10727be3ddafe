"""omnireduce: sparse all-reduces through omnireduce.p4 in process — exact int32 sums and float32 within SwitchML's
bound at every sparsity, a round only for blocks non-zero in some worker, zero blocks sent as headers, loss and
duplicates survived exactly once, and the codec's two DATA lengths."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from compiler import compile_file
from switch.faults import FaultPlan, FaultRule
from tests.paths import ROOT
from topo.inprocess import InProcessNetwork, make_jobs
from worker.codec import MalformedPacket
from worker.driver import WindowOptions
from worker.job import PoolRange
from worker.protocols import PROTOCOLS
from worker.switchml.sparse import NO_BLOCK, SparseCodec, SparseHeader
from worker.verify import rank_input

N = 16
OPTIONS = WindowOptions(window=4, timeout=0.02, min_timeout=0.005, max_timeout=0.2, max_retries=100)
SPEC = PROTOCOLS["omnireduce"]


@pytest.fixture(scope="module")
def program() -> object:
    return compile_file(str(ROOT / "p4src" / "omnireduce.p4"), defines={"INA_NUM_ELEMS": str(N)})


def run(program: object, inputs: list[np.ndarray], dtype: str, *, faults: FaultPlan | None = None,
        window: int = 4) -> tuple[object, object, InProcessNetwork]:
    job = make_jobs(1, len(inputs), N, PoolRange(0, 8))[0]
    net = InProcessNetwork(program.json, [job], p4info=program.p4info, protocol=SPEC, faults=faults,
                           options=replace(OPTIONS, window=window), seed=5)
    net.trace = []
    runs = net.allreduce({job.job_id: inputs}, dtype)
    return job, runs[job.job_id], net


def union_blocks(inputs: list[np.ndarray]) -> set[int]:
    """Blocks non-zero in some input."""
    out: set[int] = set()
    for x in inputs:
        padded = np.zeros(-(-x.size // N) * N, dtype=x.dtype)
        padded[: x.size] = x
        out |= set(np.flatnonzero(np.any(padded.reshape(-1, N) != 0, axis=1)).tolist())
    return out


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("sparsity", [0.0, 0.7, 0.97, 1.0])
def test_results_are_exact_and_only_non_zero_blocks_take_rounds(program: object, dtype: str, sparsity: float) -> None:
    size = 61 * N + 5
    inputs = [rank_input(size, 11, r, dtype, sparsity, N) for r in range(3)]
    job, jr, net = run(program, inputs, dtype)
    assert all(v.ok for v in net.verify(job.job_id, jr, inputs, dtype)), net.verify(job.job_id, jr, inputs, dtype)
    union = union_blocks(inputs)
    window = jr.windows[0].width
    # one announcing round per stream, then one per block non-zero in some worker: no more, no less
    assert [w.total_rounds for w in jr.windows] == [window + len(union)] * 3
    assert SPEC.accounting(job, jr) == ""
    # what reached the switch: a DATA packet per round and worker, with a payload exactly where that worker's
    # block is non-zero, and never a round for a block that is zero everywhere
    codec = SparseCodec.from_program_json(program.json)
    seen: dict[tuple[int, int], bool] = {}
    for _, direction, _, f in net.trace:
        if direction == "in":
            hdr, _ = codec.decode(f[42:])
            seen[hdr.worker_rank, hdr.packet_id] = len(f) - 42 == codec.packet_len
    blocks = {b for _, b in seen if b != NO_BLOCK}
    assert blocks == union
    for (rank, block), full in seen.items():
        x = np.zeros(-(-size // N) * N, dtype=inputs[rank].dtype)
        x[:size] = inputs[rank]
        assert full == (block != NO_BLOCK and bool(np.any(x[block * N:(block + 1) * N] != 0)))


def test_loss_duplicates_and_reordered_results_count_each_contribution_once(program: object) -> None:
    inputs = [rank_input(200 * N, 3, r, "int32", 0.8, N) for r in range(4)]
    plan = FaultPlan([FaultRule(action="drop", direction="any", probability=0.05, name="loss"),
                      FaultRule(action="duplicate", direction="any", probability=0.03, name="dup"),
                      FaultRule(action="delay", direction="out", probability=0.03, delay=2, name="reorder")], seed=9)
    job, jr, net = run(program, inputs, "int32", faults=plan, window=8)
    assert plan.stats["drop"] > 20 and sum(w.stats.retransmissions for w in jr.windows) > 0
    assert all(v.ok for v in net.verify(job.job_id, jr, inputs, "int32"))
    assert SPEC.accounting(job, jr) == ""


def test_consecutive_all_reduces_continue_each_slots_sets(program: object) -> None:
    job = make_jobs(1, 2, N, PoolRange(0, 8))[0]
    net = InProcessNetwork(program.json, [job], p4info=program.p4info, protocol=SPEC, options=OPTIONS)
    for seed, sparsity in ((1, 0.5), (2, 0.0), (3, 0.9), (4, 1.0), (5, 0.3)):
        inputs = [rank_input(37 * N, seed, r, "int32", sparsity, N) for r in range(2)]
        jr = net.allreduce({job.job_id: inputs}, "int32")[job.job_id]
        assert all(v.ok for v in net.verify(job.job_id, jr, inputs, "int32"))


def test_the_codec_sends_a_zero_block_as_its_header_alone(program: object) -> None:
    codec = SparseCodec.from_program_json(program.json)
    assert codec.header_len == 16 and codec.packet_len == 16 + 4 * N
    h = SparseHeader(msg_type=1, job_id=2, pool_index=0x8003, packet_id=40, exponent=131, flags=1, worker_rank=5,
                     next_block=NO_BLOCK)
    empty = codec.encode(h, None)
    assert empty == bytes.fromhex("0102" "8003" "00000028" "83" "01" "0005" "ffffffff")
    assert codec.decode(empty) == (h, pytest.approx(np.zeros(N)))
    values = np.arange(-8, 8, dtype=np.int32)
    hdr, got = codec.decode(codec.encode(h, values))
    assert hdr == h and np.array_equal(got, values)
    with pytest.raises(MalformedPacket, match="expected 16"):
        codec.decode(empty + b"\0\0\0\0")
