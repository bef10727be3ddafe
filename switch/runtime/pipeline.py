"""A forwarding pipeline as P4Runtime sees it: P4Info index + BMv2 JSON, cross-checked by name and width.

`p4_device_config` is the raw BMv2 JSON (what p4runtime-shell, finsy and the P4 tutorials send); the deprecated
`p4::tmp::P4DeviceConfig` wrapper (fields reassign=1, extras=2, device_data=3) is also accepted, as PI does.
PI's BMv2 backend maps P4Info objects to JSON objects by name, so every P4Info table, action, counter, register and
meter must exist in the JSON under the same name, with the same key / parameter widths.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from finsy.proto import p4r

from switch.runtime.p4info import MATCH_OPTIONAL, P4InfoIndex, build_index
from switch.runtime.packetio import PacketIO
from switch.runtime.status import Code, P4RuntimeError, invalid


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def unwrap_legacy_device_config(data: bytes) -> bytes | None:
    """`device_data` of a serialized p4::tmp::P4DeviceConfig, or None if `data` is not one."""
    pos, device_data = 0, None
    try:
        while pos < len(data):
            tag, pos = _read_varint(data, pos)
            number, wire = tag >> 3, tag & 7
            if number == 1 and wire == 0:
                _, pos = _read_varint(data, pos)
            elif number in (2, 3) and wire == 2:
                length, pos = _read_varint(data, pos)
                if pos + length > len(data):
                    return None
                if number == 3:
                    device_data = data[pos:pos + length]
                pos += length
            else:
                return None
    except ValueError:
        return None
    return device_data if device_data is not None else (b"" if data else None)


def device_config_json(data: bytes) -> dict[str, Any]:
    """The BMv2 JSON program carried by `p4_device_config` (raw or legacy-wrapped); INVALID_ARGUMENT otherwise."""
    text = data
    if not data.lstrip().startswith(b"{"):
        unwrapped = unwrap_legacy_device_config(data)
        if unwrapped is not None:
            text = unwrapped
    if not text.strip():
        raise invalid("Empty 'p4_device_config': expected the BMv2 JSON produced by p4c-bm2-ss")
    try:
        program = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise invalid(f"Invalid 'p4_device_config': not BMv2 JSON ({exc})") from None
    if not isinstance(program, dict):
        raise invalid("Invalid 'p4_device_config': BMv2 JSON must be an object")
    return program


def _field_widths(program: dict[str, Any]) -> dict[tuple[str, str], int]:
    types = {ht.get("name"): ht for ht in program.get("header_types", []) if isinstance(ht, dict)}
    widths: dict[tuple[str, str], int] = {}
    for hdr in program.get("headers", []):
        if not isinstance(hdr, dict):
            continue
        for f in types.get(hdr.get("header_type"), {}).get("fields", []):
            if isinstance(f, list) and len(f) >= 2 and isinstance(f[1], int):
                widths[(hdr.get("name"), f[0])] = f[1]
    return widths


@dataclass
class Pipeline:
    """A verified pipeline: the config as sent, its P4Info index and the packet I/O framing."""

    config: p4r.ForwardingPipelineConfig
    index: P4InfoIndex
    program: dict[str, Any]
    packet_io: PacketIO = field(init=False)

    def __post_init__(self) -> None:
        self.packet_io = PacketIO(self.index.controller_headers.get("packet_in"),
                                  self.index.controller_headers.get("packet_out"))


def verify(config: p4r.ForwardingPipelineConfig) -> Pipeline:
    """Index the P4Info, decode the device config and check every P4Info object against the JSON."""
    index = build_index(config.p4info)
    program = device_config_json(bytes(config.p4_device_config))
    tables = {t.get("name"): t for p in program.get("pipelines", []) for t in p.get("tables", [])
              if isinstance(t, dict)}
    actions: dict[str, list] = {}
    for act in program.get("actions", []):
        if isinstance(act, dict):
            actions.setdefault(act.get("name"), []).append(act)
    counters = {c.get("name"): c for c in program.get("counter_arrays", []) if isinstance(c, dict)}
    registers = {r.get("name"): r for r in program.get("register_arrays", []) if isinstance(r, dict)}
    meters = {m.get("name") for m in program.get("meter_arrays", []) if isinstance(m, dict)}
    widths = _field_widths(program)

    for act in index.actions.values():
        candidates = actions.get(act.name)
        if not candidates:
            raise invalid(f"P4Info action '{act.name}' is not in the device config (BMv2 JSON)")
        # p4c writes a directly called action once more under the same name, its arguments bound (no runtime
        # data): the P4Info action is the one of that name whose parameters it declares
        want = [w for _, _, w in act.params]
        found = [[p.get("bitwidth") for p in c.get("runtime_data", [])] for c in candidates]
        if want not in found:
            raise invalid(f"P4Info action '{act.name}': parameter widths {want} differ from the BMv2 JSON's "
                          f"{' or '.join(map(str, found))}")
    for tid, tbl in list(index.tables.items()):
        jt = tables.get(tbl.name)
        if jt is None:
            raise invalid(f"P4Info table '{tbl.name}' is not in the device config (BMv2 JSON)")
        key = jt.get("key", [])
        if len(key) != len(tbl.match_fields):
            raise invalid(f"P4Info table '{tbl.name}' has {len(tbl.match_fields)} match fields, "
                          f"the BMv2 JSON table {len(key)}")
        for mf, jk in zip(tbl.match_fields, key):
            target = jk.get("target") if isinstance(jk, dict) else None
            if jk.get("mask") is None and isinstance(target, list) and len(target) == 2 and mf.bitwidth:
                # bitwidth 0: a key of a type P4Runtime gives no width (p4c's P4Info for an `error` key), as PI takes it
                width = widths.get((target[0], target[1]))
                if width is not None and width != mf.bitwidth:
                    raise invalid(f"P4Info table '{tbl.name}': match field '{mf.name}' is {mf.bitwidth} bits, "
                                  f"{width} in the BMv2 JSON")
        kinds = [jk.get("match_type") if isinstance(jk, dict) else None for jk in key]
        if any(mf.match_type == MATCH_OPTIONAL and k == "ternary" for mf, k in zip(tbl.match_fields, kinds)):
            index.tables[tid] = tbl = replace(tbl, match_fields=tuple(
                replace(mf, ternary_in_json=mf.match_type == MATCH_OPTIONAL and k == "ternary")
                for mf, k in zip(tbl.match_fields, kinds)))
        json_actions = set(jt.get("actions", []))
        for action_id in tbl.action_scopes:
            name = index.actions[action_id].name
            if name not in json_actions:
                raise invalid(f"P4Info table '{tbl.name}': action '{name}' is not an action of the BMv2 JSON table")
    for ctr in list(index.counters.values()) + list(index.direct_counters.values()):
        jc = counters.get(ctr.name)
        if jc is None:
            raise invalid(f"P4Info counter '{ctr.name}' is not in the device config (BMv2 JSON)")
        if bool(jc.get("is_direct")) != bool(ctr.direct_table_id):
            raise invalid(f"P4Info counter '{ctr.name}': direct/indirect differs from the BMv2 JSON")
    for reg in index.registers.values():
        jr = registers.get(reg.name)
        if jr is None:
            raise invalid(f"P4Info register '{reg.name}' is not in the device config (BMv2 JSON)")
        if jr.get("bitwidth") != reg.bitwidth or jr.get("size") != reg.size:
            raise invalid(f"P4Info register '{reg.name}': bit<{reg.bitwidth}>[{reg.size}] differs from the BMv2 "
                          f"JSON's bit<{jr.get('bitwidth')}>[{jr.get('size')}]")
    for name in list(index.meters.values()) + list(index.direct_meters.values()):
        if name not in meters:
            raise invalid(f"P4Info meter '{name}' is not in the device config (BMv2 JSON)")
    for dg in config.p4info.digests:  # PI's DigestMgr::p4_change: flat structs of bitstrings only
        st = config.p4info.type_info.structs.get(dg.type_spec.struct.name)
        if st is not None and any(not m.type_spec.HasField("bitstring") for m in st.members):
            raise P4RuntimeError(Code.UNIMPLEMENTED, "Struct can only include bistring members for digests")
    profiles = {a.get("name") for pl in program.get("pipelines", []) if isinstance(pl, dict)
                for a in pl.get("action_profiles") or [] if isinstance(a, dict)}
    for name in index.action_profiles.values():
        if name not in profiles:
            raise invalid(f"P4Info action profile '{name}' is not in the device config (BMv2 JSON)")
    return Pipeline(config=config, index=index, program=program)
