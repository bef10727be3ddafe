"""Measure the embedded toolchain on a corpus of v1model programs (e.g. p4c's testdata/p4_16_samples).

    python -m perf.conformance DIR [--json out.json] [--jobs 2] [--timeout 30]
    python -m perf.conformance --bmv2-suite P4C_CHECKOUT [...]

Every `*.p4` in DIR that includes v1model.p4 is compiled by `python -m compiler` (in a subprocess, bounded in time);
a program that compiles and has a `.stf` beside it is run through `python -m switch.stf`. Each program lands in one
class: `pass`, `wrong-packet` (the STF failed: the one outcome the toolchain must never have), `stf-error` (the STF
could not run, e.g. a command the runner refuses), `compiled` (no STF), `unsupported` (refused as outside the subset,
construct named), `error` (refused although p4c may accept it), `crash` (a traceback), `timeout`. Prints the counts, the
wrong packets and the most frequent refusals; `--json` writes every program's class and first message. The corpus is
not part of this repository (p4c's samples are its own); nothing here copies it.

`--bmv2-suite` measures on the programs p4c's own BMv2 back end is tested with: `testdata/p4_16_samples/*-bmv2.p4`
of a p4c checkout that include v1model.p4, less those its `backends/bmv2/CMakeLists.txt` lists in `XFAIL_TESTS`
(programs p4c-bm2-ss or BMv2 fail on), and also prints the share this toolchain accepts.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["classify", "main"]

ROOT = Path(__file__).resolve().parents[1]


def classify(program: Path, work: Path, timeout: float = 30.0) -> tuple[str, str]:
    """(class, first message) of one program; work is a scratch directory of its own."""
    out = work / "p.json"
    try:
        r = subprocess.run([sys.executable, "-m", "compiler", str(program), "-o", str(out), "--p4runtime-files",
                            str(work / "p.p4info.txtpb"), "-I", str(program.parent)],
                           capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return "timeout", f"compiler ran over {timeout:g} s"
    if r.returncode != 0:
        first = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:200])
        if "Traceback" in r.stderr:
            return "crash", r.stderr.strip().splitlines()[-1]
        return ("unsupported" if "unsupported:" in first else "error"), first
    stf = program.with_suffix(".stf")
    if not stf.exists():
        return "compiled", ""
    try:
        r = subprocess.run([sys.executable, "-m", "switch.stf", str(out), str(stf)], capture_output=True, text=True,
                           timeout=timeout * 2, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return "timeout", f"STF ran over {2 * timeout:g} s"
    text = (r.stdout + r.stderr).strip()
    if r.returncode == 0:
        return "pass", ""
    if "Traceback" in text:
        return "crash", text.splitlines()[-1]
    return ("wrong-packet" if text.startswith("FAIL") else "stf-error"), text.splitlines()[0][:300] if text else ""


def _construct(message: str) -> str:
    """The refused construct of an `unsupported: ...` message, names blanked so that messages group."""
    return re.sub(r"'[^']*'", "'…'", message.split("unsupported:", 1)[-1].strip())[:90]


def bmv2_suite(p4c: Path) -> list[Path]:
    """p4c's v1model BMv2 test programs (see the module): `*-bmv2.p4` samples including v1model.p4, less XFAIL_TESTS."""
    cmake = re.sub(r"#.*", "", (p4c / "backends" / "bmv2" / "CMakeLists.txt").read_text())  # comments hold ')'
    m = re.search(r"set\s*\(\s*XFAIL_TESTS(.*?)\)", cmake, re.S)
    xfail = {Path(w).name for w in re.findall(r"\S+\.p4", m.group(1))} if m else set()
    samples = p4c / "testdata" / "p4_16_samples"
    return sorted(x for x in samples.glob("*-bmv2.p4")
                  if x.name not in xfail and "v1model.p4" in x.read_text(errors="replace"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.conformance", description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", type=Path, nargs="?", help="directory of P4 programs (with .stf files beside some)")
    p.add_argument("--bmv2-suite", type=Path, metavar="P4C", help="p4c's BMv2 test programs of this p4c checkout")
    p.add_argument("--json", type=Path, help="write every program's class and message here")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per compilation (the STF gets twice that)")
    args = p.parse_args(argv)
    if (args.corpus is None) == (args.bmv2_suite is None):
        p.error("give a corpus directory or --bmv2-suite P4C")
    if args.bmv2_suite is not None:
        programs = bmv2_suite(args.bmv2_suite)
        args.corpus = args.bmv2_suite / "testdata" / "p4_16_samples"
    else:
        programs = sorted(x for x in args.corpus.glob("*.p4")
                          if x.is_file() and "v1model.p4" in x.read_text(errors="replace"))
    with tempfile.TemporaryDirectory() as tmp:
        def one(prog: Path) -> tuple[str, str, str]:
            work = Path(tmp) / prog.stem
            work.mkdir()
            return (prog.name, *classify(prog, work, args.timeout))
        with ThreadPoolExecutor(max(1, args.jobs)) as ex:
            results = list(ex.map(one, programs))
    counts = Counter(c for _, c, _ in results)
    with_stf = [r for r in results if (args.corpus / r[0]).with_suffix(".stf").exists()]
    print(f"{len(results)} v1model programs: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    print(f"with an STF test: {len(with_stf)}, passing {sum(c == 'pass' for _, c, _ in with_stf)}")
    accepted = counts.get("pass", 0) + counts.get("compiled", 0)
    print(f"accepted (compiled; with an STF, passing it): {accepted} of {len(results)}"
          f" ({100 * accepted / max(1, len(results)):.0f} %)")
    for name, c, msg in results:
        if c in ("wrong-packet", "crash"):
            print(f"{c.upper()}: {name}: {msg}")
    refusals = Counter(_construct(m) for _, c, m in results if c == "unsupported")
    print("most frequent refusals:")
    for what, n in refusals.most_common(15):
        print(f"  {n:4d}  {what}")
    if args.json:
        args.json.write_text(json.dumps([{"program": n, "class": c, "message": m} for n, c, m in results], indent=1))
    return 1 if counts.get("wrong-packet") or counts.get("crash") else 0


if __name__ == "__main__":
    sys.exit(main())
