"""The controller CLI: one-shot commands and an interactive shell over the running program's controller.

    python -m controller [--grpc-addr A] [--device-id N] [--protocol switchml|atp] [--target embedded|bmv2]
                         [--thrift-port P] [--ssl-ca FILE [--ssl-cert FILE --ssl-key FILE]] COMMAND ...

Commands: push, setup, job-create, job-reset, loss, counters, watch, shell, one vocabulary for every program, and
each program's own (its controller's `CLI`: slots for SwitchML, aggregators and ecn for ATP). The program is read from the pipeline (the switch's, or the P4Info that
push/setup send); `--protocol` only asserts it. Every argument and file is checked before the first write. Commands
that only read
(counters, slots, aggregators, watch) attach without arbitration, so they never take over from the controller that set the job
up. The shell offers the same commands (`help` lists them); p4runtime-shell remains available beside it
(`make p4runtime-shell`) for generic table work. A switch started with simple_switch_grpc's --grpc-server-ssl takes
the CA that signed its certificate (--ssl-ca) and, with client auth, this client's certificate and key
(controller.tls; p4runtime-shell's --ssl --cacert --cert --private-key are accepted too).
"""

from __future__ import annotations

import argparse
import cmd
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
from controller.schema import P4Schema

from controller.base import CliCommand, ProgramController
from controller.client import ControllerError, P4RuntimeClient
from controller.programs import CONTROLLERS
from controller.registers import DetectedRegisters, Registers, open_registers
from controller.tls import add_arguments as add_tls_arguments
from controller.tls import from_args as tls_from_args
from worker.arguments import (Parser, at_least, existing_file, grpc_address, in_range, port, positive_float,
                              probability)
from worker.job import JobConfig, JobConfigError


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m controller", description=__doc__.split("\n\n")[0])
    p.add_argument("--protocol", choices=sorted(CONTROLLERS), default=None,
                   help="the INA program the switch runs (default: read from the pipeline)")
    p.add_argument("--grpc-addr", type=grpc_address, default="127.0.0.1:9559",
                   help="switch P4Runtime address (default %(default)s)")
    p.add_argument("--device-id", type=in_range(0, 2**64 - 1), default=0,
                   help="P4Runtime device id, as the switch was started with (default %(default)s, the default of "
                        "python -m switch and simple_switch_grpc)")
    p.add_argument("--election-id", type=at_least(1), default=10, help="election id when writing (default %(default)s)")
    p.add_argument("--target", choices=["embedded", "bmv2"], default=None,
                   help="switch target, for register access (default: ask the switch: P4Runtime registers on the "
                        "embedded switch, BMv2's Thrift runtime where it answers UNIMPLEMENTED)")
    p.add_argument("--thrift-port", type=port, default=9090, help="BMv2 Thrift port for registers (bmv2 target)")
    p.add_argument("--timeout", type=positive_float, default=5.0, help="seconds per RPC (default %(default)s)")
    add_tls_arguments(p)
    sub = p.add_subparsers(dest="command", required=True)

    job_file = "a job file (docs/controller.md, Job files; e.g. docs/examples/job.json)"
    c = sub.add_parser("push", help="push a compiled program (P4Info + BMv2 JSON)")
    c.add_argument("--p4info", type=existing_file, required=True)
    c.add_argument("--json", type=existing_file, required=True)
    c = sub.add_parser("setup", help="push the program, install forwarding and the job of a job file")
    c.add_argument("job", type=existing_file, help=job_file)
    c.add_argument("--p4info", type=existing_file, required=True)
    c.add_argument("--json", type=existing_file, required=True)
    c = sub.add_parser("job-create", help="install a job (tables, multicast group); SwitchML also resets its slots",
                       conflict_handler="resolve")
    c.add_argument("job", type=existing_file, help=job_file)
    for cls in CONTROLLERS.values():  # each program's own options of installing a job
        cls.add_job_arguments(c)
    sub.add_parser("job-reset", help="clear a job's slot bitmaps and countdowns / free its aggregators").add_argument(
        "job", type=existing_file, help=job_file)
    c = sub.add_parser("loss", help="set the simulated drop probability of a switch port")
    c.add_argument("port", type=in_range(0, 511, "a switch port"))
    c.add_argument("--ingress", type=probability())
    c.add_argument("--egress", type=probability())
    c = sub.add_parser("counters", help="show a job's INA counters")
    c.add_argument("job_id", type=in_range(0, 255, "a job id"))
    for command in program_commands().values():
        command.arguments(sub.add_parser(command.name, help=command.help))
    c = sub.add_parser("watch", help="refresh a job's counters and slot bitmaps until interrupted")
    c.add_argument("job", type=existing_file, help=job_file)
    c.add_argument("--interval", type=positive_float, default=1.0)
    c.add_argument("--slots", type=at_least(1), default=8, help="how many slots to show (default %(default)s)")
    c.add_argument("--iterations", type=at_least(0), default=0, help="stop after N refreshes (0: until Ctrl-C)")
    sub.add_parser("shell", help="interactive shell with these commands")
    return p


