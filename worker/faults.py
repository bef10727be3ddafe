"""Fault plans in the protocols' own terms, compiled into the byte-level plans the switch applies (switch.faults).

A plan file (TOML or JSON) names packets by protocol, kind, job, worker rank and slot/aggregator:

    seed = 7                     # optional: else the switch's --seed
    [[fault]]
    action = "drop"              # drop | duplicate | delay | corrupt
    kind = "retransmission"      # switchml: data, retransmission, result; atp: data, resend, collision, ack;
                                 # "any" (default): every frame (narrowed only by job, rank and slot below)
    job = 1                      # optional: only this job
    rank = 1                     # optional: only packets from (in) / to (out) this worker's switch port
    slot = 3                     # optional: SwitchML slot (either set) / ATP aggregator index
    nth = [2]                    # or probability = 0.05; neither: every matching packet
    delay = 3                    # delay: released after 3 later frames on the port
    [[reset]]
    at_frame = 400               # when the switch has received its 400th frame
    job = 1                      # the job's whole switch state; or register = "...", first = 0, count = 64
    [restart]
    after_s = 0.5                # experiments.run: kill the switch process 0.5 s into the all-reduce and start it
                                 # again, re-programmed (the switch cannot restart itself; not part of its plan)

`compile_plan(plan, job, program_json)` -> a `switch.faults.FaultPlan` JSON mapping; `python -m worker.faults PLAN
--job job.json --program-json out/switchml.json -o plan.json` writes it for `python -m switch --fault-plan`.
Offsets assume Ethernet / IPv4 without options / UDP before the protocol header, as every host here sends.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worker.codec import CodecError, HeaderSpec, load_program
from worker.job import JobConfig

__all__ = ["ProtocolFaults", "compile_plan", "field_match", "load_plan", "main"]

HEADER_OFFSET = 14 + 20 + 8
"""Bytes before the protocol header in a frame: Ethernet, IPv4 (no options), UDP."""
UDP_PORT_OFFSETS = {"sport": 14 + 20, "dport": 14 + 20 + 2}


def field_match(spec: HeaderSpec, name: str, value: int, mask: int | None = None,
                base: int = HEADER_OFFSET) -> dict[str, Any]:
    """A switch.faults byte match for `field & mask == value & mask` of header `spec` starting at byte `base`."""
    f = spec.field(name)
    mask = (1 << f.width) - 1 if mask is None else mask & ((1 << f.width) - 1)
    first, last = f.offset // 8, (f.offset + f.width - 1) // 8
    span = (last - first + 1) * 8
    shift = span - (f.offset - first * 8) - f.width
    n = last - first + 1
    return {"offset": base + first, "value": ((value & mask) << shift).to_bytes(n, "big").hex(),
            "mask": (mask << shift).to_bytes(n, "big").hex()}


@dataclass(frozen=True)
class ProtocolFaults:
    """What a protocol's packets look like to a fault plan (its name, header type and UDP port are the registry's,
    `worker.protocols.ProtocolSpec`)."""

    kinds: Mapping[str, tuple[str, str, Sequence[tuple[str, int, int]]]]
    """kind -> (direction, the UDP port ("sport"/"dport") that is udp_port, [(field, value, mask)])."""
    slot_field: tuple[str, int]
    """(field, mask) naming the slot or aggregator."""
    state: Sequence[tuple[str, int]]
    """(register, cells per slot) holding a job's state, indexed from the job's pool base."""
    cells_per_slot_elems: Sequence[str] = ()
    """Registers with one cell per element of a slot (cells per slot = N)."""


class PlanError(ValueError):
    """A fault plan that names something the protocol or the job does not have."""


def load_plan(path: str | Path) -> dict[str, Any]:
    """A plan file (TOML, or JSON by its suffix) as a mapping."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise PlanError(f"cannot read {p}: {e.strerror}") from None
    try:
        return json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise PlanError(f"{p}: {e}") from None


def _protocol_of(program: Mapping[str, Any]) -> tuple[Any, ProtocolFaults, HeaderSpec, int]:
    """(the registry's spec, its fault model, its header's layout, N) of the protocol whose header the program has."""
    from worker.protocols import protocol_of_program

    try:
        protocol, spec, n = protocol_of_program(program)
    except CodecError as err:
        raise PlanError(f"the program has {err}") from None
    if not protocol.faults:
        raise PlanError(f"{protocol.name} has no fault model")
    return protocol, protocol.fault_model(), spec, n


