"""Multicast groups, clone sessions, indirect counters and registers through gRPC, checked on the wire."""

from __future__ import annotations

import grpc
from finsy.proto import p4d, p4r, rpc_code

from switch.runtime import P4RuntimeServer

from .conftest import CPU_PORT, RUNTIME_IO_JSON, RUNTIME_IO_P4INFO, Client, load_p4info, rpc_error, update, write_errors
from .test_tables import MAC_B, action, dmac_entry, exact, frame, ternary

Code = rpc_code.Code
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def mc_group(gid: int, *replicas: p4r.Replica) -> p4r.PacketReplicationEngineEntry:
    return p4r.PacketReplicationEngineEntry(multicast_group_entry=p4r.MulticastGroupEntry(
        multicast_group_id=gid, replicas=list(replicas)))


def clone_session(sid: int, *replicas: p4r.Replica, cos: int = 0, length: int = 0) -> p4r.PacketReplicationEngineEntry:
    return p4r.PacketReplicationEngineEntry(clone_session_entry=p4r.CloneSessionEntry(
        session_id=sid, replicas=list(replicas), class_of_service=cos, packet_length_bytes=length))


def test_multicast_group_replicates_and_reads_back(loaded: Client, switch) -> None:
    loaded.write(update(INSERT, packet_replication_engine_entry=mc_group(
        1, p4r.Replica(egress_port=2, instance=1), p4r.Replica(port=b"\x00\x03", instance=2))))
    loaded.write(update(INSERT, table_entry=p4r.TableEntry(
        table_id=loaded.table_id("dmac"), match=[exact(1, MAC_B)], action=action(loaded, "set_mcast", b"\x01"))))
    f = frame(MAC_B)
    assert sorted(switch.process(1, f)) == [(2, f), (3, f)]
    [entity] = loaded.read(p4r.Entity(packet_replication_engine_entry=mc_group(0)))  # wildcard
    replicas = entity.packet_replication_engine_entry.multicast_group_entry.replicas
    assert [(r.WhichOneof("port_kind"), r.egress_port, r.port, r.instance) for r in replicas] == [
        ("egress_port", 2, b"", 1), ("port", 0, b"\x00\x03", 2)]  # each port in the form it was written
    loaded.write(update(MODIFY, packet_replication_engine_entry=mc_group(1, p4r.Replica(egress_port=4, instance=0))))
    assert switch.process(1, f) == [(4, f)]
    loaded.write(update(DELETE, packet_replication_engine_entry=mc_group(1)))
    assert loaded.read(p4r.Entity(packet_replication_engine_entry=mc_group(0))) == []
    assert rpc_error(loaded.read, p4r.Entity(packet_replication_engine_entry=mc_group(1))).code() == \
        grpc.StatusCode.NOT_FOUND


def test_multicast_refusals(loaded: Client) -> None:
    loaded.write(update(INSERT, packet_replication_engine_entry=mc_group(5, p4r.Replica(egress_port=1))))
    cases = [
        (INSERT, mc_group(0), Code.INVALID_ARGUMENT),
        (INSERT, mc_group(1 << 15), Code.OUT_OF_RANGE),
        (INSERT, mc_group(5), Code.ALREADY_EXISTS),
        (MODIFY, mc_group(6), Code.NOT_FOUND),
        (DELETE, mc_group(6), Code.NOT_FOUND),
        (INSERT, mc_group(7, p4r.Replica(egress_port=1), p4r.Replica(egress_port=1)), Code.INVALID_ARGUMENT),
        (INSERT, mc_group(7, p4r.Replica(instance=1)), Code.INVALID_ARGUMENT),  # no port
        (INSERT, mc_group(7, p4r.Replica(port=b"\x00" * 5)), Code.UNIMPLEMENTED),
    ]
    errors = write_errors(rpc_error(loaded.write, *[update(k, packet_replication_engine_entry=e) for k, e, _ in cases]))
    assert [code for code, _ in errors] == [c for _, _, c in cases]


def test_clone_session_truncates_and_reads_back(loaded: Client, switch) -> None:
    [(code, message)] = write_errors(rpc_error(loaded.write, update(
        INSERT, packet_replication_engine_entry=clone_session(5, p4r.Replica(egress_port=9), cos=1))))
    assert code == Code.UNIMPLEMENTED and "COS" in message
    loaded.write(update(INSERT, packet_replication_engine_entry=clone_session(
        5, p4r.Replica(egress_port=9, instance=0), length=10)))
    loaded.write(update(INSERT, table_entry=dmac_entry(loaded, MAC_B, b"\x02")),
                 update(INSERT, table_entry=p4r.TableEntry(
                     table_id=loaded.table_id("acl"), match=[ternary(1, b"\x08\x00", b"\xff\xff")], priority=1,
                     action=action(loaded, "mirror"))))
    f = frame(MAC_B, payload=b"x" * 40)
    assert sorted(switch.process(1, f)) == [(2, f), (9, f[:10])]
    [entity] = loaded.read(p4r.Entity(packet_replication_engine_entry=clone_session(0)))
    cs = entity.packet_replication_engine_entry.clone_session_entry
    assert (cs.session_id, cs.packet_length_bytes, [r.egress_port for r in cs.replicas]) == (5, 10, [9])
    # clone sessions live in reserved multicast groups that wildcard group reads do not show
    assert loaded.read(p4r.Entity(packet_replication_engine_entry=mc_group(0))) == []
    loaded.write(update(DELETE, packet_replication_engine_entry=clone_session(5)))
    assert switch.process(1, f) == [(2, f)]
    assert rpc_error(loaded.read, p4r.Entity(packet_replication_engine_entry=clone_session(5))).code() == \
        grpc.StatusCode.NOT_FOUND
    [(code, _)] = write_errors(rpc_error(loaded.write, update(
        INSERT, packet_replication_engine_entry=clone_session(1 << 15, p4r.Replica(egress_port=1)))))
    assert code == Code.INVALID_ARGUMENT


