"""Capabilities, Set/GetForwardingPipelineConfig and the no-pipeline refusals, through a real gRPC client."""

from __future__ import annotations

import grpc
from finsy.proto import p4r

from switch.runtime import P4RUNTIME_API_VERSION

from .conftest import RUNTIME_IO_JSON, Client, rpc_error, update

Set = p4r.SetForwardingPipelineConfigRequest
Get = p4r.GetForwardingPipelineConfigRequest


def test_capabilities_reports_pi_version(client: Client) -> None:
    assert client.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version == P4RUNTIME_API_VERSION == "1.3.0"


def test_everything_needs_a_pipeline_first(client: Client) -> None:
    te = p4r.TableEntry(table_id=client.table_id("dmac"))
    for call in (lambda: client.write(update(p4r.Update.INSERT, table_entry=te)),
                 lambda: client.read(p4r.Entity(table_entry=te)),
                 lambda: client.stub.GetForwardingPipelineConfig(Get(device_id=0))):
        err = rpc_error(call)
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "No forwarding pipeline config" in err.details()


def test_verify_does_not_commit_and_commit_then_get(client: Client) -> None:
    json_bytes = RUNTIME_IO_JSON.read_bytes()
    client.set_pipeline(json_bytes, action=Set.VERIFY)
    assert rpc_error(client.stub.GetForwardingPipelineConfig, Get()).code() == grpc.StatusCode.FAILED_PRECONDITION
    client.set_pipeline(json_bytes, cookie=42)
    full = client.stub.GetForwardingPipelineConfig(Get(response_type=Get.ALL)).config
    assert full.p4info == client.p4info and full.p4_device_config == json_bytes and full.cookie.cookie == 42
    only_cookie = client.stub.GetForwardingPipelineConfig(Get(response_type=Get.COOKIE_ONLY)).config
    assert not only_cookie.HasField("p4info") and only_cookie.p4_device_config == b"" and only_cookie.cookie.cookie == 42
    p4info = client.stub.GetForwardingPipelineConfig(Get(response_type=Get.P4INFO_AND_COOKIE)).config
    assert p4info.p4info == client.p4info and p4info.p4_device_config == b""
    dev = client.stub.GetForwardingPipelineConfig(Get(response_type=Get.DEVICE_CONFIG_AND_COOKIE)).config
    assert not dev.HasField("p4info") and dev.p4_device_config == json_bytes


def test_verify_and_save_then_commit(client: Client, switch) -> None:
    err = rpc_error(client.set_pipeline, RUNTIME_IO_JSON.read_bytes(), action=Set.COMMIT)
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    client.set_pipeline(RUNTIME_IO_JSON.read_bytes(), action=Set.VERIFY_AND_SAVE)
    assert not switch.loaded
    client.set_pipeline(b"", action=Set.COMMIT)
    assert switch.loaded and "MyIngress.acl" in switch.tables


def test_unsupported_actions(client: Client) -> None:
    json_bytes = RUNTIME_IO_JSON.read_bytes()
    assert rpc_error(client.set_pipeline, json_bytes, action=Set.RECONCILE_AND_COMMIT).code() == \
        grpc.StatusCode.UNIMPLEMENTED
    assert rpc_error(client.set_pipeline, json_bytes, action=Set.UNSPECIFIED).code() == \
        grpc.StatusCode.INVALID_ARGUMENT


def test_p4info_object_missing_from_json_is_named(client: Client, switch) -> None:
    p4info = p4r.ForwardingPipelineConfig().p4info.__class__()
    p4info.CopyFrom(client.p4info)
    p4info.tables[0].preamble.name = "MyIngress.not_there"
    err = rpc_error(client.set_pipeline, RUNTIME_IO_JSON.read_bytes(), p4info=p4info)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "MyIngress.not_there" in err.details()
    p4info.CopyFrom(client.p4info)
    p4info.actions[2].params[0].bitwidth = 10  # forward(bit<9> port)
    err = rpc_error(client.set_pipeline, RUNTIME_IO_JSON.read_bytes(), p4info=p4info)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "MyIngress.forward" in err.details()
    assert not switch.loaded


