"""StreamChannel: client arbitration and PacketIn/PacketOut through a real gRPC stream."""

from __future__ import annotations

import grpc
from finsy.proto import p4r, rpc_code

from switch.runtime import P4RuntimeServer

from .conftest import CPU_PORT, RUNTIME_IO_JSON, RUNTIME_IO_P4INFO, Client, load_p4info, rpc_error, update
from .test_tables import MAC_A, MAC_B, action, dmac_entry, frame, ternary

OK, ALREADY_EXISTS = rpc_code.Code.OK, rpc_code.Code.ALREADY_EXISTS
INSERT = p4r.Update.INSERT


def test_primary_election_and_write_permission(client: Client) -> None:
    first = client.stream()
    first.arbitrate(10)
    assert first.recv_arbitration() == (OK, 10)
    second = client.stream()
    second.arbitrate(5)
    assert second.recv_arbitration() == (ALREADY_EXISTS, 10)  # backup, told who the primary is
    assert first.recv(timeout=0.2) is None  # the primary did not change: nobody else is told

    client.election_id = 5  # the backup may not write nor set the pipeline
    err = rpc_error(client.set_pipeline, RUNTIME_IO_JSON.read_bytes())
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED and err.details() == "Not primary"
    client.election_id = None  # with streams open, a request without election id is not the primary's either
    assert rpc_error(client.set_pipeline, RUNTIME_IO_JSON.read_bytes()).code() == grpc.StatusCode.PERMISSION_DENIED
    client.election_id = 10
    client.set_pipeline(RUNTIME_IO_JSON.read_bytes())
    client.write(update(INSERT, table_entry=dmac_entry(client, MAC_B, b"\x01")))
    client.election_id = 5
    err = rpc_error(client.write, update(INSERT, table_entry=dmac_entry(client, MAC_A, b"\x01")))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    assert len(client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=client.table_id("dmac"))))) == 1  # reads ok

    second.arbitrate(20)  # backup raises its election id: new primary, everyone is told
    assert second.recv_arbitration() == (OK, 20)
    assert first.recv_arbitration() == (ALREADY_EXISTS, 20)
    second.close()  # primary leaves: the remaining client is promoted
    assert first.recv_arbitration() == (OK, 10)
    client.election_id = 10
    client.write(update(INSERT, table_entry=dmac_entry(client, MAC_A, b"\x01")))


def test_election_id_without_any_stream_is_refused(client: Client) -> None:
    client.election_id = 1
    assert rpc_error(client.set_pipeline, RUNTIME_IO_JSON.read_bytes()).code() == grpc.StatusCode.PERMISSION_DENIED


def test_duplicate_election_id_and_unknown_device_end_the_stream(client: Client) -> None:
    first = client.stream()
    first.arbitrate(3)
    assert first.recv_arbitration() == (OK, 3)
    dup = client.stream()
    dup.arbitrate(3)
    assert dup.ended.wait(2) and dup.error.code() == grpc.StatusCode.INVALID_ARGUMENT
    other = client.stream()
    other.arbitrate(4, device_id=9)
    assert other.ended.wait(2) and other.error.code() == grpc.StatusCode.NOT_FOUND
    assert first.recv(timeout=0.2) is None  # the failed attempts did not disturb the primary


def primary(client: Client, election_id: int = 1):
    stream = client.stream()
    stream.arbitrate(election_id)
    assert stream.recv_arbitration()[0] == OK
    client.election_id = election_id
    return stream


def packet_out(payload: bytes, egress_port: int) -> p4r.StreamMessageRequest:
    return p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=payload, metadata=[
        p4r.PacketMetadata(metadata_id=1, value=egress_port.to_bytes(2, "big"))]))


def test_packet_out_is_framed_and_injected(switch) -> None:
    injected: list[tuple[int, bytes]] = []
    srv = P4RuntimeServer(switch, cpu_port=CPU_PORT, inject=lambda port, f: injected.append((port, f)))
    c = Client(srv.start("127.0.0.1:0"), load_p4info(RUNTIME_IO_P4INFO))
    try:
        stream = primary(c)
        f = frame(MAC_B)
        stream.send(packet_out(f, 3))  # refused silently before a pipeline is set, as PI
        # The stream is handled in order: an arbitration answer proves the server has dealt with that PacketOut.
        stream.arbitrate(2)  # a new election id is answered (the same one would not be, as in PI)
        assert stream.recv_arbitration()[0] == OK
        c.election_id = 2
        assert injected == []
        c.set_pipeline(RUNTIME_IO_JSON.read_bytes())
        stream.send(packet_out(f, 3))
        for _ in range(100):
            if injected:
                break
            stream.recv(timeout=0.02)
        assert injected == [(CPU_PORT, b"\x01\x80" + f)]  # egress_port 3 in 9 bits, 7 pad bits
        # the switch program sends it where the header says, without the header
        assert switch.process(*injected[0]) == [(3, f)]
    finally:
        c.close()
        srv.stop(0)


