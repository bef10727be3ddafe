"""AF_PACKET ports on a real veth pair (one namespace): receive, transmit, own transmissions not read back, VLAN
tags, link down/up, frames larger than a ring slot, and the one-line errors for interfaces that cannot be opened.
Each receive test runs with the memory-mapped ring and with recvmsg."""

from __future__ import annotations

import time

import pytest

from switch.ports import AfPacketPort, PortError
from topo.frames import udp_frame
from perf.traffic import NsProcess
from topo.netns import hosts, sh

pytestmark = [pytest.mark.netns, pytest.mark.timeout(60)]
RING = pytest.mark.parametrize("ring", [True, False], ids=["rx-ring", "recvmsg"])


def _frame(i: int) -> bytes:
    return udp_frame("02:00:00:00:00:99", "02:00:00:00:01:01", "10.0.1.1", "10.0.9.9", 4000 + i, 9999,
                     b"afpacket-test" + bytes([i]) * 20)


@RING
def test_receive_and_transmit_without_reading_back_own_frames(ring: bool) -> None:
    with hosts(1) as (h1,):
        port = AfPacketPort(1, h1.switch_if, ring=ring)
        assert port.mode == ("rx-ring" if ring else "recvmsg")
        try:
            # host → switch port
            sender = NsProcess(h1, "send", "--count", "5", *sum((["--frame", _frame(i).hex()] for i in range(5)), []))
            assert sender.result(20)["sent"] == 5
            got: list[bytes] = []
            deadline = time.monotonic() + 5
            while len(got) < 5 and time.monotonic() < deadline:
                got += [f for f in port.recv_batch(64) if f[36:38] == (9999).to_bytes(2, "big")]
                time.sleep(0.01)
            assert got == [_frame(i) for i in range(5)]

            # switch port → host; the port must not see its own transmissions
            receiver = NsProcess(h1, "recv", "--match", (7777).to_bytes(2, "big").hex(), "--offset", "36",
                                 "--count", "3", "--duration", "10", "--keep", "3", wait_ready=True)
            out = [udp_frame("02:00:00:00:01:01", "02:00:00:00:00:99", "10.0.9.9", "10.0.1.1", 5000 + i, 7777,
                             b"to-host" + bytes([i]) * 30) for i in range(3)]
            for f in out:
                assert port.send(f)
            res = receiver.result(20)
            assert [bytes.fromhex(h) for h in res["frames"]] == out
            time.sleep(0.1)
            assert [f for f in port.recv_batch(64) if f[36:38] == (7777).to_bytes(2, "big")] == []
        finally:
            port.close()


def test_missing_interface_is_one_clear_error() -> None:
    with pytest.raises(PortError, match=r"^interface 'nosuchif0' \(port 3\) does not exist$"):
        AfPacketPort(3, "nosuchif0")


@RING
def test_link_down_and_up_does_not_break_the_port(ring: bool) -> None:
    with hosts(1) as (h1,):
        port = AfPacketPort(1, h1.switch_if, ring=ring)
        assert port.mode == ("rx-ring" if ring else "recvmsg")
        try:
            sh("ip", "link", "set", h1.switch_if, "down")
            assert port.recv_batch(8) == []  # the kernel's one-shot ENETDOWN is absorbed
            assert port.link_down_events == 1
            assert port.send(_frame(0)) is False  # counted as a tx drop by the loop, not an exception
            sh("ip", "link", "set", h1.switch_if, "up")
            sender = NsProcess(h1, "send", "--count", "1", "--frame", _frame(1).hex())
            assert sender.result(20)["sent"] == 1
            got: list[bytes] = []
            deadline = time.monotonic() + 5
            while not got and time.monotonic() < deadline:
                got = [f for f in port.recv_batch(8) if f[36:38] == (9999).to_bytes(2, "big")]
                time.sleep(0.01)
            assert got == [_frame(1)]
        finally:
            port.close()


@RING
def test_vlan_tags_stripped_by_the_kernel_are_put_back(ring: bool) -> None:
    # Linux moves the outer 802.1Q/802.1ad tag of every received frame into packet metadata; the switch must see
    # the frame as it was on the wire (libpcap, hence BMv2, reconstructs it too)
    base = _frame(3)
    tagged = base[:12] + bytes.fromhex("81002005") + base[12:]
    qinq = base[:12] + bytes.fromhex("88a8e00a" "81000007") + base[12:]
    with hosts(1) as (h1,):
        port = AfPacketPort(1, h1.switch_if, ring=ring)
        assert port.mode == ("rx-ring" if ring else "recvmsg")
        try:
            assert NsProcess(h1, "send", "--count", "2", "--frame", tagged.hex(), "--frame", qinq.hex()) \
                .result(20)["sent"] == 2
            got: list[bytes] = []
            deadline = time.monotonic() + 5
            while len(got) < 2 and time.monotonic() < deadline:
                got += [f for f in port.recv_batch(8) if f.endswith(base[14:])]
                time.sleep(0.01)
            assert got == [tagged, qinq]
        finally:
            port.close()


def test_frame_larger_than_its_ring_slot_arrives_whole() -> None:
    # slots are sized from the MTU at open time; raise the MTU afterwards and send a 6000-byte frame
    with hosts(1) as (h1,):
        port = AfPacketPort(1, h1.switch_if, ring=True)
        try:
            assert port.mode == "rx-ring"
            sh("ip", "link", "set", h1.switch_if, "mtu", "9000")
            sh("ip", "netns", "exec", h1.ns, "ip", "link", "set", h1.ifname, "mtu", "9000")
            big = udp_frame("02:00:00:00:00:99", h1.mac, "10.0.1.1", "10.0.9.9", 1, 9999, bytes(range(256)) * 24)
            assert len(big) > 6000
            assert NsProcess(h1, "send", "--count", "2", "--frame", big.hex(), "--frame", _frame(4).hex()) \
                .result(20)["sent"] == 2
            got: list[bytes] = []
            deadline = time.monotonic() + 5
            while len(got) < 2 and time.monotonic() < deadline:
                got += [f for f in port.recv_batch(8) if f[36:38] == (9999).to_bytes(2, "big")]
                time.sleep(0.01)
            assert got == [big, _frame(4)]
        finally:
            port.close()
