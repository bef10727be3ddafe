"""What an experiment is: the network it runs on and the run on it (`ExperimentConfig`, its `network` view), every
value checked before anything starts.

    cfg = ExperimentConfig(protocol="atp", workers=4, bw=2.0)      # every knob of `make run`
    cfg.check()                                                    # ValueError naming a bad value
    cfg.network                                                    # NetworkConfig: what a network is opened for
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from topo.cpus import CPU_LAYOUTS
from topo.fabric import Fabric
from topo.target import Target
from topo.topologies import make_fabric
from worker.job import MAX_SLOTS, MAX_WORKERS, PoolRange
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, protocol_of_program

__all__ = ["ROOT", "WINDOW_CONTROLS", "ExperimentConfig", "NetworkConfig", "num_elems"]

ROOT = Path(__file__).resolve().parents[1]
WINDOW_CONTROLS = ("fixed", "adaptive")
"""An in-network protocol's window: all of it in flight, or sized to the path (ExperimentConfig.window_control)."""


@dataclass(frozen=True)
class ExperimentConfig:
    """Knobs of one all-reduce experiment."""

    protocol: str = DEFAULT_PROTOCOL
    """The protocol the workers run (a name in worker.protocols.PROTOCOLS)."""
    workers: int = 4
    """Workers per job."""
    jobs: int = 1
    """Concurrent jobs (job ids 1..jobs), each with its own `workers` hosts; SwitchML gives each job its own
    `pool_size` slots (a static partition), ATP jobs all hash into one shared pool of `pool_size` aggregators."""
    ps_per_job: bool = False
    """A protocol with a PS: one PS host (and link) per job, as ATP runs them, instead of one for every job."""
    size: int = 65536
    loss: float = 0.0
    sparsity: float = 0.0
    """Fraction of 64-element blocks that are all zero in each worker's input, drawn per worker (`--sparsity`)."""
    sparse_overlap: float = 0.0
    """Probability that a block's zero/non-zero draw is one all workers share instead of their own
    (`--sparse-overlap`; 0: independent per worker, 1: every worker has the same zero blocks)."""
    bw: float | None = None
    """Link rate in Mbit/s (htb on every link, both directions); None: unlimited veth links."""
    dtype: str = "float32"
    target: Target = Target.EMBEDDED
    program_json: Path | None = None
    """The compiled program (default: program_dir/<the collective's program>.json)."""
    p4info: Path | None = None
    program_dir: Path = ROOT / "out"
    pool_size: int = 64
    window: int | None = None
    """Packets in flight per worker (None: the collective's default, `ProtocolSpec.window_width`)."""
    window_control: str = "fixed"
    """SwitchML: `fixed` keeps every slot of the window in flight (SwitchML's published worker), `adaptive` at most
    rate x (min RTT + 5 ms) packets (worker/cwnd.py, `python -m worker --adaptive-window`)."""
    seed: int = 1
    timeout_s: float = 300.0
    """Bound on the whole run of the workers; stragglers are killed and reported."""
    straggler_ms: float = 0.0
    """Extra compute time of the last rank before it joins the all-reduce (the others wait for it)."""
    straggler_jobs: int | None = None
    """With `straggler_ms`: only jobs 1..straggler_jobs have the late rank (None: every job)."""
    kill_switch_after_s: float | None = None
    """Kill the switch process this long after the workers start (fault-injection test)."""
    restart_switch_after_s: float | None = None
    """Kill the switch process this long into the all-reduce and start it again, re-programmed (star only)."""
    kill_rank_after: tuple[int, float] | None = None
    """(rank, seconds): kill that worker process of job 1 this long after the job's all-reduce started (its start
    barrier released; without a barrier: after the processes started) — a crash test."""
    run_dir: Path = Path("/tmp/ina-testbed")
    worker_args: tuple[str, ...] = ()
    barrier: bool = True
    """Workers start the all-reduce together once all are set up (`--barrier`), so their timing excludes the other
    processes' start-up."""
    topo: str = "star"
    """The network: `star` (one switch), `twotier` (`racks` rack switches under a PS rack switch) or `leafspine`
    (`racks` leaves and the PS's leaf under `spines` spines)."""
    racks: int = 2
    """Two-tier, leaf-spine: racks (the workers fill them in order, as evenly as possible)."""
    levels: int = 2
    """Two-tier, leaf-spine ATP: aggregation levels (2: rack switches, then the PS's switch; 1: the PS's switch)."""
    spines: int = 2
    """Leaf-spine: spines, each linked to every leaf."""
    job_priority: int | None = None
    """Every job's priority in its job file (0..255; a switch that allocates by priority, ESA, then treats the jobs
    alike); None: the controller's default (ESA: earlier job ids first)."""
    job_release_us: int | None = None
    """Every job's `release_us` in its job file (a switch that releases lagging partial aggregates, release.p4, sends
    one on to the PS this long after its first contribution; 0: never); None: the controller's default."""
    ecn_threshold: int | None = None
    """ATP: mark ECN on packets that leave a queue at least this deep (None: marking off)."""
    queue_packets: int | None = None
    """With `bw`: each rate-limited link end queues at most this many packets and drops the rest (a switch port's
    buffer); None: the kernel's default (txqueuelen, 1000 packets)."""
    fault_plan: Path | None = None
    """A protocol-level fault plan (worker.faults, TOML/JSON) for job 1, applied by the embedded switch from its
    start (star only)."""
    pcap: bool = False
    """Every switch writes a pcap per port and direction into run_dir/pcap/ (<iface>_in.pcap, <iface>_out.pcap;
    `python -m worker.scapy_layers PROGRAM.json FILE` decodes one)."""
    trace: Path | None = None
    """Write the run's timeline here (Chrome trace-event JSON, opens in Perfetto): every worker, the PS and every
    embedded switch write theirs into run_dir/trace/, merged into this file once the network is down. The switch
    then runs frames through its pipeline one by one (timings include the recording: read the order, not the
    speed)."""
    cpus: str = "split"
    """CPU layout (topo.cpus): `split` gives each switch process a CPU of its own and the hosts' processes the
    others (with at least twice as many CPUs as switches), `shared` leaves placement to the scheduler."""
    tls: Path | None = None
    """A certificate directory (topo.tls, made if missing): every switch serves P4Runtime over TLS and requires
    client certificates, the controllers present theirs; None: plaintext P4Runtime."""

    @property
    def network(self) -> NetworkConfig:
        """What the network is (`ExperimentNetwork`'s runs may change everything else)."""
        return NetworkConfig(**{f.name: getattr(self, f.name) for f in fields(NetworkConfig)
                                if f.name != "program_files"}, program_files=self.program_files)

    def fabric(self) -> Fabric:
        """The network this config describes."""
        return make_fabric(self.topo, self.workers * self.jobs, ps=PROTOCOLS[self.protocol].needs_ps, bw=self.bw,
                           racks=self.racks, levels=self.levels, ps_hosts=self.jobs if self.ps_per_job else 1,
                           spines=self.spines)

    @property
    def program(self) -> str:
        """The P4 program the collective needs (p4src/<program>.p4)."""
        return PROTOCOLS[self.protocol].program

    def check(self) -> None:
        """Every value in range and every file there, before anything is started or written (ValueError naming the
        value): the sizes and counts, the network's shape, the protocol on it, the compiled program, the fault plan."""
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}; choose one of {', '.join(sorted(PROTOCOLS))}")
        for name, value, lo in (("size", self.size, 1), ("workers", self.workers, 1), ("jobs", self.jobs, 1),
                                ("pool_size", self.pool_size, 1), ("seed", self.seed, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
        if self.workers > MAX_WORKERS:
            raise ValueError(f"workers must be at most {MAX_WORKERS} (the switch's worker bitmap), got {self.workers}")
        if self.pool_size > MAX_SLOTS:
            raise ValueError(f"pool_size must be at most {MAX_SLOTS}, got {self.pool_size}")
        if self.window is not None and not 1 <= self.window <= self.pool_size:
            raise ValueError(f"window must be in [1, pool_size = {self.pool_size}], got {self.window}")
        if not 0 <= self.loss < 1:
            raise ValueError(f"loss must be a probability in [0, 1), got {self.loss}")
        if not 0 <= self.sparsity <= 1:
            raise ValueError(f"sparsity must be a fraction in [0, 1], got {self.sparsity}")
        if not 0 <= self.sparse_overlap <= 1:
            raise ValueError(f"sparse_overlap must be a probability in [0, 1], got {self.sparse_overlap}")
        if self.bw is not None and not self.bw > 0:
            raise ValueError(f"link rate must be > 0 Mbit/s, got {self.bw}")
        if self.queue_packets is not None and (self.bw is None or self.queue_packets < 1):
            raise ValueError("a queue length (packets, >= 1) needs a link rate (bw): unlimited veths do not queue")
        if self.dtype not in ("float32", "int32"):
            raise ValueError(f"dtype must be float32 or int32, got {self.dtype!r}")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout must be > 0 s, got {self.timeout_s}")
        if self.window_control not in WINDOW_CONTROLS:
            raise ValueError(f"window_control must be one of {', '.join(WINDOW_CONTROLS)}, got {self.window_control!r}")
        if self.cpus not in CPU_LAYOUTS:
            raise ValueError(f"cpus must be one of {', '.join(CPU_LAYOUTS)}, got {self.cpus!r}")
        if self.tls is not None and self.tls.exists() and not self.tls.is_dir():
            raise ValueError(f"tls must be a certificate directory, and {self.tls} is a file")
        if self.kill_rank_after is not None and not 0 <= self.kill_rank_after[0] < self.workers:
            raise ValueError(f"kill_rank names rank {self.kill_rank_after[0]}; ranks are 0..{self.workers - 1}")
        fabric = self.fabric()
        self.check_protocol(fabric)
        for path in self.program_files:
            if not path.is_file():
                raise FileNotFoundError(f"{path} not found: run `make build` first")
        if self.fault_plan is not None:
            self.compiled_fault_plan(fabric)

    def compiled_fault_plan(self, fabric: Fabric | None = None) -> tuple[dict[str, Any], float | None]:
        """(the switch's byte-level plan of `fault_plan` for job 1, the plan's [restart] after_s or None); PlanError
        naming the plan file and key."""
        from worker.faults import PlanError, compile_plan, load_plan

        assert self.fault_plan is not None
        if self.topo != "star":
            raise ValueError("fault plans name the ports of the star's switch: use --topo star")
        plan = load_plan(self.fault_plan)
        restart = plan.get("restart", {})
        if not isinstance(restart, dict) or set(restart) - {"after_s"}:
            raise PlanError(f"{self.fault_plan}: [restart] takes after_s = SECONDS")
        after = restart.get("after_s")
        if after is not None and (isinstance(after, bool) or not isinstance(after, (int, float)) or after <= 0):
            raise PlanError(f"{self.fault_plan}: restart.after_s must be a number of seconds > 0, got {after!r}")
        fabric = fabric or self.fabric()
        job = fabric.job_config(1, list(range(1, self.workers + 1)), num_elems=num_elems(self.program_files[0]),
                                pool=PoolRange(base=0, size=self.pool_size))
        compiled = compile_plan(plan, job, self.program_files[0], source=str(self.fault_plan))
        return compiled, None if after is None else float(after)

    @property
    def window_width(self) -> int:
        """Packets in flight per worker of an INA collective: `window`, else the collective's default."""
        return PROTOCOLS[self.protocol].window_width(self.pool_size, self.window)

    def check_protocol(self, fabric: Fabric) -> None:
        """ValueError if this config's protocol cannot run on the network `fabric` (its shape and program)."""
        spec = PROTOCOLS[self.protocol]
        fabric.check(self.protocol, str(spec.program), spec.in_network)

    @property
    def program_files(self) -> tuple[Path, Path]:
        """(BMv2 JSON, P4Info) of the switch's program."""
        return (self.program_json or self.program_dir / f"{self.program}.json",
                self.p4info or self.program_dir / f"{self.program}.p4info.txt")


@dataclass(frozen=True)
class NetworkConfig:
    """What makes a network (`ExperimentConfig.network`): one `ExperimentNetwork` runs any runs that share it."""

    workers: int
    jobs: int
    ps_per_job: bool
    bw: float | None
    target: Target
    program_files: tuple[Path, Path]
    pool_size: int
    topo: str
    racks: int
    levels: int
    spines: int
    job_priority: int | None
    job_release_us: int | None
    ecn_threshold: int | None
    queue_packets: int | None
    fault_plan: Path | None
    cpus: str
    tls: Path | None
    pcap: bool
    trace: Path | None

    def changes(self, other: NetworkConfig) -> list[str]:
        """"field old -> new" of every field other changes."""
        return [f"{f.name} {getattr(self, f.name)} -> {getattr(other, f.name)}" for f in fields(self)
                if getattr(self, f.name) != getattr(other, f.name)]


def num_elems(program_json: Path) -> int:
    """Elements per packet of the program's protocol header (whichever in-network protocol's it declares)."""
    return protocol_of_program(program_json)[2]
