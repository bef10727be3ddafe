"""finsy's Switch (the asyncio controller framework the project builds on) against our server."""

from __future__ import annotations

import asyncio
import contextlib

import finsy as fy
from finsy.p4entity import P4Replica

from switch.runtime import P4RuntimeServer
from switch.v1model import V1Switch

from .conftest import CPU_PORT, RUNTIME_IO_JSON, RUNTIME_IO_P4INFO


def test_finsy_installs_pipeline_writes_reads_and_gets_packet_in() -> None:
    sw = V1Switch(drop_port=511, cpu_port=CPU_PORT)
    server = P4RuntimeServer(sw, cpu_port=CPU_PORT)
    port = server.start("127.0.0.1:0")
    frame = bytes.fromhex("00000000000b00000000000a0800") + b"to-cpu"

    async def scenario() -> dict:
        done: asyncio.Future = asyncio.get_running_loop().create_future()

        async def ready(switch: fy.Switch) -> None:
            result: dict = {}
            await switch.write([
                +fy.P4TableEntry("acl", match=fy.P4TableMatch(etherType=(0x0800, 0xFFFF)), priority=1,
                                 action=fy.P4TableAction("send_to_cpu")),
                +fy.P4MulticastGroupEntry(1, replicas=[(2, 0), (3, 1)]),
            ])
            result["acl"] = [e async for e in switch.read(fy.P4TableEntry("acl"))]
            result["groups"] = [e async for e in switch.read(fy.P4MulticastGroupEntry())]
            packets = switch.read_packets()
            first = asyncio.ensure_future(anext(packets))
            await asyncio.sleep(0)  # the generator registers its queue on first iteration
            with sw.lock:
                outputs = sw.process(4, frame)
            for out_port, out in outputs:
                if out_port == CPU_PORT:
                    server.packet_in(out)  # what the packet loop does with CPU-port frames
            result["packet"] = await asyncio.wait_for(first, 5)
            await packets.aclose()
            done.set_result(result)

        options = fy.SwitchOptions(p4info=RUNTIME_IO_P4INFO, p4blob=RUNTIME_IO_JSON, device_id=0,
                                   ready_handler=ready)
        task = asyncio.create_task(fy.Switch("sw", f"127.0.0.1:{port}", options).run())
        try:
            return await asyncio.wait_for(done, 15)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    try:
        result = asyncio.run(scenario())
    finally:
        server.stop(0)
    [acl] = result["acl"]
    assert acl.priority == 1 and acl.action.name == "send_to_cpu"
    [group] = result["groups"]
    assert group.multicast_group_id == 1 and group.replicas == (2, P4Replica(3, instance=1))
    packet = result["packet"]
    assert packet.payload == frame and packet.metadata["ingress_port"] == 4
    assert sw.pre.groups == {1: [(2, 0), (3, 1)]}