def program_commands() -> dict[str, CliCommand]:
    """Every program's own commands by name (the first program to name one owns it)."""
    out: dict[str, CliCommand] = {}
    for cls in CONTROLLERS.values():
        for command in cls.CLI:
            out.setdefault(command.name, command)
    return out


def program_of(tables: set[str]) -> str:
    """The INA program whose tables a pipeline has (ValueError when it is none of them)."""
    for program, cls in CONTROLLERS.items():
        if cls.runs_on(tables):
            return program
    raise ValueError(f"the pipeline is none of the INA programs ({', '.join(sorted(CONTROLLERS))}): it has no "
                     + " or ".join(cls.JOB_TABLE[0] for cls in CONTROLLERS.values()))


class Session:
    """A connection to one switch and the controller of its program over it (the program read from the pipeline:
    the P4Info a push/setup sends, else the switch's)."""

    def __init__(self, args: argparse.Namespace, *, write: bool) -> None:
        pushing = args.command in ("push", "setup")
        schema = _read_p4info(Path(args.p4info)) if pushing else None
        self.client = P4RuntimeClient(args.grpc_addr, device_id=args.device_id, election_id=args.election_id,
                                      timeout=args.timeout, tls=tls_from_args(args))
        try:
            self.client.connect(arbitrate=write)
            if not pushing:
                schema = self.client.fetch_pipeline()
        except ControllerError as err:
            self.client.close()
            raise _explained(err, args) from None
        assert schema is not None
        program = program_of({t.name for t in schema.tables})
        if args.protocol is not None and args.protocol != program:
            self.client.close()
            where = "the P4Info given" if pushing else f"the switch at {args.grpc_addr}"
            raise ValueError(f"{where} runs {program}.p4, not {args.protocol}.p4: drop --protocol (the controller "
                             f"reads the program from the pipeline) or pass --protocol {program}")
        self.program = program
        registers: Registers = (DetectedRegisters(self.client, args.thrift_port) if args.target is None else
                                open_registers(self.client, bmv2=args.target == "bmv2", thrift_port=args.thrift_port))
        self.ctl: Any = CONTROLLERS[program](self.client, registers)

    def close(self) -> None:
        self.client.close()


def _read_p4info(path: Path) -> P4Schema:
    try:
        return P4Schema(path)
    except Exception as err:  # protobuf's text-format ParseError and finsy's checks
        raise ValueError(f"{path}: not a P4Info text file: {str(err).splitlines()[0] if str(err) else err!r}") from None


def _explained(err: ControllerError, args: argparse.Namespace) -> ControllerError:
    """A connection error with what the user can do about it (the device id is the usual mismatch)."""
    if err.code is grpc.StatusCode.NOT_FOUND and "device" in str(err).lower():
        return ControllerError(f"{err} — the switch at {args.grpc_addr} was started with another device id: pass "
                               "--device-id N as given to the switch (python -m switch and simple_switch_grpc "
                               "default to 0)", err.code)
    return err


def format_counters(counters: dict[str, tuple[int, int]]) -> str:
    """A two-column table of counter packets/bytes."""
    width = max(len(n) for n in counters)
    return "\n".join(f"{name:<{width}}  {p:>10} pkts  {b:>12} B" for name, (p, b) in counters.items())


def _own(ctl: ProgramController, command: str) -> CliCommand:
    """The running program's command `command` (ValueError naming the program that has it and the switch's own)."""
    mine = {c.name: c for c in ctl.CLI}
    if command in mine:
        return mine[command]
    owners = [p for p, cls in CONTROLLERS.items() if any(c.name == command for c in cls.CLI)]
    reads = ", ".join(["counters", *(c.name for c in ctl.CLI if not c.writes), "watch"])
    programs = (f"{', '.join(owners[:-1])} and {owners[-1]} programs" if len(owners) > 1 else f"{owners[0]} program")
    raise ValueError(f"{command} is a command of the {programs}, and the switch runs "
                     f"{ctl.PROGRAM}.p4 ({reads} show its state)")


