"""`python -m switch`: the embedded switch with simple_switch_grpc's command line.

    python -m switch [options] [--no-p4 | PROG.json] -- [target options]

    python -m switch --no-p4 -i 1@veth1 -i 2@veth2 --log-console -- --grpc-server-addr 127.0.0.1:9559 --cpu-port 255

    python -m switch --no-p4 -- --grpc-server-ssl --grpc-server-cert server.pem --grpc-server-key server.key \
        --grpc-server-cacert ca.pem --grpc-server-with-client-auth

Options before `--` are BMv2's general options (bm_sim/options_parse.cpp), those after it simple_switch_grpc's
target options (targets/simple_switch_grpc/main.cpp) plus this switch's `--strict-bmv2`. Startup failures print one
line on stderr and exit 1; SIGTERM/SIGINT stop the switch cleanly (exit 0).
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import json
import os
import secrets
import signal
import socket
import sys
from pathlib import Path
from typing import Sequence

DEFAULT_GRPC_ADDR = "127.0.0.1:9559"
DEFAULT_DROP_PORT = 511
DEFAULT_MAX_PORT_COUNT = 512
DEFAULT_MAX_LOOP = 1 << 20  # switch.v1model.switch.MAX_LOOP (not imported: --help stays fast)
JSON_VERSION = "2.23"
LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "off")
PROG = "python -m switch"


class StartupError(Exception):
    """A reason the switch cannot start; printed as one line."""


@dataclasses.dataclass
class Options:
    """Parsed command line."""

    config: str | None = None
    no_p4: bool = False
    interfaces: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    pcap: str | None = None
    device_id: int = 0
    thrift_port: int | None = None
    log_console: bool = False
    log_file: str | None = None
    log_level: str = "trace"
    log_flush: bool = False
    max_port_count: int = DEFAULT_MAX_PORT_COUNT
    grpc_addr: str = DEFAULT_GRPC_ADDR
    grpc_ssl: bool = False
    """--grpc-server-ssl: P4Runtime over TLS with --grpc-server-cert/--grpc-server-key."""
    grpc_cacert: str | None = None
    grpc_cert: str | None = None
    grpc_key: str | None = None
    grpc_client_auth: bool = False
    cpu_port: int | None = None
    drop_port: int = DEFAULT_DROP_PORT
    strict_bmv2: bool = False
    seed: int | None = None
    """Seed of the program's random() (our extension; BMv2 has none); None: a fresh one, printed at startup."""
    disable_swap: bool = False
    fault_plan: str | None = None
    """A fault plan file (switch.faults; our extension): faults applied to frames at the ports."""
    max_loop: int = DEFAULT_MAX_LOOP
    """Resubmit/recirculate passes after which a packet counts as an endless loop (our extension)."""
    timeline: str | None = None
    """--trace: where to write the timeline (switch.packet_timeline; our extension)."""
    trace_track: str | None = None
    trace_fields: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    stderr_warnings: list[str] = dataclasses.field(default_factory=list)
    """Warnings simple_switch_grpc writes to stderr rather than stdout (the TLS flags')."""


def _positive(text: str) -> int:
    v = _uint(text)
    if v == 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not positive")
    return v


