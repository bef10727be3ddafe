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
from pathlib import Path
from typing import Any

from worker.codec import CodecError, HeaderSpec, load_program
from worker.faultmodel import UDP_PORT_OFFSETS, ProtocolFaults, field_match
from worker.job import JobConfig
from worker.protocols import protocol_of_program

__all__ = ["PlanError", "compile_plan", "load_plan", "main"]

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
    try:
        protocol, spec, n = protocol_of_program(program)
    except CodecError as err:
        raise PlanError(f"the program has {err}") from None
    if not protocol.faults:
        raise PlanError(f"{protocol.name} has no fault model")
    return protocol, protocol.faults, spec, n


def compile_plan(plan: Mapping[str, Any], job: JobConfig, program_json: str | Path | Mapping[str, Any], *,
                 source: str = "") -> dict[str, Any]:
    """The byte-level switch.faults plan of a protocol-level plan for `job` on the compiled program; every value is
    checked here, so a bad plan is refused (PlanError naming `source`, the plan's file, and the key) before a switch
    or network is started."""
    from switch.faults import ACTIONS, DIRECTIONS, FaultPlanError, rule_from_json

    prefix = f"{source}: " if source else ""
    protocol, proto, spec, n = _protocol_of(load_program(program_json))
    unknown = set(plan) - {"seed", "fault", "reset", "restart"}
    if unknown:
        raise PlanError(f"{prefix}unknown keys {', '.join(sorted(unknown))} (a plan has seed, [[fault]], [[reset]], "
                        "[restart])")
    rules = []
    for i, f in enumerate(_tables(plan, "fault", prefix)):
        where = f"{prefix}fault[{i}]"
        unknown = set(f) - {"action", "kind", "job", "rank", "slot", "aggregator", "nth", "probability", "delay",
                            "corrupt", "direction", "name"}
        if unknown:
            raise PlanError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        action = f.get("action")
        if action not in ACTIONS:
            raise PlanError(f"{where}.action = {action!r}: choose one of {', '.join(ACTIONS)}")
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
            raise PlanError(f"{where}.kind = {kind!r}: {protocol.name} packets are of kind "
                            f"{', '.join(['any', *proto.kinds])}")
        if direction not in DIRECTIONS:
            raise PlanError(f"{where}.direction = {direction!r}: choose one of {', '.join(DIRECTIONS)}")
        if "job" in f:
            match.append(field_match(spec, "job_id", _plan_int(f, "job", where, 0, 255)))
        slot_key = "slot" if "slot" in f else "aggregator"
        if slot_key in f:
            slot = _plan_int(f, slot_key, where, 0, proto.slot_field[1] if proto.slot_field[1] else None)
            match.append(field_match(spec, proto.slot_field[0], slot, proto.slot_field[1]))
        rule: dict[str, Any] = {"name": f.get("name", f"fault[{i}]: {action} {kind}"),
                                "action": action, "direction": direction, "match": match}
        if "rank" in f:
            rank = _plan_int(f, "rank", where, 0, job.num_workers - 1)
            rule["ports"] = [job.worker(rank).switch_port]
        for key in ("nth", "probability", "delay", "corrupt"):
            if key in f:
                rule[key] = f[key]
        try:
            rule_from_json(rule, i)
        except FaultPlanError as err:
            raise PlanError(f"{where}: {err.problem}") from None
        rules.append(rule)
    events = []
    for i, r in enumerate(_tables(plan, "reset", prefix)):
        where = f"{prefix}reset[{i}]"
        unknown = set(r) - {"at_frame", "job", "register", "first", "count"}
        if unknown:
            raise PlanError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        if "at_frame" not in r:
            raise PlanError(f"{where}: needs at_frame")
        at = _plan_int(r, "at_frame", where, 1, None)
        if "register" in r:
            if not isinstance(r["register"], str) or not r["register"]:
                raise PlanError(f"{where}.register = {r['register']!r}: expected a register's name")
            events.append({"at_frame": at, "reset_register": r["register"], "first": _plan_int(r, "first", where, 0),
                           **({"count": _plan_int(r, "count", where, 0)} if "count" in r else {})})
        elif "job" in r:
            if _plan_int(r, "job", where, 0, 255) != job.job_id:
                raise PlanError(f"{where}.job = {r['job']}: not the plan's job {job.job_id}")
            events += [{"at_frame": at, "reset_register": name, "first": job.pool.base * per,
                        "count": job.pool.size * per} for name, per in proto.state]
            sets = proto.state[0][1]  # SwitchML keeps two sets of every slot
            events += [{"at_frame": at, "reset_register": name, "first": job.pool.base * sets * n,
                        "count": job.pool.size * sets * n} for name in proto.cells_per_slot_elems]
        else:
            raise PlanError(f"{where}: give job = J or register = NAME")
    out: dict[str, Any] = {"rules": rules, "events": events}
    if "seed" in plan:
        seed = plan["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise PlanError(f"{prefix}seed = {seed!r}: expected an integer >= 0")
        out["seed"] = seed
    return out


def _tables(plan: Mapping[str, Any], key: str, prefix: str) -> list[Mapping[str, Any]]:
    tables = plan.get(key, [])
    if not isinstance(tables, list) or not all(isinstance(t, Mapping) for t in tables):
        raise PlanError(f"{prefix}{key}: expected [[{key}]] tables")
    return tables


def _plan_int(table: Mapping[str, Any], key: str, where: str, lo: int, hi: int | None = None) -> int:
    """table[key] (default 0) as an integer in [lo, hi] (PlanError naming where.key)."""
    value = table.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise PlanError(f"{where}.{key} = {value!r}: expected an integer {bound}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m worker.faults", description=__doc__.split("\n\n")[0])
    p.add_argument("plan", type=Path, help="the protocol-level plan (TOML or JSON)")
    p.add_argument("--job", type=Path, required=True, help="the job file")
    p.add_argument("--program-json", type=Path, required=True, help="the compiled program (switchml or atp)")
    p.add_argument("-o", "--output", type=Path, default=None, help="write the switch's plan here (default: stdout)")
    args = p.parse_args(argv)
    try:
        compiled = compile_plan(load_plan(args.plan), JobConfig.load(args.job), args.program_json,
                                source=str(args.plan))
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