def run_command(args: argparse.Namespace) -> int:
    """Execute one parsed command; returns the exit code."""
    own = program_commands().get(args.command)
    write = args.command in ("push", "setup", "job-create", "job-reset", "loss") or (own is not None and own.writes)
    # every input is read before the first write: a bad job file leaves the running switch untouched
    job = JobConfig.load(args.job) if getattr(args, "job", None) is not None else None
    session = Session(args, write=write)
    try:
        ctl = session.ctl
        if args.command in ("push", "setup"):
            session.client.set_pipeline(str(args.p4info), str(args.json))
            print(f"pipeline {session.program} pushed to {args.grpc_addr}")
        if args.command == "setup":
            assert job is not None
            hosts = [(w.mac, w.switch_port) for w in job.workers] + ([(job.ps.mac, job.ps.switch_port)] if job.ps else [])
            ctl.install_forwarding(hosts, [p for _, p in hosts])
            mgid = ctl.create_job(job)
            print(f"job {job.job_id}: {job.num_workers} workers, {ctl.STATE} "
                  f"[{job.pool.base}, {job.pool.base + job.pool.size}), multicast group {mgid}")
        elif args.command == "job-create":
            assert job is not None
            if job.job_id in ctl.installed_jobs():
                raise ValueError(f"job {job.job_id} is already installed on {args.grpc_addr} (job-reset clears its "
                                 "state; setup pushes the pipeline again and installs it afresh)")
            mgid = ctl.create_job(job, **type(ctl).job_options(args))
            print(f"job {job.job_id} installed, multicast group {mgid}")
        elif args.command == "job-reset":
            assert job is not None
            _installed(ctl, job.job_id, args.grpc_addr)
            ctl.reset_job(job)
            print(f"job {job.job_id}: {ctl.STATE} [{job.pool.base}, {job.pool.base + job.pool.size}) reset")
        elif args.command == "loss":
            ctl.set_drop_probability(args.port, ingress=args.ingress, egress=args.egress)
            print(f"port {args.port}: ingress drop {args.ingress}, egress drop {args.egress}")
        elif args.command == "counters":
            _installed(ctl, args.job_id, args.grpc_addr)
            print(format_counters(ctl.counters(args.job_id)))
        elif own is not None:
            print(_own(ctl, args.command).run(ctl, args))
        elif args.command == "watch":
            assert job is not None
            _installed(ctl, job.job_id, args.grpc_addr)
            n = 0
            while True:
                print(f"\x1b[2J\x1b[H{time.strftime('%H:%M:%S')}  job {job.job_id} on {args.grpc_addr}\n")
                print(format_counters(ctl.counters(job.job_id)))
                print()
                print(ctl.format_state(job.pool.base, min(args.slots, job.pool.size)), flush=True)
                n += 1
                if args.iterations and n >= args.iterations:
                    break
                time.sleep(args.interval)
        return 0
    finally:
        session.close()


def _installed(ctl: ProgramController, job_id: int, addr: str) -> None:
    """ValueError unless the job is installed on the switch (its counters would be zeros that mean nothing)."""
    jobs = ctl.installed_jobs()
    if job_id not in jobs:
        raise ValueError(f"job {job_id} is not installed on {addr} (installed: "
                         f"{', '.join(map(str, jobs)) or 'none'}; `setup JOB_FILE` or `job-create JOB_FILE` "
                         "installs one)")


class Shell(cmd.Cmd):
    """Interactive controller: each line is one of the CLI's commands."""

    intro = "INA testbed controller shell. Type help or ? to list commands, quit to leave."
    prompt = "ina> "

    def __init__(self, base_argv: Sequence[str]) -> None:
        super().__init__()
        self.base_argv = list(base_argv)

    def default(self, line: str) -> None:
        if line.strip() in ("quit", "exit", "EOF"):
            raise SystemExit(0)
        try:
            args = _parser().parse_args(self.base_argv + shlex.split(line))
            if args.command == "shell":
                return
            run_command(args)
        except SystemExit:
            pass  # argparse already printed the usage error
        except (ControllerError, JobConfigError, OSError, ValueError) as err:
            print(f"error: {err}")
        except KeyboardInterrupt:
            print()

    def do_help(self, arg: str) -> None:
        """List commands, or show one command's usage."""
        try:
            _parser().parse_args(self.base_argv + ([arg, "--help"] if arg else ["--help"]))
        except SystemExit:
            pass

    def do_EOF(self, arg: str) -> bool:  # noqa: N802 (cmd.Cmd's name)
        """Leave the shell."""
        print()
        return True


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    try:
        if args.command == "shell":
            base = argv[: argv.index("shell")]
            Shell(base).cmdloop()
            return 0
        return run_command(args)
    except (ControllerError, JobConfigError, OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