def _interface(text: str) -> tuple[int, str]:
    num, sep, name = text.partition("@")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"'{text}' is not <port-num>@<interface-name>")
    try:
        port = int(num, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{num}' in '{text}' is not a port number") from None
    if port < 0:
        raise argparse.ArgumentTypeError(f"port number {port} in '{text}' is negative")
    return port, name


def _uint(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a non-negative integer") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is negative")
    return v


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one `switch: error:` line (plus a hint) and exits 1, as BMv2 does."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"switch: error: {message} (see '{PROG} --help')\n")
        raise SystemExit(1)


def build_parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The general (before `--`) and target (after `--`) option parsers."""
    general = _Parser(prog=PROG, add_help=False,
                      usage=f"{PROG} [options] <path to JSON config file> [-- target options]",
                      description="Embedded BMv2-compatible v1model switch with a P4Runtime server "
                                  "(simple_switch_grpc's command line).")
    g = general.add_argument_group("Options")
    g.add_argument("-h", "--help", action="store_true", help="Display this help message")
    g.add_argument("-i", "--interface", action="append", type=_interface, default=[], metavar="<port-num>@<iface>",
                   help="Attach network interface <iface> as port <port-num> at startup. Can appear multiple times")
    g.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR",
                   help="Generate pcap files for interfaces (<iface>_in.pcap, <iface>_out.pcap) in DIR "
                        "(default: current directory)")
    g.add_argument("--thrift-port", type=_uint, metavar="N",
                   help="Accepted for compatibility; this switch has no Thrift server (use P4Runtime)")
    g.add_argument("--device-id", type=_uint, default=0, metavar="N",
                   help="Device ID, used to identify the device in P4Runtime messages (default 0)")
    g.add_argument("--log-console", action="store_true", help="Enable logging on stdout (per-packet trace)")
    g.add_argument("--log-file", metavar="FILE", help="Enable logging to given file")
    g.add_argument("-L", "--log-level", choices=LOG_LEVELS, default=None, metavar="LEVEL",
                   help="Set log level: 'trace', 'debug', 'info', 'warn', 'error', 'off'; default is 'trace'")
    g.add_argument("--log-flush", action="store_true",
                   help="If used with '--log-file', the logger will flush to disk after every log message")
    g.add_argument("-v", "--version", action="store_true", help="Display version information")
    g.add_argument("--json-version", action="store_true",
                   help="Display max bmv2 JSON version supported in the format <major>.<minor>")
    g.add_argument("--no-p4", action="store_true", help="Enable the switch to start without an input configuration")
    g.add_argument("--max-port-count", type=_uint, default=DEFAULT_MAX_PORT_COUNT, metavar="N",
                   help="Maximum number of interfaces that can be bound to the switch")
    g.add_argument("--drop-port", type=_uint, default=None, metavar="N",
                   help="Also accepted here (BMv2 takes it after '--'): the drop port (default 511)")
    g.add_argument("--seed", type=_uint, default=None, metavar="N",
                   help="Seed the program's random() (e.g. a loss simulator) so a run can be replayed; without it "
                        "a fresh seed is drawn and printed at startup (an extension: simple_switch has no such flag)")
    g.add_argument("--fault-plan", metavar="FILE", default=None,
                   help="Apply the fault plan FILE (JSON, see switch/faults.py: drop, duplicate, delay or corrupt "
                        "chosen frames, reset registers at a chosen frame) at the ports; seeded by --seed unless the "
                        "plan has its own seed (an extension: simple_switch has no such flag)")
    g.add_argument("--trace", metavar="FILE", default=None,
                   help="Write a timeline to FILE at exit (Chrome trace-event JSON, opens in Perfetto): a span per "
                        "frame with the ports it left on, the fault plan's actions; frames then go through the "
                        "pipeline one by one (an extension: simple_switch has no such flag)")
    g.add_argument("--trace-track", metavar="HDR.FIELD[&MASK]", default=None,
                   help="With --trace: one track per value of this field (e.g. ina.pool_index&0x7fff: per slot), "
                        "else per ingress port")
    g.add_argument("--trace-field", metavar="HDR.FIELD", action="append", default=[],
                   help="With --trace: record this field of each frame in and out (repeatable)")
    g.add_argument("config", nargs="?", help=argparse.SUPPRESS)

    target = _Parser(prog=f"{PROG} ... --", add_help=False, usage=argparse.SUPPRESS)
    t = target.add_argument_group("Target specific options (after '--')")
    t.add_argument("--grpc-server-addr", metavar="HOST:PORT",
                   help=f"Bind gRPC server to given address [default is {DEFAULT_GRPC_ADDR}]")
    t.add_argument("--grpc-server-ssl", action="store_true", help="Enable SSL/TLS for gRPC server")
    t.add_argument("--grpc-server-cacert", metavar="FILE",
                   help="Path to pem file holding CA certificate to verify peer against")
    t.add_argument("--grpc-server-cert", metavar="FILE", help="Path to pem file holding server certificate")
    t.add_argument("--grpc-server-key", metavar="FILE", help="Path to pem file holding server key")
    t.add_argument("--grpc-server-with-client-auth", action="store_true",
                   help="Require client to have a valid certificate for mutual authentication (needs "
                        "--grpc-server-cacert here)")
    t.add_argument("--cpu-port", type=_uint, metavar="N",
                   help="Choose a numerical value for the CPU port, used for packet-in / packet-out. Do not add an "
                        "interface with this port number, and 0 is not a valid value. Without it P4Runtime packet "
                        "IO is not available")
    t.add_argument("--drop-port", type=_uint, default=None, metavar="N",
                   help="Choose a numerical value for the drop port (default is 511)")
    t.add_argument("--disable-swap", action="store_true",
                   help="Accepted for compatibility (pipeline swaps are always atomic here)")
    t.add_argument("--max-loop", type=_positive, default=DEFAULT_MAX_LOOP, metavar="N",
                   help=f"Drop (count and log) a packet still resubmitting or recirculating after N passes: an "
                        f"endless loop. BMv2 has no bound; the default ({DEFAULT_MAX_LOOP}) is far above any program's loop "
                        f"[our extension]")
    t.add_argument("--strict-bmv2", action="store_true",
                   help="Behave exactly like real simple_switch_grpc where this switch offers more: P4Runtime "
                        "register reads/writes answer UNIMPLEMENTED")
    return general, target


def help_text() -> str:
    general, target = build_parsers()
    return (general.format_help()
            + "\nThis target also comes with its own command line parser, make sure you separate general bmv2 "
              "options from target specific options with '--'\n"
            + target.format_help())


def parse_args(argv: Sequence[str]) -> Options:
    """Parse the command line; exits for --help/--version and on usage errors."""
    argv = list(argv)
    if "--" in argv:
        cut = argv.index("--")
        general_argv, target_argv = argv[:cut], argv[cut + 1:]
    else:
        general_argv, target_argv = argv, []
    general, target = build_parsers()
    g = general.parse_args(general_argv)
    if g.help:
        sys.stdout.write(help_text())
        raise SystemExit(0)
    if g.version:
        print("ina-testbed switch 0.1.0 (BMv2 simple_switch_grpc compatible)")
        raise SystemExit(0)
    if g.json_version:
        print(JSON_VERSION)
        raise SystemExit(0)
    t = target.parse_args(target_argv)
    if g.pcap is not None and g.config is None and g.pcap.endswith(".json") and not os.path.isdir(g.pcap):
        g.config, g.pcap = g.pcap, "."  # `--pcap prog.json`: the optional DIR swallowed the program (BMv2 reads it so)

    opts = Options(no_p4=g.no_p4, interfaces=g.interface, pcap=g.pcap, device_id=g.device_id,
                   thrift_port=g.thrift_port, log_console=g.log_console, log_file=g.log_file,
                   log_level=g.log_level or "trace", log_flush=g.log_flush, max_port_count=g.max_port_count,
                   strict_bmv2=t.strict_bmv2, disable_swap=t.disable_swap, seed=g.seed,
                   fault_plan=g.fault_plan, max_loop=t.max_loop, timeline=g.trace, trace_track=g.trace_track,
                   trace_fields=g.trace_field)
    if g.trace_track is not None:
        from switch.packet_timeline import parse_track
        try:
            parse_track(g.trace_track)
        except ValueError as e:
            general.error(f"argument --trace-track: {e}")
    if g.config is not None:
        if g.no_p4:
            opts.warnings.append("Warning: ignoring input config as '--no-p4' was used")
        else:
            opts.config = g.config
    elif not g.no_p4:
        general.error("please specify an input JSON configuration file (or --no-p4)")
    if g.log_console and g.log_file:
        general.error("--log-console and --log-file are exclusive")
    if g.log_flush and not g.log_file:
        opts.warnings.append("Ignoring --log-flush option because --log-file not specified")
    if len(opts.interfaces) > opts.max_port_count:
        general.error(f"{len(opts.interfaces)} interfaces exceed --max-port-count {opts.max_port_count}")
    if g.drop_port is not None and t.drop_port is not None and g.drop_port != t.drop_port:
        general.error(f"--drop-port given twice with different values ({g.drop_port}, {t.drop_port})")
    drop = t.drop_port if t.drop_port is not None else g.drop_port
    opts.drop_port = DEFAULT_DROP_PORT if drop is None else drop
    if t.cpu_port is not None:
        if t.cpu_port == 0:
            target.error("0 is not a valid value for --cpu-port")
        if t.cpu_port == opts.drop_port:
            target.error(f"--cpu-port {t.cpu_port} is the drop port; choose another (or change --drop-port)")
        opts.cpu_port = t.cpu_port
    if t.grpc_server_addr is not None:
        opts.grpc_addr = t.grpc_server_addr
    _tls_options(opts, t, target)
    if g.thrift_port is not None:
        opts.warnings.append(f"Note: no Thrift server in this switch; --thrift-port {g.thrift_port} ignored "
                             f"(use P4Runtime on {opts.grpc_addr})")
    return opts


def _tls_options(opts: Options, t: argparse.Namespace, target: argparse.ArgumentParser) -> None:
    """simple_switch_grpc's checks of the TLS flags (main.cpp), in its order and words."""
    pem_files = (t.grpc_server_cacert, t.grpc_server_cert, t.grpc_server_key)
    if not t.grpc_server_ssl:
        if any(f is not None for f in pem_files):
            opts.stderr_warnings.append("SSL/TLS is disabled for gRPC server, so provided .pem files will be ignored")
        if t.grpc_server_with_client_auth:
            opts.stderr_warnings.append("SSL/TLS is disabled for gRPC server, so cannot request client auth")
        return
    for flag, value in (("--grpc-server-cert", t.grpc_server_cert), ("--grpc-server-key", t.grpc_server_key)):
        if not value:
            target.error(f"When enabling SSL/TLS for gRPC server, {flag} is required")
    if t.grpc_server_with_client_auth and not t.grpc_server_cacert:
        # BMv2 starts and then fails every handshake; Python's grpc refuses these options outright
        target.error("--grpc-server-with-client-auth needs --grpc-server-cacert (the CA that signs client "
                     "certificates)")
    opts.grpc_ssl = True
    opts.grpc_cacert = t.grpc_server_cacert or None
    opts.grpc_cert, opts.grpc_key = t.grpc_server_cert, t.grpc_server_key
    opts.grpc_client_auth = t.grpc_server_with_client_auth


# -- startup ------------------------------------------------------------------------------------------------------


def split_addr(addr: str) -> tuple[str, int]:
    """'host:port' or '[v6]:port' → (host, port)."""
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise StartupError(f"--grpc-server-addr '{addr}' is not HOST:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def check_bindable(addr: str) -> None:
    """Fail early, in one line, when the gRPC address is taken or not local (grpc's own bind error is not helpful)."""
    host, port = split_addr(addr)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise StartupError(f"cannot resolve gRPC server address '{addr}': {e.strerror}") from None
    family, _, _, _, sockaddr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as grpc does: TIME_WAIT leftovers are fine
        try:
            s.bind(sockaddr)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise StartupError(f"gRPC server address {addr} is already in use") from None
            raise StartupError(f"cannot bind gRPC server to {addr}: {e.strerror}") from None


def read_program(path: str) -> dict:
    """Read and parse a BMv2 JSON file (file-level errors only; the engine validates the contents)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise StartupError(f"cannot read JSON config '{path}': {e.strerror}") from None
    except UnicodeDecodeError:
        raise StartupError(f"JSON config '{path}' is not UTF-8 text") from None
    try:
        program = json.loads(text)
    except json.JSONDecodeError as e:
        raise StartupError(f"JSON config '{path}' is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") \
            from None
    if not isinstance(program, dict):
        raise StartupError(f"JSON config '{path}' is not a BMv2 JSON object")
    return program


def load_program(sw: object, path: str, program: dict) -> None:
    """Load a parsed BMv2 JSON program into the switch."""
    from switch.errors import LoadError

    try:
        sw.load(program)
    except LoadError as e:
        raise StartupError(f"cannot load JSON config '{path}': {_one_line(str(e))}") from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _make_trace(opts: Options):
    from switch.trace import Trace

    if opts.log_level == "off":
        return None
    if opts.log_console:
        return Trace(sys.stdout, autoflush=False)
    if opts.log_file:
        try:
            stream = open(opts.log_file, "a", encoding="utf-8", buffering=1 if opts.log_flush else -1)
        except OSError as e:
            raise StartupError(f"cannot open log file '{opts.log_file}': {e.strerror}") from None
        return Trace(stream, autoflush=opts.log_flush, close_stream=True)
    return None


def _read_tls(opts: Options):
    """The server's TLS options read from the .pem files (BMv2's error naming a file it cannot read), or None."""
    if not opts.grpc_ssl:
        return None
    try:
        from switch.runtime.tls import PemError, ServerTls
    except ImportError as e:
        raise StartupError(f"P4Runtime server unavailable (switch.runtime): {e}") from None
    assert opts.grpc_cert is not None and opts.grpc_key is not None
    try:
        return ServerTls.from_files(opts.grpc_cert, opts.grpc_key, opts.grpc_cacert, opts.grpc_client_auth)
    except PemError as e:
        raise StartupError(str(e)) from None


def _import_server():
    try:
        from switch.runtime import P4RuntimeServer
    except ImportError as e:
        raise StartupError(f"P4Runtime server unavailable (switch.runtime): {e}") from None
    return P4RuntimeServer


def run(opts: Options) -> int:
    """Start everything, serve until SIGTERM/SIGINT, shut down. StartupError on any startup failure."""
    from switch.packet_timeline import PacketTimeline
    from switch.ports import AfPacketPort, PacketLoop, PortError

    running: list[PacketLoop] = []

    def on_signal(signum: int, frame: object) -> None:
        if running:
            running[0].stop()  # the loop returns; cleanup below
        else:
            raise KeyboardInterrupt  # still starting up: unwind through the finally blocks

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    for w in opts.stderr_warnings:
        print(w, file=sys.stderr, flush=True)
    for w in opts.warnings:
        print(w, flush=True)
    if opts.pcap is not None and not os.path.isdir(opts.pcap):
        raise StartupError(f"Directory '{opts.pcap}' specified with '--pcap' does not exist.")
    for number, name in opts.interfaces:
        if number == opts.drop_port:
            raise StartupError(f"interface {name} cannot be port {number}: that is the drop port")
    tls = _read_tls(opts)
    program = read_program(opts.config) if opts.config is not None else None
    check_bindable(opts.grpc_addr)
    trace = _make_trace(opts)
    pkt_trace = trace if opts.log_level in ("trace", "debug") else None
    try:
        from switch.v1model import V1Switch
    except ImportError as e:
        raise StartupError(f"switch engine unavailable (switch.v1model): {e}") from None
    server_cls = _import_server()

    seed = opts.seed if opts.seed is not None else secrets.randbits(32)
    print(f"Random seed {seed} (replay with --seed {seed})", flush=True)
    faults = None
    if opts.fault_plan is not None:
        from switch.faults import FaultPlan, FaultPlanError

        try:
            faults = FaultPlan.from_json(Path(opts.fault_plan), default_seed=seed)
        except FaultPlanError as e:
            raise StartupError(str(e)) from None
        print(faults.describe(), flush=True)
    sw = V1Switch(drop_port=opts.drop_port, cpu_port=opts.cpu_port, device_id=opts.device_id, trace=pkt_trace,
                  seed=seed, max_loop=opts.max_loop)
    if program is not None:
        load_program(sw, opts.config, program)

    ports = []
    loop = None
    server = None
    timeline = None
    try:
        for number, name in opts.interfaces:
            print(f"Adding interface {name} as port {number}", flush=True)
            ports.append(AfPacketPort(number, name))
        if opts.timeline is not None:
            timeline = PacketTimeline(sw, opts.trace_track, opts.trace_fields)
        loop = PacketLoop(sw, ports, cpu_port=opts.cpu_port, pcap_dir=opts.pcap, trace=trace, faults=faults,
                          timeline=timeline)
        server = server_cls(sw, device_id=opts.device_id, cpu_port=opts.cpu_port, strict_bmv2=opts.strict_bmv2,
                            inject=loop.inject)
        loop.packet_in = server.packet_in
        try:
            bound = server.start(opts.grpc_addr, tls=tls)
        except Exception as e:  # grpc raises RuntimeError (or returns 0) on bind failures
            raise StartupError(f"cannot start gRPC server on {opts.grpc_addr}: {_one_line(str(e))}") from None
        addr = opts.grpc_addr
        if isinstance(bound, int) and bound > 0:  # the real port when asked for port 0
            host = split_addr(addr)[0]
            addr = f"[{host}]:{bound}" if ":" in host else f"{host}:{bound}"
        if tls is not None:
            print(f"gRPC server: {tls.describe()}", flush=True)
        print(f"Server listening on {addr}", flush=True)
        if trace is not None and opts.log_level in ("trace", "debug", "info"):
            trace.info(f"Switch started (device id {opts.device_id}, ports "
                       f"{', '.join(f'{n}@{i}' for n, i in opts.interfaces) or 'none'}, P4Runtime on {addr})")
            trace.flush()
        running.append(loop)
        loop.run()
    except PortError as e:
        raise StartupError(str(e)) from None
    except OSError as e:
        raise StartupError(f"{e.strerror or e}") from None
    finally:
        if server is not None:
            try:
                server.stop()
            except Exception:
                pass
        if faults is not None:
            print(f"faults injected: {dict(sorted(faults.stats.items())) or 'none'}", flush=True)
        if loop is not None:
            loop.close()
        else:
            for p in ports:
                p.close()
        if trace is not None:
            trace.close()
        if timeline is not None and opts.timeline is not None:
            try:
                timeline.write(opts.timeline)
            except OSError as e:
                print(f"switch: cannot write --trace {opts.timeline}: {e.strerror}", file=sys.stderr, flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(opts)
    except StartupError as e:
        sys.stdout.flush()
        sys.stderr.write(f"switch: error: {e}\n")
        return 1
    except KeyboardInterrupt:
        return 0
    except Exception as e:  # never a traceback at the user; SWITCH_DEBUG=1 shows it
        if os.environ.get("SWITCH_DEBUG"):
            raise
        sys.stderr.write(f"switch: internal error: {type(e).__name__}: {_one_line(str(e))} "
                         f"(SWITCH_DEBUG=1 for a traceback)\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
