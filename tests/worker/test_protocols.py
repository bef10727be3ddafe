"""worker.protocols: the one registry of protocol facts, and the tables that derive from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.programs import CONTROLLERS, controller_for
from worker.codec import header_and_payload
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, in_network, open_collective, programs


def test_every_protocol_names_a_program_and_its_controller() -> None:
    assert DEFAULT_PROTOCOL in PROTOCOLS
    for spec in PROTOCOLS.values():
        cls = controller_for(spec.program)
        assert cls.PROGRAM == spec.program and cls.INGRESS  # the program's controller, registered for it
    assert set(CONTROLLERS) == {p.program for p in PROTOCOLS.values()}
    with pytest.raises(ValueError, match="no controller for program 'nope'"):
        controller_for("nope")


def test_in_network_protocols_carry_their_packet_facts(program_dir: Path) -> None:
    assert set(in_network()) == set(programs()) == {"switchml", "atp", "esa", "release", "omnireduce"}
    for name in in_network():
        spec = PROTOCOLS[name]
        assert spec.default_window and spec.udp_port
        program = json.loads((program_dir / f"{spec.program}.json").read_text())
        _, n = header_and_payload(program, spec.header_type)  # the header is in the compiled program
        assert n > 0


def test_derived_tables_follow_the_registry() -> None:
    from experiments.report import IN_NETWORK
    from experiments.soak import SOAKED
    from topo.twotier import TwoTierFabric

    assert IN_NETWORK == in_network() == SOAKED
    assert TwoTierFabric.AGGREGATING == tuple(p.name for p in PROTOCOLS.values() if p.levels > 1) == ("atp",)
    assert [p.name for p in PROTOCOLS.values() if p.needs_ps] == ["atp", "esa", "release"]  # ATP's hosts


def test_an_unknown_protocol_names_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown protocol 'nope'; choose one of atp, esa, omnireduce, ps, release, ring, switchml"):
        open_collective("nope", None, 0)  # type: ignore[arg-type]


def test_a_compiled_program_names_its_protocol(program_dir: Path) -> None:
    """The runner, the studies and the fault plans find a program's protocol the same way: by its header."""
    from worker.codec import CodecError
    from worker.protocols import protocol_of_program

    for name in programs():
        spec, header, n = protocol_of_program(program_dir / f"{name}.json")
        assert spec.program == name and header.name == spec.header_type and n > 0
    with pytest.raises(CodecError, match="none of the header types ina_h, atp_h"):
        protocol_of_program({"header_types": [], "headers": []})
