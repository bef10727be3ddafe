"""controller.local: the controllers program an engine in this process through the switch's own P4Runtime device —
entries land in the engine's tables, refusals carry the codes a gRPC Write would, reads decode to finsy entities."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from finsy import P4TableEntry

from controller.client import ControllerError
from controller.local import LocalClient
from controller.registers import P4RuntimeRegisters
from controller.switchml import SwitchMLController
from switch.v1model import V1Switch
from topo.inprocess import make_jobs
from worker.job import PoolRange


@pytest.fixture
def controller(program_dir: Path) -> SwitchMLController:
    program = json.loads((program_dir / "switchml.json").read_text())
    sw = V1Switch()
    sw.load(program)
    client = LocalClient(sw, program_dir / "switchml.p4info.txt", program)
    return SwitchMLController(client, P4RuntimeRegisters(client))


def test_a_job_installed_in_process_is_in_the_engine_with_its_epoch(controller: SwitchMLController) -> None:
    job = replace(make_jobs(1, 3, 64, PoolRange(0, 8))[0], job_id=5)
    controller.registers.fill("SwitchMLIngress.ina_countdown", 0, 16, 9)
    controller.create_job(job, epoch=42)
    sw = controller.client.device.switch
    assert len(sw.tables["SwitchMLIngress.ina_workers"].entries) == 3
    assert sw.pre.groups[6] is not None
    (epoch,) = controller.client.read(P4TableEntry("SwitchMLIngress.ina_epochs"))
    assert epoch.action.args == {"epoch": 42}
    assert controller.epochs == {5: 42}
    # create_job resets the job's slots through the registers, as on a switch process
    assert controller.registers.read_range("SwitchMLIngress.ina_countdown", 0, 16) == [0] * 16


def test_refusals_carry_the_status_a_grpc_write_returns(controller: SwitchMLController) -> None:
    job = make_jobs(1, 2, 64, PoolRange(0, 8))[0]
    controller.create_job(job)
    with pytest.raises(ControllerError) as err:
        controller.create_job(job)
    assert err.value.code == grpc.StatusCode.ALREADY_EXISTS
    assert err.value.updates and err.value.updates[0].code == "ALREADY_EXISTS"


def test_a_program_the_engine_does_not_run_is_refused(program_dir: Path) -> None:
    atp = json.loads((program_dir / "atp.json").read_text())
    sw = V1Switch()
    sw.load(atp)
    with pytest.raises(ControllerError, match="missing from the engine's program"):
        LocalClient(sw, program_dir / "switchml.p4info.txt",
                    json.loads((program_dir / "switchml.json").read_text()))


@pytest.mark.parametrize("first, count", [(100000, 2), (-1, 2), (255, 2), (0, 0)])
def test_slots_outside_the_pool_are_refused_naming_the_range(controller: SwitchMLController, first: int,
                                                             count: int) -> None:
    """`controller slots 100000 2` used to end in a KeyError (issue 26): a one-line error names the valid range."""
    with pytest.raises(ValueError, match=r"outside the pool: slots 0\.\.255 \(256 slots, two sets each\)"):
        controller.slots(first, count)
    assert [s.slot for s in controller.slots(254, 2)] == [254, 254, 255, 255]
