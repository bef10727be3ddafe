"""The protocol registry: every fact about an all-reduce protocol, in one place.

`PROTOCOLS` maps a name to a `ProtocolSpec` (what it is, the P4 program and controller it needs, whether the switch
aggregates, whether it needs a parameter server host, how many levels of switches can aggregate, its default
window, its header in the compiled program, and the factory that opens one rank of it), the way Mininet's `topos`
maps names to topologies. The worker CLI, the experiment runner, the studies, the soak, the fuzzing and the
controller CLI derive their choices and branches from it; nothing else names a protocol. Registered here:

- `switchml`: in-network aggregation through the P4 switch (`worker.switchml`, UDP, block floating point);
- `ring`: host-based ring all-reduce over TCP (`worker.host.ring`);
- `ps`: host-based sharded parameter server over TCP, co-located with the workers (`worker.host.ps`);
- `atp`: ATP-style best-effort in-network aggregation with a parameter server host (`worker.atp`, UDP, fixed
  point, shared aggregator pool; the PS is `python -m worker.atp.ps`).

A new protocol registers itself with `register(ProtocolSpec(...))`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worker.atp.collective import AtpCollective
from worker.atp.header import ATP_HEADER_TYPE, ATP_UDP_PORT
from worker.atp.worker import ATP_WINDOW
from worker.codec import CodecError, HeaderSpec, header_and_payload, load_program
from worker.collective import Collective, CollectiveOptions
from worker.driver import WindowOptions
from worker.host.collective import open_host
from worker.host.ps import ShardedPS
from worker.host.ring import Ring
from worker.job import JobConfig
from worker.switchml.collective import SwitchMLCollective
from worker.switchml.header import INA_HEADER_TYPE, INA_UDP_PORT
from worker.switchml.worker import SWITCHML_WINDOW

__all__ = ["ATP", "DEFAULT_PROTOCOL", "PROTOCOLS", "PS", "RING", "SWITCHML", "ProtocolSpec", "default_windows",
           "in_network", "open_collective", "program_paths", "programs", "protocol_of_program", "register"]


def _resolve(ref: str) -> Any:
    """The object a "module:attribute" reference names, imported on demand (controller/ is a floor above worker/,
    and a protocol's fault model imports worker.faults)."""
    module, attr = ref.split(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class ProtocolSpec:
    """A registered protocol: its facts and its factory."""

    name: str
    description: str
    open: Callable[[JobConfig, int, CollectiveOptions], Collective]
    program: str = "switchml"
    """The P4 program (p4src/<program>.p4) the switch runs for this protocol (host baselines: its L2 forwarding)."""
    controller: str = "controller.switchml:SwitchMLController"
    """The control plane of `program` ("module:class", resolved by `controller.programs`)."""
    in_network: bool = False
    """The switch aggregates (the program's job must be installed); False: a host-based baseline."""
    needs_ps: bool = False
    """A parameter server host joins the network (and the job file names it)."""
    levels: int = 1
    """Levels of switches that can aggregate (2: rack switches and the switch above them)."""
    default_window: int | None = None
    """In-network protocols: packets in flight per worker when the options leave the window unset."""
    header_type: str | None = None
    """In-network protocols: the header type of its packets in the compiled program's BMv2 JSON."""
    udp_port: int | None = None
    """In-network protocols: the UDP port its packets are addressed to."""
    codec: str | None = None
    """In-network protocols: the class that encodes and decodes its packets ("module:Class")."""
    ps_module: str | None = None
    """With needs_ps: the module the parameter server host runs (`python -m <ps_module>`)."""
    faults: str | None = None
    """In-network protocols: its fault model for `worker.faults` ("module:attribute")."""
    trace_track: str | None = None
    """In-network protocols: the header field (`header.field[&MASK]`) whose value makes a track of the switch's
    timeline (`python -m switch --trace-track`): its slot or aggregator."""
    trace_fields: tuple[str, ...] = ()
    """Fields the switch's timeline records of every frame in and out (`--trace-field`)."""
    uplink_in_order: bool = False
    """The protocol assumes a worker's packets reach the switch in the order sent (SwitchML's window: a
    retransmission overtaking a later use of its slot would count twice), so fault plans reorder only downlinks."""

    def window_width(self, pool_size: int, window: int | None = None) -> int:
        """The packets in flight per worker this protocol keeps with a pool of pool_size slots and `--window`."""
        return WindowOptions(window=window).width(pool_size, self.default_window)

    def fault_model(self) -> Any:
        """This protocol's `worker.faults.ProtocolFaults`."""
        assert self.faults is not None
        return _resolve(self.faults)

    def controller_class(self) -> Any:
        """The controller class of this protocol's program."""
        return _resolve(self.controller)


PROTOCOLS: dict[str, ProtocolSpec] = {}


def register(spec: ProtocolSpec) -> ProtocolSpec:
    PROTOCOLS[spec.name] = spec
    return spec


def in_network() -> tuple[str, ...]:
    """Names of the protocols whose switch aggregates."""
    return tuple(p.name for p in PROTOCOLS.values() if p.in_network)


def programs() -> tuple[str, ...]:
    """The P4 programs of the in-network protocols, in registry order."""
    return tuple(dict.fromkeys(p.program for p in PROTOCOLS.values() if p.in_network))


def protocol_of_program(program: str | Path | Mapping[str, Any]) -> tuple[ProtocolSpec, HeaderSpec, int]:
    """The in-network protocol whose header a compiled program declares: (its spec, the header's layout, N elements
    per packet); CodecError naming the header types looked for when it declares none."""
    prog = load_program(program)
    looked = [p for p in PROTOCOLS.values() if p.header_type]
    for spec in looked:
        try:
            header, n = header_and_payload(prog, spec.header_type)  # type: ignore[arg-type]
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
    return spec.open(job, rank, options or CollectiveOptions())


SWITCHML = register(ProtocolSpec("switchml", "in-network aggregation through the P4 switch (SwitchML: UDP, block floating "
                                  "point, shadow-copy slots)", SwitchMLCollective, in_network=True,
                      default_window=SWITCHML_WINDOW, header_type=INA_HEADER_TYPE, udp_port=INA_UDP_PORT,
                      codec="worker.switchml.header:Codec", faults="worker.switchml.faults:FAULTS", uplink_in_order=True,
                      trace_track="ina.pool_index&0x7fff",
                      trace_fields=("ina.msg_type", "ina.packet_id", "ina.pool_index", "ina.worker_rank")))
RING = register(ProtocolSpec(Ring.name, Ring.description, open_host(Ring)))
PS = register(ProtocolSpec(ShardedPS.name, ShardedPS.description, open_host(ShardedPS)))
ATP = register(ProtocolSpec("atp", "in-network aggregation ATP-style (UDP, fixed point, aggregator pool shared by jobs, "
                             "collisions and loss completed by a parameter server host)", AtpCollective,
                      program="atp", controller="controller.atp:AtpController", in_network=True, needs_ps=True,
                      levels=2, default_window=ATP_WINDOW, header_type=ATP_HEADER_TYPE, udp_port=ATP_UDP_PORT,
                      codec="worker.atp.header:AtpCodec", faults="worker.atp.faults:FAULTS", ps_module="worker.atp.ps",
                      trace_track="atp.agtr", trace_fields=("atp.seq", "atp.flags", "atp.rank", "ipv4.diffserv")))

DEFAULT_PROTOCOL = SWITCHML.name
"""What `make run` and every CLI use unless told otherwise."""
