"""Loading: refusals name the construct and where it is; a failed load keeps the running program."""

from __future__ import annotations

import copy
import json

import pytest

from switch.errors import LoadError
from switch.v1model import V1Switch


def _refused(j) -> str:
    with pytest.raises(LoadError) as ei:
        V1Switch().load(j)
    return str(ei.value)


@pytest.fixture
def bf(fixture_dict):
    return copy.deepcopy(fixture_dict("basic_forward"))


def test_accepts_text_bytes_and_dict(fixture_dict):
    j = fixture_dict("basic_forward")
    for src in (json.dumps(j), json.dumps(j).encode(), j):
        sw = V1Switch()
        sw.load(src)
        assert sw.loaded and sw.program_json["program"] == "basic_forward.p4"


def test_version_and_syntax(bf):
    assert "not valid JSON" in _refused("{nope")
    bf["__meta__"]["version"] = [3, 0]
    assert "version" in _refused(bf)
    del bf["__meta__"]
    assert "__meta__" in _refused(bf)


def test_unsupported_primitive_named_with_action(bf):
    act = next(a for a in bf["actions"] if a["name"] == "MyIngress.drop")
    act["primitives"].append({"op": "generate_digest", "parameters": [{"type": "hexstr", "value": "0x1"}] * 2})
    msg = _refused(bf)  # no learn list 1 in this program
    assert "primitive 'generate_digest' in action 'MyIngress.drop': generate_digest needs" in msg
    act["primitives"][-1] = {"op": "execute_meter", "parameters": []}
    msg = _refused(bf)
    assert "primitive 'execute_meter' in action 'MyIngress.drop': expected a meter_array" in msg
    act["primitives"][-1] = {"op": "frobnicate", "parameters": []}
    msg = _refused(bf)
    assert "unsupported primitive 'frobnicate' in action 'MyIngress.drop'" in msg


def test_varbit_header_needs_max_length_and_extract_vl(bf):
    bf["header_types"][2]["fields"].append(["options", "*"])
    assert "header type 'ethernet_t' has a variable-length field but no valid max_length" in _refused(bf)
    bf["header_types"][2]["max_length"] = 14 + 8
    assert "'extract' of header 'ethernet', which has a variable-length field" in _refused(bf)
    bf["header_types"][2]["fields"].append(["more", "*"])
    assert "more than one variable-length field" in _refused(bf)


def test_unknown_field_names_location(bf):
    act = next(a for a in bf["actions"] if a["name"] == "MyIngress.ipv4_forward")
    act["primitives"][0]["parameters"][0]["value"] = ["ipv4", "nope"]
    msg = _refused(bf)
    assert "ipv4.nope" in msg and "MyIngress.ipv4_forward" in msg


def test_unsupported_top_level_objects(bf):
    bf["extern_instances"] = [{"id": 0, "name": "MyIngress.x", "type": "Checksum16"}]
    assert "extern_instances" in _refused(bf) and "MyIngress.x" in _refused(bf)
    bf.pop("extern_instances")
    bf["learn_lists"] = [{"id": 1, "name": "dg", "elements": [{"type": "header", "value": "ethernet"}]}]
    assert "unsupported element" in _refused(bf) and "learn list 'dg'" in _refused(bf)


def test_bad_meter_arrays(bf):
    good = {"name": "MyIngress.m", "id": 0, "size": 4, "type": "bytes", "rate_count": 2, "is_direct": False}
    V1Switch().load(dict(bf, meter_arrays=[good]))
    assert "bad meter array" in _refused(dict(bf, meter_arrays=[dict(good, type="colours")]))
    direct = dict(good, is_direct=True, binding="MyIngress.ipv4_lpm")  # no result_target
    assert "needs a binding and a result_target" in _refused(dict(bf, meter_arrays=[direct]))


def test_bad_hash_algorithm(bf):
    bf["calculations"][0]["algo"] = "crc64_custom"
    assert "unsupported hash algorithm 'crc64_custom' in calculation 'calc'" in _refused(bf)


