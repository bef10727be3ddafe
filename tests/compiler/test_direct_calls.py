"""Direct application of a control type: an anonymous instance named after the type in the control plane, one per
call site, never clashing with a declared name. Control instances as constructor arguments must match the parameter's
control type."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import CompileError, compile_file, compile_source

HERE = Path(__file__).parent


def test_control_plane_name_is_the_type_name() -> None:
    p4info = compile_file(str(HERE / "p4" / "direct_apply.p4")).p4info_text
    assert 'name: "Ing.Swap.pick"' in p4info


def test_fresh_instance_name_does_not_clash() -> None:
    src = (HERE / "p4" / "direct_apply.p4").read_text()
    # a local called Swap_inst beside the direct call: the instance takes another name (no duplicate)
    src = src.replace("control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {\n",
                      "control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {\n"
                      "    bit<8> Swap_inst = 3;\n", 1)
    j = compile_source(src, name="d.p4", include_dirs=[str(HERE / "p4")]).json
    assert any(t["name"] == "Ing.Swap.pick" for p in j["pipelines"] for t in p["tables"])


def test_control_argument_must_match_the_parameter_type() -> None:
    src = (HERE / "p4" / "control_ctor_instances.p4").read_text()
    src = src.replace("control Bump(inout bit<8> x) {", "control Bump(in bit<8> x) {").replace("x = x + v;", "")
    with pytest.raises(CompileError) as info:
        compile_source(src, name="c.p4")
    assert "c.p4:36:11: error: control 'Bump' does not match the type control bump_t of parameter 'b'" \
        in str(info.value)
