"""OmniReduceController against the embedded switch over real P4Runtime: a job installed as SwitchML's, a round of
header-only and whole contributions through it, and the CLI's slots view with each set's next block."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from compiler import compile_file
from controller.omnireduce import NO_BLOCK, OmniReduceController
from controller.programs import controller_for
from controller.registers import P4RuntimeRegisters
from tests.paths import ROOT
from topo.inprocess import frame, make_jobs
from worker.job import PoolRange
from worker.switchml.sparse import SparseCodec, SparseHeader

N = 16


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("omnireduce")
    result = compile_file(str(ROOT / "p4src" / "omnireduce.p4"), defines={"INA_NUM_ELEMS": str(N),
                                                                          "INA_POOL_SIZE": "16"})
    (out / "omnireduce.json").write_text(json.dumps(result.json))
    (out / "omnireduce.p4info.txt").write_text(result.p4info_text)
    return out / "omnireduce.p4info.txt", out / "omnireduce.json"


def test_a_round_shows_its_next_block_in_the_slots_view(program: tuple[Path, Path], serve) -> None:
    sw, client = serve(program)
    assert controller_for("omnireduce") is OmniReduceController
    ctl = OmniReduceController(client, P4RuntimeRegisters(client))
    job = make_jobs(1, 2, N, PoolRange(4, 4))[0]
    ctl.create_job(job)
    codec = SparseCodec.from_program_json(json.loads(program[1].read_text()))
    out = []
    for w, nxt, values in ((job.workers[0], 37, np.arange(N, dtype=np.int32)), (job.workers[1], 21, None)):
        hdr = SparseHeader(job_id=job.job_id, pool_index=5, packet_id=NO_BLOCK, exponent=0, worker_rank=w.rank,
                           next_block=nxt)
        out = sw.process(w.switch_port, frame(w.mac, job.switch.mac, w.ip, job.switch.ip, w.udp_port, 48864,
                                              codec.encode(hdr, values)))
    assert len(out) == 2 and codec.decode(out[0][1][42:])[0].next_block == 21
    assert ctl.next_blocks(5, 1) == [21, 0]
    show = next(c for c in OmniReduceController.CLI if c.name == "slots")
    lines = show.run(ctl, argparse.Namespace(first=5, count=1)).splitlines()
    assert lines[0].split()[-2:] == ["next_block", "contributors"]
    assert lines[1].split()[-2:] == ["21", "0,1"] and lines[2].split()[-2:] == ["0", "-"]
    assert ctl.counters(job.job_id)["ina_aggregated"][0] == 2
    with pytest.raises(ValueError, match="outside the pool"):
        ctl.next_blocks(15, 2)
