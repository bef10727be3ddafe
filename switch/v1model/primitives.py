"""v1model primitives (simple_switch's primitives.cpp) as code emitters for the engine's code generator.

Each emitter takes the Codegen, the primitive's JSON parameters and a location string, and returns Python lines.
The packet-level flags they set (clone, resubmit, recirculate) are read by V1Switch after ingress / egress.
"""

from __future__ import annotations

from typing import Callable

from switch.errors import LoadError
from switch.sim.codegen import Codegen
from switch.sim.program import P_CLONE, P_CLONE_FL, P_LEARN, P_RECIRC, P_RESUBMIT

CLONE_VALID = 1 << 32  # marks "a clone was requested" so that session 0 is usable (BMv2: MIRROR_SESSION_ID_VALID_MASK)


def _sm_slot(cg: Codegen, fname: str, where: str) -> int | None:
    return cg.p.lookup_slot(f"standard_metadata.{fname}")


def _field_list_id(cg: Codegen, node: dict, where: str) -> str:
    src, _bits = cg.expr(node, where)
    return src


def _to_drop_port(cg: Codegen, egress_spec: str, mcast_grp: str, drop_port: int, missing: str) -> list[str]:
    """Lines setting field egress_spec to the drop port and, if the program has it, field mcast_grp to 0."""
    es = cg.p.lookup_slot(egress_spec)
    if es is None:
        raise LoadError(missing)
    mg = cg.p.lookup_slot(mcast_grp)
    return [f"F[{es}] = {drop_port}"] + ([f"F[{mg}] = 0"] if mg is not None else [])


def mark_to_drop(drop_port: int) -> Callable[[Codegen, list, str], list[str]]:
    """`mark_to_drop(standard_metadata)`: the given header's egress_spec := drop port and its mcast_grp := 0 (if it
    has one), as simple_switch's primitive."""

    def emit(cg: Codegen, params: list, where: str) -> list[str]:
        if len(params) != 1 or params[0].get("type") != "header":
            raise LoadError(f"mark_to_drop takes one header (the standard metadata) in {where}")
        hdr = params[0]["value"]
        return _to_drop_port(cg, f"{hdr}.egress_spec", f"{hdr}.mcast_grp", drop_port,
                             f"header {hdr} must be of type standard_metadata (no egress_spec field) in {where}")

    return emit


def drop(drop_port: int) -> Callable[[Codegen, list, str], list[str]]:
    """`drop` (p4c's output for the deprecated `mark_to_drop()` without arguments): standard_metadata.egress_spec :=
    drop port, and intrinsic_metadata.mcast_grp := 0 only where the program has that field, as simple_switch's
    primitive (p4c's JSON aliases it to standard_metadata.mcast_grp; a JSON without the alias keeps its multicast)."""

    def emit(cg: Codegen, params: list, where: str) -> list[str]:
        return _to_drop_port(cg, "standard_metadata.egress_spec", "intrinsic_metadata.mcast_grp", drop_port,
                             f"standard_metadata.egress_spec missing for {where}")

    return emit


def _clone(cg: Codegen, params: list, where: str) -> list[str]:
    if len(params) < 1:
        raise LoadError(f"missing session id in {where}")
    sess = cg.expr(params[0], where)[0]
    fl = _field_list_id(cg, params[1], where) if len(params) > 1 else "0"
    return [f"F[{P_CLONE}] = (({sess}) & 0xFFFFFFFF) | {CLONE_VALID}", f"F[{P_CLONE_FL}] = {fl}"]


def _resubmit(cg: Codegen, params: list, where: str) -> list[str]:
    fl = _field_list_id(cg, params[0], where) if params else "0"
    # BMv2 stores the field list id as the flag; p4c numbers field lists from 1, so "no list" would be 0.
    return [f"F[{P_RESUBMIT}] = ({fl}) or -1"]


def _recirculate(cg: Codegen, params: list, where: str) -> list[str]:
    fl = _field_list_id(cg, params[0], where) if params else "0"
    return [f"F[{P_RECIRC}] = ({fl}) or -1"]


def _generate_digest(cg: Codegen, params: list, where: str) -> list[str]:
    """simple_switch's generate_digest(receiver, learn list id): the list is sampled when ingress ends (the last
    call wins), from the temporaries p4c copied the values into at the call."""
    lid = int(params[1]["value"], 16) if params[1].get("type") == "hexstr" else None
    if len(params) != 2 or lid not in cg.p.learn_lists:
        raise LoadError(f"{where}: generate_digest needs a receiver and a learn list id of the JSON, got {params!r}")
    return [f"F[{P_LEARN}] = {lid}"]


def v1model_primitives(drop_port: int) -> dict[str, Callable[[Codegen, list, str], list[str]]]:
    """op → emitter for the primitives simple_switch adds to the core ones."""
    return {
        "mark_to_drop": mark_to_drop(drop_port),
        "drop": drop(drop_port),
        "clone_ingress_pkt_to_egress": _clone,
        "clone_egress_pkt_to_egress": _clone,
        "resubmit": _resubmit,
        "recirculate": _recirculate,
        "generate_digest": _generate_digest,
    }