def test_packet_in_reaches_only_the_primary(loaded: Client, server, switch) -> None:
    stream = primary(loaded, 7)
    backup = loaded.stream()
    backup.arbitrate(2)
    assert backup.recv_arbitration() == (ALREADY_EXISTS, 7)
    loaded.write(update(INSERT, table_entry=p4r.TableEntry(
        table_id=loaded.table_id("acl"), match=[ternary(1, b"\x08\x00", b"\xff\xff")], priority=1,
        action=action(loaded, "send_to_cpu"))))
    f = frame(MAC_B)
    [(port, out)] = switch.process(4, f)
    assert port == CPU_PORT and out == b"\x02\x00" + f  # packet_in header: ingress_port 4, pad 0
    server.packet_in(out)  # what the packet loop does for CPU-port frames
    msg = stream.recv()
    assert msg is not None and msg.HasField("packet")
    assert msg.packet.payload == f
    assert [(m.metadata_id, m.value) for m in msg.packet.metadata] == [(1, b"\x04"), (2, b"\x00")]
    assert backup.recv(timeout=0.2) is None


def test_packet_out_loopback_through_default_inject(loaded: Client) -> None:
    """Default inject: PacketOut to egress_port=CPU runs the program, which sends it back as a PacketIn."""
    stream = primary(loaded)
    f = frame(MAC_B, payload=b"loop")
    stream.send(packet_out(f, CPU_PORT))
    msg = stream.recv()
    assert msg is not None and msg.HasField("packet"), msg
    assert msg.packet.payload == f
    assert [(m.metadata_id, m.value) for m in msg.packet.metadata] == [(1, b"\xff"), (2, b"\x00")]


def test_bad_packet_out_metadata_gives_stream_error(loaded: Client) -> None:
    stream = primary(loaded)
    bad = p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=b"x", metadata=[
        p4r.PacketMetadata(metadata_id=42, value=b"\x01")]))
    stream.send(bad)
    msg = stream.recv()
    assert msg is not None and msg.HasField("error")
    assert msg.error.canonical_code == rpc_code.Code.INVALID_ARGUMENT
    assert msg.error.space == "ALL-sswitch-p4org"
    assert msg.error.packet_out.packet_out == bad.packet


def test_backup_packet_out_is_ignored(switch) -> None:
    injected: list[tuple[int, bytes]] = []
    srv = P4RuntimeServer(switch, cpu_port=CPU_PORT, inject=lambda port, f: injected.append((port, f)))
    c = Client(srv.start("127.0.0.1:0"), load_p4info(RUNTIME_IO_P4INFO))
    try:
        primary(c, 9)
        c.set_pipeline(RUNTIME_IO_JSON.read_bytes())
        backup = c.stream()
        backup.arbitrate(1)
        assert backup.recv_arbitration() == (ALREADY_EXISTS, 9)
        backup.send(packet_out(b"payload", 1))
        backup.arbitrate(3)  # answered after the PacketOut was handled (one reader per stream, in order)
        assert backup.recv_arbitration() == (ALREADY_EXISTS, 9)
        assert injected == []
    finally:
        c.close()
        srv.stop(0)


def test_start_on_busy_port_raises(server: P4RuntimeServer, switch) -> None:
    other = P4RuntimeServer(switch)
    try:
        other.start(f"127.0.0.1:{server.port}")
    except RuntimeError as exc:
        assert str(server.port) in str(exc)
    else:
        other.stop(0)
        raise AssertionError("second server bound a busy port")


def test_changing_device_on_open_stream_and_connection_limit(client: Client) -> None:
    stream = client.stream()
    stream.arbitrate(1)
    assert stream.recv_arbitration() == (OK, 1)
    stream.arbitrate(1, device_id=3)  # a stream stays bound to its device (PI: FAILED_PRECONDITION)
    assert stream.ended.wait(2) and stream.error.code() == grpc.StatusCode.FAILED_PRECONDITION
    streams = []
    for i in range(16):
        s = client.stream()
        s.arbitrate(100 + i)
        assert s.recv_arbitration()[0] == OK
        streams.append(s)
    extra = client.stream()
    extra.arbitrate(1)
    assert extra.ended.wait(2) and extra.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_packet_in_before_pipeline_is_dropped(client: Client, server: P4RuntimeServer) -> None:
    stream = primary(client)
    server.packet_in(b"\x02\x00" + frame(MAC_B))
    assert stream.recv(timeout=0.2) is None
    client.set_pipeline(RUNTIME_IO_JSON.read_bytes())
    server.packet_in(b"\x02\x00" + frame(MAC_B))
    msg = stream.recv()
    assert msg is not None and msg.packet.payload == frame(MAC_B)
    server.packet_in(b"\x02")  # shorter than the packet_in header: dropped, as PI
    assert stream.recv(timeout=0.2) is None