def compile_plan(plan: Mapping[str, Any], job: JobConfig, program_json: str | Path | Mapping[str, Any]
                 ) -> dict[str, Any]:
    """The byte-level switch.faults plan of a protocol-level plan for `job` on the compiled program."""
    protocol, proto, spec, n = _protocol_of(load_program(program_json))
    rules = []
    for i, f in enumerate(plan.get("fault", [])):
        where = f"fault[{i}]"
        unknown = set(f) - {"action", "kind", "job", "rank", "slot", "aggregator", "nth", "probability", "delay",
                            "corrupt", "direction", "name"}
        if unknown:
            raise PlanError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        kind = f.get("kind", "any")
        match = []
        if kind == "any":
            direction = f.get("direction", "any")
        elif kind in proto.kinds:
            direction, port, fields = proto.kinds[kind]
            direction = f.get("direction", direction)
            match.append({"offset": UDP_PORT_OFFSETS[port], "value": protocol.udp_port.to_bytes(2, "big").hex(),
                          "mask": "ffff"})
            match += [field_match(spec, name, value, mask) for name, value, mask in fields]
        else:
            raise PlanError(f"{where}: {protocol.name} packets are of kind {', '.join(['any', *proto.kinds])}, "
                            f"not {kind!r}")
        if "job" in f:
            match.append(field_match(spec, "job_id", int(f["job"])))
        slot = f.get("slot", f.get("aggregator"))
        if slot is not None:
            match.append(field_match(spec, proto.slot_field[0], int(slot), proto.slot_field[1]))
        rule: dict[str, Any] = {"name": f.get("name", f"{where}: {f.get('action')} {kind}"),
                                "action": f.get("action"), "direction": direction, "match": match}
        if "rank" in f:
            rule["ports"] = [job.worker(int(f["rank"])).switch_port]
        for key in ("nth", "probability", "delay", "corrupt"):
            if key in f:
                rule[key] = f[key]
        rules.append(rule)
    events = []
    for i, r in enumerate(plan.get("reset", [])):
        where = f"reset[{i}]"
        if "at_frame" not in r:
            raise PlanError(f"{where}: needs at_frame")
        if "register" in r:
            events.append({"at_frame": int(r["at_frame"]), "reset_register": r["register"],
                           "first": int(r.get("first", 0)), **({"count": int(r["count"])} if "count" in r else {})})
        elif "job" in r:
            if int(r["job"]) != job.job_id:
                raise PlanError(f"{where}: job {r['job']} is not the plan's job {job.job_id}")
            events += [{"at_frame": int(r["at_frame"]), "reset_register": name, "first": job.pool.base * per,
                        "count": job.pool.size * per} for name, per in proto.state]
            sets = proto.state[0][1]  # SwitchML keeps two sets of every slot
            events += [{"at_frame": int(r["at_frame"]), "reset_register": name, "first": job.pool.base * sets * n,
                        "count": job.pool.size * sets * n} for name in proto.cells_per_slot_elems]
        else:
            raise PlanError(f"{where}: give job = J or register = NAME")
    out: dict[str, Any] = {"rules": rules, "events": events}
    if "seed" in plan:
        out["seed"] = int(plan["seed"])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m worker.faults", description=__doc__.split("\n\n")[0])
    p.add_argument("plan", type=Path, help="the protocol-level plan (TOML or JSON)")
    p.add_argument("--job", type=Path, required=True, help="the job file")
    p.add_argument("--program-json", type=Path, required=True, help="the compiled program (switchml or atp)")
    p.add_argument("-o", "--output", type=Path, default=None, help="write the switch's plan here (default: stdout)")
    args = p.parse_args(argv)
    try:
        compiled = compile_plan(load_plan(args.plan), JobConfig.load(args.job), args.program_json)
    except (PlanError, ValueError, OSError) as e:
        print(f"worker.faults: error: {e}", file=sys.stderr)
        return 1
    text = json.dumps(compiled, indent=1)
    if args.output is None:
        print(text)
    else:
        args.output.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
