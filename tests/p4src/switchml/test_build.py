"""switchml.p4 builds: the header layout tools derive from the JSON, the control-plane names the controller relies
on (p4src/README.md), and the -D parameters with their errors."""

from __future__ import annotations

import pytest

INA_H = [["msg_type", 8], ["job_id", 8], ["pool_index", 16], ["packet_id", 32], ["exponent", 8], ["flags", 8],
         ["worker_rank", 16]]

TABLES = {
    # name: ([(key name, match type)], {action: [(param, width)]})
    "SwitchMLIngress.ina_workers": (
        [("standard_metadata.ingress_port", "exact"), ("hdr.ipv4.srcAddr", "exact"), ("hdr.udp.srcPort", "exact"),
         ("hdr.ina.job_id", "exact")],
        {"SwitchMLIngress.ina_set_worker": [("rank", 16)]}),
    "SwitchMLIngress.ina_jobs": (
        [("hdr.ina.job_id", "exact")],
        {"SwitchMLIngress.ina_set_job": [("num_workers", 8), ("mgid", 16), ("pool_base", 16), ("pool_size", 16)]}),
    "SwitchMLIngress.l2_forward": (
        [("hdr.ethernet.dstAddr", "exact")],
        {"SwitchMLIngress.l2_set_port": [("port", 9)], "SwitchMLIngress.l2_flood": [("mgid", 16)],
         "SwitchMLIngress.l2_drop": []}),
    "SwitchMLIngress.drop_sim_ingress": (
        [("standard_metadata.ingress_port", "exact")],
        {"SwitchMLIngress.set_ingress_drop_prob": [("prob", 16)]}),
    "SwitchMLEgress.drop_sim_egress": (
        [("standard_metadata.egress_port", "exact")],
        {"SwitchMLEgress.set_egress_drop_prob": [("prob", 16)]}),
    "SwitchMLEgress.ina_destinations": (
        [("hdr.ina.job_id", "exact"), ("meta.dst_rank", "exact")],
        {"SwitchMLEgress.ina_set_destination": [("switch_mac", 48), ("switch_ip", 32), ("worker_mac", 48),
                                                ("worker_ip", 32), ("worker_port", 16)]}),
}

COUNTERS = ["SwitchMLIngress.ina_received", "SwitchMLIngress.ina_aggregated", "SwitchMLIngress.ina_multicast",
            "SwitchMLIngress.ina_retx_answered", "SwitchMLIngress.ina_drop_unknown",
            "SwitchMLIngress.ina_drop_malformed", "SwitchMLIngress.ina_drop_retx_incomplete",
            "SwitchMLIngress.ina_drop_sim_ingress", "SwitchMLEgress.ina_results_sent",
            "SwitchMLEgress.ina_drop_sim_egress", "SwitchMLEgress.ina_drop_no_destination"]


def header_fields(program: dict, type_name: str) -> list[list]:
    (ht,) = [h for h in program["header_types"] if h["name"] == type_name]
    return [[f[0], f[1]] for f in ht["fields"]]


@pytest.mark.parametrize(("num_elems", "pool_size"), [(16, 8), (32, 100), (64, 256), (128, 4)])
def test_layout_and_sizes_follow_defines(build, num_elems, pool_size):
    program = build(num_elems, pool_size)
    assert header_fields(program, "ina_h") == INA_H
    assert header_fields(program, "ina_data_h") == [[f"d{i}", 32] for i in range(num_elems)]
    # the payload header follows the INA header in the deparser (the worker codec relies on it)
    instances = {h["name"]: h["header_type"] for h in program["headers"]}
    order = program["deparsers"][0]["order"]
    assert [instances[n] for n in order[-2:]] == ["ina_h", "ina_data_h"]
    regs = {r["name"]: (r["size"], r["bitwidth"]) for r in program["register_arrays"]}
    assert regs == {
        "SwitchMLIngress.ina_bitmap": (2 * pool_size, 32),
        "SwitchMLIngress.ina_countdown": (2 * pool_size, 8),
        "SwitchMLIngress.ina_exponent": (2 * pool_size, 8),
        "SwitchMLIngress.ina_values": (2 * pool_size * num_elems, 32),
    }


def test_control_plane_names(build):
    program = build()
    tables = {t["name"]: t for p in program["pipelines"] for t in p["tables"]}
    actions = {a["name"]: a for a in program["actions"]}
    for name, (keys, acts) in TABLES.items():
        table = tables[name]
        assert [(k["name"], k["match_type"]) for k in table["key"]] == keys, name
        for act, params in acts.items():
            assert act in table["actions"], (name, act)
            assert [(p["name"], p["bitwidth"]) for p in actions[act]["runtime_data"]] == params, act
    counters = {c["name"]: c["size"] for c in program["counter_arrays"]}
    assert {name: counters.get(name) for name in COUNTERS} == {name: 257 for name in COUNTERS}


@pytest.mark.parametrize(("defines", "message"), [
    ({"INA_NUM_ELEMS": "48"}, "INA_NUM_ELEMS must be one of 16, 32, 64, 128"),
    ({"INA_POOL_SIZE": "40000"}, "INA_POOL_SIZE must be between 1 and 32768"),
    ({"INA_POOL_SIZE": "0"}, "INA_POOL_SIZE must be between 1 and 32768"),
])
def test_bad_defines_fail_with_clear_error(compile_switchml, defines, message):
    with pytest.raises(Exception, match=message):
        compile_switchml(**defines)