def test_unsupported_expression_operator(bf):
    bf["pipelines"][0]["conditionals"][0]["expression"] = {"type": "expression", "value": {
        "op": "access_union_header", "left": None, "right": 0}}
    assert "access_union_header" in _refused(bf)


def test_valid_union_of_unknown_union(bf):
    bf["pipelines"][0]["conditionals"][0]["expression"] = {"type": "expression", "value": {
        "op": "valid_union", "left": None, "right": {"type": "header_union", "value": "nope"}}}
    assert "expected a header union" in _refused(bf)


def test_action_profile_table_refused(bf):
    bf["pipelines"][0]["tables"][0]["type"] = "indirect"
    assert "MyIngress.ipv4_lpm" in _refused(bf)


def test_failed_load_keeps_old_program(fixture_dict, bf):
    sw = V1Switch()
    sw.load(fixture_dict("basic_forward"))
    t = sw.tables["MyIngress.ipv4_lpm"]
    t.insert(((0, 0),), "MyIngress.ipv4_forward", (1, 2))
    bf["calculations"][0]["algo"] = "nope"
    with pytest.raises(LoadError):
        sw.load(bf)
    assert sw.tables["MyIngress.ipv4_lpm"] is t
    frame = bytes.fromhex("ffffffffffff000000000001" "0800") + bytes.fromhex("4500001c000000004011" "0000" "01020304" "05060708") + b"\x00" * 8
    assert [p for p, _ in sw.process(0, frame)] == [2]


def test_no_program_loaded_drops_frames():
    sw = V1Switch()
    assert not sw.loaded and sw.program_json is None
    assert sw.process(0, b"\x00" * 14) == []
    assert sw.stats["dropped_no_pipeline"] == 1
    assert sw.drain() == []


def test_malformed_structures_give_load_error(bf):
    assert "expected exactly one parser" in _refused({**bf, "parsers": []})
    bf["pipelines"][0]["tables"][0]["key"][0]["target"] = 17
    assert _refused(bf).startswith("malformed BMv2 JSON")


def test_control_flow_cycle_refused(bf):
    lpm = bf["pipelines"][0]["tables"][0]
    lpm["next_tables"] = {a: "node_2" for a in lpm["actions"]}
    assert "control flow cycle" in _refused(bf)


def test_parser_loop_is_bounded(fixture_dict, bf):
    # parse_ipv4 → parse_ipv4 forever without extracting: ends with ParserTimeout, the packet still goes through
    st = bf["parsers"][0]["parse_states"][1]
    st["parser_ops"] = []
    st["transitions"] = [{"type": "default", "value": None, "mask": None, "next_state": "parse_ipv4"}]
    sw = V1Switch()
    sw.load(bf)
    frame = bytes(12) + b"\x08\x00" + bytes(20)
    assert sw.process(1, frame) == [(0, frame)]
    assert sw.stats["parser_errors"] == 1 and sw.stats["errors"] == 0


def test_a_field_of_a_run_time_stack_element_is_refused_as_unsupported(bf):
    """p4c 1.2.4.8 writes `hs[i].isValid()` as a field whose header is an expression; BMv2 1.15's loader refuses it
    ("Invalid 'type' in expression"), and so does this switch, by name, instead of a Python TypeError."""
    bf["pipelines"][0]["conditionals"][0]["expression"] = {"type": "expression", "value": {
        "op": "d2b", "left": None, "right": {"type": "field", "value": [
            {"op": "dereference_header_stack", "left": {"type": "header_stack", "value": "s"},
             "right": {"type": "field", "value": ["ipv4", "ttl"]}}, "$valid$"]}}}
    msg = _refused(bf)
    assert msg.startswith("unsupported: a field of a header stack element at a run-time index"), msg
    assert "dereference_header_stack" in msg and "TypeError" not in msg
