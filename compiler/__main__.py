"""Command line with p4c-bm2-ss's flags: `python -m compiler PROG.p4 -o OUT.json --p4runtime-files OUT.p4info.txt`.

Accepted for compatibility: `--std p4-16`, `--arch v1model`, `--target bmv2`, `--p4runtime-format text|json|binary`
(p4c's deprecated pair `--p4runtime-file F --p4runtime-format FMT` too). `--p4runtime-files` takes a comma-separated
list; each file's suffix chooses its format (.txtpb or .txt text, .json JSON, .bin binary), as in p4c. Errors go to stderr as
`file:line:col: error: message`, the source line and a caret; the exit code is then 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from compiler.diagnostics import CompileError, Diagnostics
from compiler.ast import SourceLoc


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m compiler",
                                description="P4_16 (v1model) to BMv2 JSON and P4Info, like p4c-bm2-ss")
    p.add_argument("source", help="P4 program")
    p.add_argument("-o", "--output", help="BMv2 JSON output file (default: <source stem>.json)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add DIR to the #include search path")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a preprocessor macro")
    p.add_argument("--p4runtime-files", default="", metavar="FILES",
                   help="comma-separated P4Info outputs; suffix .txtpb/.txt/.json/.bin picks the format")
    p.add_argument("--p4runtime-file", default=None, help=argparse.SUPPRESS)
    p.add_argument("--p4runtime-format", default=None, choices=("text", "json", "binary"),
                   help="format for the deprecated --p4runtime-file")
    p.add_argument("--std", default="p4-16", choices=("p4-16", "p4_16"), help="language (only p4-16)")
    p.add_argument("--arch", default="v1model", choices=("v1model",), help="architecture (only v1model)")
    p.add_argument("--target", default="bmv2", choices=("bmv2",), help="target (only bmv2)")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print warnings")
    return p


def _p4info_outputs(args: argparse.Namespace) -> list[str]:
    """P4Info output specs: a path whose suffix names the format, or `path\0.suffix` when the format comes from
    --p4runtime-format (p4c's deprecated --p4runtime-file, or a --p4runtime-files name without a known suffix)."""
    fmt = {"text": ".txt", "json": ".json", "binary": ".bin"}.get(args.p4runtime_format or "", "")
    paths = [f for f in args.p4runtime_files.split(",") if f]
    if args.p4runtime_file:
        paths.append(args.p4runtime_file)
        fmt = fmt or ".bin"  # p4c's default --p4runtime-format is binary
    out = []
    for path in paths:
        if path.endswith((".txtpb", ".txt", ".json", ".bin")):
            out.append(path)
        elif fmt:
            out.append(path + "\0" + fmt)
        else:
            out.append(path)  # p4info.write reports the unknown suffix
    return out


def _write_p4info(info: object, spec: str) -> None:
    from compiler import p4info

    if "\0" in spec:
        path, fmt = spec.split("\0")
        tmp = path + fmt
        p4info.write(info, tmp)  # type: ignore[arg-type]
        os.replace(tmp, path)
    else:
        p4info.write(info, spec)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    """Run the compiler; return the process exit code."""
    args = _parser().parse_args(argv)
    from compiler import compile_file

    if not os.path.isfile(args.source):
        print(f"{args.source}: error: no such file", file=sys.stderr)
        return 1
    try:
        result = compile_file(args.source, include_dirs=args.include_dirs, defines=args.defines)
        output = args.output or os.path.splitext(os.path.basename(args.source))[0] + ".json"
        with open(output, "w") as f:
            json.dump(result.json, f, indent=2)
            f.write("\n")
        specs = _p4info_outputs(args)
        if specs and result.p4runtime_errors:
            print("\n".join(result.p4runtime_errors), file=sys.stderr)
            return 1
        for spec in specs:
            _write_p4info(result.p4info, spec)
    except CompileError as e:
        print(e.diagnostics.render(), file=sys.stderr)
        return 1
    except OSError as e:
        d = Diagnostics()
        d.error(SourceLoc(getattr(e, "filename", None) or args.source, 0, 0), str(e.strerror or e), "io")
        print(d.render(), file=sys.stderr)
        return 1
    if not args.quiet and result.diagnostics.items:
        print(result.diagnostics.render(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
