"""Digests through P4Runtime (tests/compiler/p4/digests.p4): DigestEntry configuration, DigestList on the primary's
stream with the struct's members, de-duplication until DigestListAck, PI's refusals; and the two buffering stages
(BMv2's learn list, PI's digest manager) with a stopped clock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
from finsy.proto import p4r, rpc_code

from compiler import compile_file
from switch.runtime import P4RuntimeServer
from switch.runtime.digests import DigestManager
from switch.v1model.switch import V1Switch

from .conftest import CPU_PORT, Client, Stream, rpc_error, update, write_errors

Code = rpc_code.Code
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
PROGRAM = Path(__file__).parents[2] / "compiler" / "p4" / "digests.p4"


@pytest.fixture(scope="module")
def compiled():
    return compile_file(PROGRAM)


@pytest.fixture
def primary(compiled) -> Iterator[tuple[Client, Stream, V1Switch, int]]:
    sw = V1Switch(drop_port=511, cpu_port=CPU_PORT, device_id=0)
    srv = P4RuntimeServer(sw, device_id=0, cpu_port=CPU_PORT)
    c = Client(srv.start("127.0.0.1:0"), compiled.p4info)
    s = c.stream()
    s.arbitrate(1)
    s.recv_arbitration()
    c.election_id = 1
    c.set_pipeline(json.dumps(compiled.json).encode())
    try:
        yield c, s, sw, compiled.p4info.digests[0].preamble.id
    finally:
        c.close()
        srv.stop(0)


def frame(src: int, ether_type: int = 0x0800, dst: int = 1) -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + ether_type.to_bytes(2, "big")


def entry(digest_id: int, max_list_size: int = 1, max_timeout_ns: int = 0, ack_timeout_ns: int = 0
          ) -> p4r.DigestEntry:
    return p4r.DigestEntry(digest_id=digest_id, config=p4r.DigestEntry.Config(
        max_timeout_ns=max_timeout_ns, max_list_size=max_list_size, ack_timeout_ns=ack_timeout_ns))


def digests(s: Stream, timeout: float = 0.5) -> list[tuple[int, list[tuple[bytes, bytes]]]]:
    """(list id, [(mac, port)]) of every DigestList until `timeout` passes without one."""
    out = []
    while (msg := s.recv(timeout)) is not None:
        assert msg.HasField("digest"), msg
        out.append((msg.digest.list_id, [tuple(m.bitstring for m in d.struct.members) for d in msg.digest.data]))
    return out


def test_digests_as_simple_switch_sends_them(primary) -> None:
    """The sequence and the lists real simple_switch_grpc 1.15.5 gives for p4c's JSON of digests.p4: its two
    digest() calls are two learn lists named mac_learn_t, and the DigestEntry configures only the second (the
    apply block's); the first keeps BMv2's 16 samples / 1 s."""
    c, s, sw, did = primary
    sw.process(2, frame(0xA))  # learn(): list 1 buffers it; PI would drop it, nothing is configured
    assert digests(s, 0.3) == []
    c.write(update(INSERT, digest_entry=entry(did)))  # max_list_size 1
    [e] = c.read(p4r.Entity(digest_entry=p4r.DigestEntry(digest_id=did)))
    assert e.digest_entry == entry(did)
    sw.process(2, frame(0xA))  # already in list 1's buffer: left out
    sw.process(3, frame(0xB, 0x9999, dst=0x0C0D))  # the packet's last digest(): {dst, 7}, list 2, sent at once
    sw.process(2, frame(0xA))
    assert digests(s, 0.3) == [(1, [(b"\x0c\x0d", b"\x07")])]
    assert digests(s, 1.5) == [(2, [(b"\x0a", b"\x02")])]  # list 1's buffer, 1 s after its first sample


def test_samples_wait_for_their_ack(primary) -> None:
    c, s, sw, did = primary
    c.write(update(INSERT, digest_entry=entry(did, ack_timeout_ns=10 * 10**9)))
    for dst in (0x1A, 0x1B, 0x1A, 0x1B):
        sw.process(2, frame(0x5, 0x9999, dst))
    assert digests(s) == [(1, [(b"\x1a", b"\x07")]), (2, [(b"\x1b", b"\x07")])]
    s.send(p4r.StreamMessageRequest(digest_ack=p4r.DigestListAck(digest_id=did, list_id=1)))
    assert digests(s, 0.2) == []
    for dst in (0x1A, 0x1B):
        sw.process(2, frame(0x5, 0x9999, dst))
    assert digests(s) == [(3, [(b"\x1a", b"\x07")])]  # 0x1B's list 2 is still unacknowledged
    c.write(update(DELETE, digest_entry=p4r.DigestEntry(digest_id=did)))
    sw.process(2, frame(0x5, 0x9999, 0x1C))
    assert digests(s, 0.3) == []


def test_digest_entry_refusals_as_pi(primary) -> None:
    c, s, sw, did = primary
    c.write(update(INSERT, digest_entry=entry(did)))
    cases = [(INSERT, entry(did), Code.ALREADY_EXISTS), (INSERT, entry(did + 1), Code.NOT_FOUND),
             (p4r.Update.UNSPECIFIED, entry(did), Code.INVALID_ARGUMENT)]
    errors = write_errors(rpc_error(c.write, *[update(k, digest_entry=e) for k, e, _ in cases]))
    assert [code for code, _ in errors] == [want for _, _, want in cases]
    c.write(update(DELETE, digest_entry=p4r.DigestEntry(digest_id=did)))
    assert write_errors(rpc_error(c.write, update(MODIFY, digest_entry=entry(did))))[0][0] == Code.NOT_FOUND
    assert rpc_error(c.read, p4r.Entity(digest_entry=p4r.DigestEntry(digest_id=did))).code().name == "NOT_FOUND"
    assert rpc_error(c.read, p4r.Entity(digest_entry=p4r.DigestEntry())).code().name == "UNIMPLEMENTED"


class _Clock:
    def __init__(self) -> None:
        self.ns = 10**12

    def __call__(self) -> int:
        return self.ns


def _manager(p4info, **config) -> tuple[DigestManager, list, _Clock, int]:
    clock, sent = _Clock(), []
    m = DigestManager(sent.append, clock)
    m.set_p4info(p4info, {1: "mac_learn_t", 2: "mac_learn_t"})
    m.close()  # no timer thread: the test ticks
    did = p4info.digests[0].preamble.id
    m.write(INSERT, entry(did, **config))
    return m, sent, clock, did


def test_buffering_stages(compiled) -> None:
    # max_list_size 0, max_timeout_ns 0: BMv2's list waits for 1024 samples (duplicates within it left out)
    m, sent, clock, _ = _manager(compiled.p4info, max_list_size=0)
    for i in range(1023):
        m.sample(2, (i, 1))
    m.sample(2, (5, 1))
    assert sent == []
    m.sample(2, (1023, 1))
    [msg] = sent
    assert len(msg.digest.data) == 1024
    # max_timeout_ns 250 ms: BMv2 hands the buffer over after 250 ms; PI's sweep (every 250 ms) sends a non-empty
    # list on its second visit
    m, sent, clock, _ = _manager(compiled.p4info, max_list_size=100, max_timeout_ns=250_000_000)
    m.sample(2, (1, 1))
    m.sample(2, (2, 1))
    clock.ns += 249_000_000
    m.tick()
    assert sent == []
    clock.ns += 1_000_000
    m.tick()  # buffer handed to PI, and PI's sweep sees the list for the first time
    assert sent == []
    clock.ns += 250_000_000
    m.tick()
    [msg] = sent
    assert [[mb.bitstring for mb in d.struct.members] for d in msg.digest.data] == [[b"\x01", b"\x01"],
                                                                                   [b"\x02", b"\x01"]]
    # ack_timeout_ns: an unacknowledged list expires on the ack sweep's second visit, its samples go again
    m, sent, clock, _ = _manager(compiled.p4info, ack_timeout_ns=100_000_000)
    m.sample(2, (7, 1))
    m.sample(2, (7, 1))
    assert len(sent) == 1
    for _ in range(2):
        clock.ns += 100_000_000
        m.tick()
    m.sample(2, (7, 1))
    assert len(sent) == 2 and sent[1].digest.list_id == 2


def test_controller_library_receives_and_acks(compiled, tmp_path) -> None:
    """controller.P4RuntimeClient: configure by name, decode the members by name, acknowledge."""
    import finsy

    from controller.client import ControllerError, P4RuntimeClient

    sw = V1Switch(drop_port=511, cpu_port=CPU_PORT, device_id=0)
    srv = P4RuntimeServer(sw, device_id=0, cpu_port=CPU_PORT)
    port = srv.start("127.0.0.1:0")
    (tmp_path / "p.json").write_text(json.dumps(compiled.json))
    (tmp_path / "p.p4info.txtpb").write_text(compiled.p4info_text)
    client = P4RuntimeClient(f"127.0.0.1:{port}").connect()
    try:
        client.set_pipeline(tmp_path / "p.p4info.txtpb", tmp_path / "p.json")
        client.insert(finsy.P4DigestEntry("mac_learn_t", max_list_size=1, ack_timeout_ns=10**10))
        sw.process(4, frame(0x5, 0x9999, 0x2A))
        d = client.digest(2.0)
        assert (d.digest_id, d.list_id, d.data) == ("mac_learn_t", 1, [{"mac": 0x2A, "port": 7}])
        sw.process(4, frame(0x5, 0x9999, 0x2A))
        with pytest.raises(ControllerError, match="no DigestList"):
            client.digest(0.3)  # cached until acknowledged
        client.ack_digest(d)
        import time
        time.sleep(0.2)
        sw.process(4, frame(0x5, 0x9999, 0x2A))
        assert client.digest(2.0).list_id == 2
    finally:
        client.close()
        srv.stop(0)


def test_a_digest_of_a_nested_struct_is_flattened_and_its_pipeline_refused_as_pi_refuses_it() -> None:
    """p4c flattens a struct member of the digest's struct into the learn list; simple_switch sends it, PI's digest
    manager refuses such a P4Info (UNIMPLEMENTED), and so does ours."""
    nested = compile_file(PROGRAM.parent / "digest_nested.p4")
    sw = V1Switch(drop_port=511, cpu_port=CPU_PORT, device_id=0)
    sw.load(nested.json)
    sent: list[tuple[int, tuple[int, ...]]] = []
    sw.digest_sink = lambda lid, values: sent.append((lid, tuple(values)))
    sw.process(2, bytes([0, 7]))
    sw.process(2, bytes([5, 7]))
    assert sent == [(1, (0, 7, 2)), (2, (7, 5, 3))]  # {{a, (bit<16>)b}, port}; {meta.last = {b, a}, 3}
    srv = P4RuntimeServer(V1Switch(drop_port=511, cpu_port=CPU_PORT, device_id=0), device_id=0, cpu_port=CPU_PORT)
    c = Client(srv.start("127.0.0.1:0"), nested.p4info)
    try:
        s = c.stream()
        s.arbitrate(1)
        s.recv_arbitration()
        c.election_id = 1
        err = rpc_error(c.set_pipeline, json.dumps(nested.json).encode())
        assert err.code().value[0] == Code.UNIMPLEMENTED
        assert "Struct can only include bistring members for digests" in err.details()
    finally:
        c.close()
        srv.stop(0)
