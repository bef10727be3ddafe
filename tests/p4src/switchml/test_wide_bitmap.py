"""switchml.p4 built for more than 32 workers (-D INA_MAX_WORKERS=W): the bitmap's and the worker counts' widths,
ranks past 255 on the packet level, jobs of 40 and 300 workers end to end in process (topo.inprocess, programmed by
the controller, which takes the limit from the program's P4Info), and the default build refusing a 33rd worker."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from controller.switchml import format_slots, max_workers
from tests.paths import ROOT
from topo.inprocess import InProcessNetwork, make_jobs
from worker.driver import WindowOptions
from worker.job import JobConfig, PoolRange
from worker.verify import rank_input

P4SRC = ROOT / "p4src" / "switchml.p4"
N = 64
"""Elements per packet (the default build's)."""
POOL = 16
WIDTHS = (32, 64, 128, 256, 512)
OPTIONS = WindowOptions(window=8, timeout=0.02, min_timeout=0.005, max_timeout=0.2, max_retries=60)


@functools.cache
def compiled(width: int | None, pool_size: int = POOL) -> Any:
    """compiler.CompileResult of switchml.p4 with INA_MAX_WORKERS=width (None: not given) and a small pool."""
    import compiler

    defines = {"INA_POOL_SIZE": str(pool_size)}
    if width is not None:
        defines["INA_MAX_WORKERS"] = str(width)
    return compiler.compile_file(str(P4SRC), defines=defines)


def registers(program: dict[str, Any]) -> dict[str, int]:
    return {r["name"].split(".")[-1]: r["bitwidth"] for r in program["register_arrays"]}


def action_params(program: dict[str, Any], name: str) -> dict[str, int]:
    (action,) = [a for a in program["actions"] if a["name"] == f"SwitchMLIngress.{name}"]
    return {p["name"]: p["bitwidth"] for p in action["runtime_data"]}


def int32_sum(inputs: list[np.ndarray]) -> np.ndarray:
    return np.sum(np.stack(inputs).astype(np.int64), axis=0).astype(np.uint32).view(np.int32)


# --- the build -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_bitmap_and_counts_follow_the_width(width: int) -> None:
    res = compiled(width)
    count_bits = 8 if width < 256 else 16
    assert registers(res.json) == {"ina_bitmap": width, "ina_countdown": count_bits, "ina_exponent": 8,
                                   "ina_values": 32}
    assert action_params(res.json, "ina_set_job")["num_workers"] == count_bits
    assert action_params(res.json, "ina_set_worker") == {"rank": 16}
    from finsy import P4Schema

    assert max_workers(P4Schema(res.p4info)) == width


def test_default_build_is_the_32_worker_build() -> None:
    assert compiled(None).json == compiled(32).json
    assert compiled(None).p4info == compiled(32).p4info


def test_other_widths_fail_with_a_clear_error(compile_switchml) -> None:
    for bad in ("48", "1024", "0"):
        with pytest.raises(Exception, match="INA_MAX_WORKERS must be one of 32, 64, 128, 256, 512"):
            compile_switchml(INA_MAX_WORKERS=bad)


# --- packets: ranks past 255, a count past 255 ---------------------------------------------------------------------


def test_ranks_up_to_511_have_their_bit(ina) -> None:
    """W = 512: ranks 0, 255, 256 and 511 (the shift amount's top bit and both halves) each set their own bit, the
    fourth contribution completes the set; rank 512 is an unknown sender."""
    sw = type(ina)(compiled(512, 8).json, N, 8)
    workers = [sw.worker(rank, port=i + 1) for i, rank in enumerate((0, 255, 256, 511))]
    sw.add_job(3, workers, mgid=4)
    values = [[rank + i for i in range(N)] for rank in (0, 255, 256, 511)]
    for k, (w, v) in enumerate(zip(workers, values)):
        out = sw.send(w, sw.data(w, 3, slot=5, set_=1, values=v))
        assert sw.bitmap(5, 1) == sum(1 << x.rank for x in workers[:k + 1]), w.rank
        if k < 3:
            assert out == [] and sw.countdown(5, 1) == 3 - k
    assert sorted(port for port, _ in out) == [1, 2, 3, 4] and sw.countdown(5, 1) == 0
    assert sw.values(5, 1) == sw.sums(*values)
    stranger = sw.worker(512, port=9)
    sw.add_worker(3, stranger)
    assert sw.send(stranger, sw.data(stranger, 3, slot=6, set_=0, values=values[0])) == []
    assert sw.count("ina_drop_unknown", 3) == 1 and sw.bitmap(6, 0) == 0
    sw.assert_ingress_invariant(3)


def test_a_job_of_256_workers_completes_with_a_16_bit_count(ina) -> None:
    """W = 256: num_workers 256 does not fit 8 bits; the last of 256 contributions multicasts to all 256."""
    sw = type(ina)(compiled(256, 8).json, N, 8)
    # the switch tells workers apart by port (ina_workers' key), so addresses may repeat: hosts 1..250
    workers = [sw.worker(r, port=r + 1, host=r % 250 + 1) for r in range(256)]
    sw.add_job(1, workers, mgid=2)
    for w in workers[:-1]:
        assert sw.send(w, sw.data(w, 1, slot=0, set_=0, values=[1] * N)) == []
    assert sw.countdown(0, 0) == 1
    out = sw.send(workers[-1], sw.data(workers[-1], 1, slot=0, set_=0, values=[1] * N))
    assert len(out) == 256 and sw.countdown(0, 0) == 0 and sw.bitmap(0, 0) == (1 << 256) - 1
    assert sw.values(0, 0) == [256] * N


# --- jobs end to end in process ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("width", "workers", "loss"), [(64, 40, 0.0), (512, 300, 0.0), (512, 300, 0.01)])
def test_jobs_wider_than_32_get_the_exact_sum(width: int, workers: int, loss: float) -> None:
    res = compiled(width)
    (job,) = make_jobs(1, workers, N, PoolRange(0, 2 if loss else POOL))
    assert job.num_workers == workers and job.max_workers == workers
    net = InProcessNetwork(res.json, [job], p4info=res.p4info, options=OPTIONS, loss=loss, seed=5)
    assert net.controller.max_workers() == width
    size = 2 * N if not loss else 8 * N  # with loss: 8 packets through 2 slots, both sets of each used twice
    inputs = [rank_input(size, 7, r, "int32") for r in range(workers)]
    run = net.allreduce({1: inputs}, dtype="int32")[1]
    verdicts = net.verify(1, run, inputs, "int32")
    assert all(v.ok for v in verdicts), [v.message for v in verdicts if not v.ok][:3]
    expected = int32_sum(inputs)
    assert all(np.array_equal(r, expected) for r in run.results)
    assert run.counters["ina_drop_unknown"] == 0 and run.counters["ina_multicast"] == size // N
    if loss:
        assert net.dropped > 0
    # the slot display follows the bitmap's width
    header, first = format_slots(net.controller, 0, 1).splitlines()[:2]
    assert header.split()[1:3] == ["set", "bitmap"] and len(first.split()[2]) == width


def test_the_default_build_refuses_a_33rd_worker() -> None:
    res = compiled(None)
    (job,) = make_jobs(1, 33, N, PoolRange(0, POOL))
    with pytest.raises(ValueError, match=r"job 1 has 33 workers, but the switch's program holds at most 32 per job "
                                         r"\(its worker bitmap SwitchMLIngress.ina_bitmap is bit<32>\): build "
                                         r"switchml.p4 with -D INA_MAX_WORKERS"):
        InProcessNetwork(res.json, [job], p4info=res.p4info)
    # and a 32-worker job runs on it as before
    (job,) = make_jobs(1, 32, N, PoolRange(0, POOL))
    assert job.max_workers == 32
    net = InProcessNetwork(res.json, [job], p4info=res.p4info)
    inputs = [rank_input(2 * N, 3, r, "int32") for r in range(32)]
    run = net.allreduce({1: inputs}, dtype="int32")[1]
    assert all(np.array_equal(r, int32_sum(inputs)) for r in run.results)


def test_a_wider_program_than_the_job_needs_is_fine() -> None:
    res = compiled(128)
    (job,) = make_jobs(1, 3, N, PoolRange(0, POOL))
    net = InProcessNetwork(res.json, [job], p4info=res.p4info)
    inputs = [rank_input(2 * N, 4, r, "int32") for r in range(3)]
    run = net.allreduce({1: inputs}, dtype="int32")[1]
    assert all(np.array_equal(r, int32_sum(inputs)) for r in run.results)


# --- make_jobs' addresses for up to 510 workers --------------------------------------------------------------------


def test_make_jobs_addresses_stay_distinct_past_255_workers() -> None:
    (job,) = make_jobs(1, 510, N, PoolRange(0, POOL))
    assert len({w.ip for w in job.workers}) == len({w.mac for w in job.workers}) == 510
    assert [w.switch_port for w in job.workers] == list(range(1, 511))
    # unchanged below host 256
    jobs = make_jobs(2, 3, N, PoolRange(0, POOL))
    assert [(w.ip, w.mac) for w in jobs[1].workers] == [(f"10.0.2.{r + 1}", f"00:00:00:00:02:{r + 1:02x}")
                                                        for r in range(3)]
    w = job.workers[299]
    assert (w.ip, w.mac) == ("10.1.1.44", "00:00:00:01:01:2c")
    with pytest.raises(ValueError, match="need 512 switch ports; a switch has at most 510"):
        make_jobs(2, 256, N, PoolRange(0, POOL))


def test_make_jobs_up_to_32_workers_keep_the_default_limit() -> None:
    (job,) = make_jobs(1, 4, N, PoolRange(0, POOL))
    assert job.max_workers == 32
    assert JobConfig.from_dict(job.to_dict()) == job
