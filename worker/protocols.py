"""The protocol registry: name -> `worker.plugin.ProtocolSpec`, the way Mininet's `topos` maps names to topologies.

The worker CLI, the experiment runner, the studies, the soak, the fuzzing and the controller CLI derive their
choices from it and ask a protocol's spec (its rank, pool rule, fault model, accounting) instead of comparing names.
Registered here, one line each:

- `switchml`: in-network aggregation through the P4 switch (`worker.switchml`, UDP, block floating point);
- `ring`: host-based ring all-reduce over TCP (`worker.host.ring`);
- `ps`: host-based sharded parameter server over TCP, co-located with the workers (`worker.host.ps`);
- `atp`: ATP-style best-effort in-network aggregation with a parameter server host (`worker.atp`, UDP, fixed
  point, shared aggregator pool; the PS is `python -m worker.atp.ps`);
- `esa`: ESA-style preemptive, prioritised allocation of that pool (`worker.atp.esa`: ATP's hosts over esa.p4);
- `release`: straggler-tolerant aggregation, a partial aggregate past its job's timeout released to the PS
  (`worker.atp.release`: ATP's hosts over release.p4);
- `omnireduce`: OmniReduce-style sparse blocks, only blocks non-zero in some worker aggregated
  (`worker.switchml.omnireduce`: SwitchML's slots as streams over omnireduce.p4).

Plug-ins: every directory in `$INA_PROTOCOLS` (separated by `:`) is a Python package whose `PROTOCOL` is a
`ProtocolSpec`; importing it also defines its controller (docs/adding-a-protocol.md). They are registered after the
built-in protocols, in every process that imports the registry (worker processes inherit the variable).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from worker.atp.esa import ESA
from worker.atp.plugin import ATP
from worker.atp.release import RELEASE
from worker.codec import IDENTIFIERS, CodecError, HeaderSpec, header_and_payload, load_program
from worker.collective import Collective, CollectiveOptions
from worker.host.plugin import PS, RING
from worker.job import JobConfig
from worker.plugin import ProtocolSpec
from worker.switchml.omnireduce import OMNIREDUCE
from worker.switchml.plugin import SWITCHML

__all__ = ["DEFAULT_PROTOCOL", "PLUGIN_PATH_VAR", "PROTOCOLS", "ProtocolSpec", "default_windows", "in_network",
           "load_plugins", "open_collective", "program_paths", "programs", "protocol_of_program", "register"]

PROTOCOLS: dict[str, ProtocolSpec] = {}

DEFAULT_PROTOCOL = SWITCHML.name
"""What `make run` and every CLI use unless told otherwise."""
PLUGIN_PATH_VAR = "INA_PROTOCOLS"
"""Directories of plug-in protocols (each a package with `PROTOCOL`), `:`-separated."""


def register(spec: ProtocolSpec) -> ProtocolSpec:
    """Add a protocol (a host baseline without a program runs on the default protocol's); ValueError for a name
    taken by another spec."""
    if spec.program is None:
        spec = replace(spec, program=SWITCHML.program)
    old = PROTOCOLS.get(spec.name)
    if old is not None and old is not spec and old.rank is not spec.rank:
        raise ValueError(f"protocol {spec.name!r} is registered already")
    PROTOCOLS[spec.name] = spec
    return spec


register(SWITCHML)
register(RING)
register(PS)
register(ATP)
register(ESA)
register(RELEASE)
register(OMNIREDUCE)


def load_plugins(paths: str | None = None) -> list[ProtocolSpec]:
    """Register the plug-in protocols of `paths` (default: $INA_PROTOCOLS); ValueError naming a directory that is no
    plug-in."""
    out = []
    for entry in filter(None, (os.environ.get(PLUGIN_PATH_VAR, "") if paths is None else paths).split(os.pathsep)):
        folder = Path(entry).resolve()
        if not (folder / "__init__.py").is_file():
            raise ValueError(f"{PLUGIN_PATH_VAR}: {entry} is not a Python package (no __init__.py)")
        if str(folder.parent) not in sys.path:
            sys.path.insert(0, str(folder.parent))
        module = importlib.import_module(folder.name)
        spec = getattr(module, "PROTOCOL", None)
        if not isinstance(spec, ProtocolSpec):
            raise ValueError(f"{PLUGIN_PATH_VAR}: {entry} defines no PROTOCOL (a worker.plugin.ProtocolSpec)")
        if spec.source is None:
            spec = replace(spec, source=folder / f"{spec.program}.p4")
        out.append(register(spec))
    return out


def in_network() -> tuple[str, ...]:
    """Names of the protocols whose switch aggregates."""
    return tuple(p.name for p in PROTOCOLS.values() if p.in_network)


def programs() -> tuple[str, ...]:
    """The P4 programs of the in-network protocols, in registry order."""
    return tuple(dict.fromkeys(str(p.program) for p in PROTOCOLS.values() if p.in_network))


def protocol_of_program(program: str | Path | Mapping[str, Any]) -> tuple[ProtocolSpec, HeaderSpec, int]:
    """The in-network protocol whose header a compiled program declares: (its spec, the header's layout, N elements
    per packet); CodecError naming the header types looked for when it declares none."""
    prog = load_program(program)
    looked = [p for p in PROTOCOLS.values() if p.header_type]
    for spec in looked:
        try:
            header, n = header_and_payload(prog, str(spec.header_type))
        except CodecError:
            continue
        return spec, header, n
    where = f"{program}: " if not isinstance(program, Mapping) else ""
    raise CodecError(f"{where}none of the header types {', '.join(str(p.header_type) for p in looked)}")


def program_paths(directory: Path, program: str) -> tuple[Path, Path]:
    """Where `make build` (p4c-bm2-ss -o, --p4runtime-files) puts a program: (<program>.json, <program>.p4info.txt)."""
    return directory / f"{program}.json", directory / f"{program}.p4info.txt"


def default_windows() -> str:
    """The in-network protocols' default windows, for help texts: "switchml 64, atp 32"."""
    return ", ".join(f"{c.name} {c.default_window}" for c in PROTOCOLS.values() if c.default_window)


def open_collective(name: str, job: JobConfig, rank: int, options: CollectiveOptions | None = None) -> Collective:
    """Open rank `rank` of protocol `name` for job (ValueError naming the choices for an unknown name)."""
    spec = PROTOCOLS.get(name)
    if spec is None:
        raise ValueError(f"unknown protocol {name!r}; choose one of {', '.join(sorted(PROTOCOLS))}")
    job.worker(rank)  # validates the rank
    return spec.open_collective(job, rank, options)


def _identify(prog: Mapping[str, Any]) -> str | None:
    """The protocol a compiled program is, with the codec it takes (worker.codec's hint for a wrong codec)."""
    try:
        spec = protocol_of_program(prog)[0]
    except CodecError:
        return None
    return f"the {spec.name} program: use {spec.codec.__module__}.{spec.codec.__qualname__}"


IDENTIFIERS.append(_identify)
load_plugins()


def main(argv: list[str] | None = None) -> int:
    """`python -m worker.protocols`: the registered protocols, one line each (name, program, kind); with
    `--plugin-sources`, the P4 source of each in-network protocol whose program is not in p4src/ (a plug-in's), as
    `program source` lines for `make build`; with `--in-network`, the in-network protocols' names."""
    from worker.plugin import P4SRC

    args = sys.argv[1:] if argv is None else argv
    if args == ["--in-network"]:
        print(" ".join(in_network()))
        return 0
    for spec in PROTOCOLS.values():
        if args == ["--plugin-sources"]:
            if spec.in_network and spec.p4_source.parent != P4SRC:
                print(spec.program, spec.p4_source)
        else:
            print(f"{spec.name:<10} {spec.program:<10} {'in-network' if spec.in_network else 'host-based'}  "
                  f"{spec.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