def counter_entry(c: Client, index: int | None = None, packets: int = 0, nbytes: int = 0) -> p4r.CounterEntry:
    ce = p4r.CounterEntry(counter_id=c.counter_id("port_counter"),
                          data=p4r.CounterData(packet_count=packets, byte_count=nbytes))
    if index is not None:
        ce.index.index = index
    return ce


def test_counter_read_modify_delete(loaded: Client, switch) -> None:
    f = frame(MAC_B)
    switch.process(3, f)
    switch.process(3, f)
    [entity] = loaded.read(p4r.Entity(counter_entry=counter_entry(loaded, 3)))
    assert (entity.counter_entry.data.packet_count, entity.counter_entry.data.byte_count) == (2, 2 * len(f))
    everything = loaded.read(p4r.Entity(counter_entry=p4r.CounterEntry()))  # counter_id 0, no index: all cells
    assert len(everything) == 512 and everything[3].counter_entry.index.index == 3
    loaded.write(update(MODIFY, counter_entry=counter_entry(loaded, 7, 11, 22)))
    assert switch.counters["MyIngress.port_counter"].read(7) == (11, 22)
    loaded.write(update(DELETE, counter_entry=counter_entry(loaded, 7)))
    assert switch.counters["MyIngress.port_counter"].read(7) == (0, 0)
    errors = write_errors(rpc_error(loaded.write, update(INSERT, counter_entry=counter_entry(loaded, 1)),
                                    update(MODIFY, counter_entry=counter_entry(loaded)),
                                    update(MODIFY, counter_entry=counter_entry(loaded, -1)),
                                    update(MODIFY, counter_entry=counter_entry(loaded, 512))))
    assert [code for code, _ in errors] == [Code.INVALID_ARGUMENT, Code.UNIMPLEMENTED, Code.INVALID_ARGUMENT,
                                            Code.OUT_OF_RANGE]


def register_entry(c: Client, index: int | None = None, value: bytes | None = None) -> p4r.RegisterEntry:
    re = p4r.RegisterEntry(register_id=c.register_id("seen"))
    if index is not None:
        re.index.index = index
    if value is not None:
        re.data.CopyFrom(p4d.P4Data(bitstring=value))
    return re


def test_registers_extension(loaded: Client, switch) -> None:
    switch.process(1, frame(MAC_B, ether_type=0x1234))
    [entity] = loaded.read(p4r.Entity(register_entry=register_entry(loaded, 0)))
    assert entity.register_entry.data.bitstring == b"\x12\x34"
    loaded.write(update(MODIFY, register_entry=register_entry(loaded, 3, b"\x00\x00\x01\x00")))
    assert switch.registers["MyIngress.seen"].read(3) == 256
    cells = loaded.read(p4r.Entity(register_entry=register_entry(loaded)))
    assert [e.register_entry.data.bitstring for e in cells][:4] == [b"\x12\x34", b"\x00", b"\x00", b"\x01\x00"]
    assert len(cells) == 16
    errors = write_errors(rpc_error(loaded.write,
                                    update(MODIFY, register_entry=register_entry(loaded, 1, b"\x01\x00\x00\x00\x00")),
                                    update(INSERT, register_entry=register_entry(loaded, 1, b"\x01")),
                                    update(MODIFY, register_entry=register_entry(loaded, 16, b"\x01"))))
    assert [code for code, _ in errors] == [Code.INVALID_ARGUMENT, Code.INVALID_ARGUMENT, Code.OUT_OF_RANGE]


def test_registers_strict_bmv2_unimplemented(switch) -> None:
    srv = P4RuntimeServer(switch, cpu_port=CPU_PORT, strict_bmv2=True)
    port = srv.start("127.0.0.1:0")
    c = Client(port, load_p4info(RUNTIME_IO_P4INFO))
    try:
        c.set_pipeline(RUNTIME_IO_JSON.read_bytes())
        err = rpc_error(c.read, p4r.Entity(register_entry=register_entry(c, 0)))
        assert err.code() == grpc.StatusCode.UNIMPLEMENTED and err.details() == "Register reads are not supported yet"
        [(code, message)] = write_errors(rpc_error(c.write, update(MODIFY, register_entry=register_entry(c, 0, b"\x01"))))
        assert code == Code.UNIMPLEMENTED and message == "Register writes are not supported yet"
    finally:
        c.close()
        srv.stop(0)
