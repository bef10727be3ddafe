"""`python -m switch.stf PROG.json TEST.stf`: run a p4c STF test on the embedded switch (exit 0 pass, 1 mismatch,
2 bad input: unreadable/unloadable JSON, STF syntax error, refused control-plane command)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .parser import StfSyntaxError, load_stf
from .runner import StfRunner, make_switch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m switch.stf",
        description="Run a p4c STF test on the embedded switch. Exit 0: pass; 1: mismatch (diff on stderr); "
        "2: bad input (JSON, STF syntax, refused command).",
    )
    ap.add_argument("program", type=Path, help="BMv2 JSON (p4c-bm2-ss output)")
    ap.add_argument("stf", type=Path, help="STF test file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print what every control-plane command did")
    ap.add_argument(
        "--ignore-cli-errors", action="store_true",
        help="like bmv2stf: a refused table/PRE/register command is a warning, not an error",
    )
    args = ap.parse_args(argv)

    try:
        script = load_stf(args.stf)
    except OSError as e:
        print(f"error: cannot read {args.stf}: {e.strerror}", file=sys.stderr)
        return 2
    except StfSyntaxError as e:
        print(e, file=sys.stderr)
        return 2
    try:
        sw = make_switch(args.program)
    except OSError as e:
        print(f"error: cannot read {args.program}: {e.strerror}", file=sys.stderr)
        return 2
    except Exception as e:  # LoadError and JSON errors: one line, no traceback
        print(f"error: cannot load {args.program}: {e}", file=sys.stderr)
        return 2

    result = StfRunner(sw, script, ignore_cli_errors=args.ignore_cli_errors).run()
    if args.verbose:
        for line in result.log:
            print(line)
    if result.passed:
        print(result.summary())
        for w in result.warnings:
            print(f"warning: {w}")
        return 0
    print(result.report(), file=sys.stderr)
    return 2 if result.errors else 1


if __name__ == "__main__":
    sys.exit(main())