def test_bad_device_config_keeps_old_pipeline(loaded: Client, switch) -> None:
    err = rpc_error(loaded.set_pipeline, b"{not json")
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "MyIngress.acl" in switch.tables
    assert loaded.stub.GetForwardingPipelineConfig(Get()).config.p4info == loaded.p4info


def test_legacy_p4_device_config_wrapper(client: Client, switch) -> None:
    raw = RUNTIME_IO_JSON.read_bytes()
    length = len(raw)
    varint = bytearray()
    while True:
        byte = length & 0x7F
        length >>= 7
        varint.append(byte | (0x80 if length else 0))
        if not length:
            break
    wrapped = b"\x08\x00" + b"\x1a" + bytes(varint) + raw  # P4DeviceConfig{reassign=false, device_data=raw}
    client.set_pipeline(wrapped)
    assert "MyIngress.dmac" in switch.tables


def test_other_device_id_is_not_found(loaded: Client) -> None:
    err = rpc_error(loaded.read, p4r.Entity(table_entry=p4r.TableEntry()), device_id=7)
    assert err.code() == grpc.StatusCode.NOT_FOUND
    err = rpc_error(loaded.write, update(p4r.Update.INSERT, table_entry=p4r.TableEntry()), device_id=7)
    assert err.code() == grpc.StatusCode.NOT_FOUND


def test_reload_clears_runtime_state(loaded: Client, switch) -> None:
    mc = p4r.PacketReplicationEngineEntry(multicast_group_entry=p4r.MulticastGroupEntry(
        multicast_group_id=1, replicas=[p4r.Replica(egress_port=2, instance=0)]))
    loaded.write(update(p4r.Update.INSERT, packet_replication_engine_entry=mc))
    assert switch.pre.groups
    loaded.set_pipeline(RUNTIME_IO_JSON.read_bytes())
    assert not switch.pre.groups
    loaded.write(update(p4r.Update.INSERT, packet_replication_engine_entry=mc))  # no ALREADY_EXISTS


def test_inconsistent_p4info_is_invalid_argument(client: Client) -> None:
    p4info = p4r.ForwardingPipelineConfig().p4info.__class__()
    p4info.CopyFrom(client.p4info)
    p4info.actions[1].preamble.id = p4info.actions[0].preamble.id  # duplicate id
    for action in (Set.VERIFY, Set.VERIFY_AND_COMMIT):
        err = rpc_error(client.set_pipeline, RUNTIME_IO_JSON.read_bytes(), action=action, p4info=p4info)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "duplicate id" in err.details()


def test_a_directly_called_action_beside_its_table_copy(tmp_path) -> None:
    """p4c (and ours) write a directly called action a second time under the same name, arguments bound: the P4Info
    action is the copy with parameters, and a table entry runs it (difftest found the pipeline refused)."""
    import finsy

    from compiler import compile_file
    from controller.local import LocalClient
    from switch.v1model import V1Switch
    from tests.paths import TESTS

    result = compile_file(TESTS / "compiler" / "p4" / "direct_call_args.p4")
    assert [len(a["runtime_data"]) for a in result.json["actions"] if a["name"] == "Ing.put"] in ([0, 1], [1, 0])
    (tmp_path / "p.txt").write_text(str(result.p4info))
    sw = V1Switch()
    sw.load(result.json)
    client = LocalClient(sw, tmp_path / "p.txt", result.json)
    client.insert(finsy.P4TableEntry("Ing.t", match=finsy.P4TableMatch({"hdr.i.k": 5}),
                                     action=finsy.P4TableAction("Ing.put", val=0x20)))
    assert sw.process(0, bytes.fromhex("05100000")) == [(1, bytes.fromhex("05101121"))]
