"""The C preprocessor step (pcpp): `#include`, `#define`, `#if`/`#ifdef`/`#elif`/`#else`/`#endif`, `-D`.

`preprocess()` returns the expanded text with `#line N "file"` markers, which the lexer follows so that every
position refers to the original file and line. Comments are blanked out *before* pcpp sees the text (keeping
newlines and columns), so columns stay exact except after a macro expansion on the same line.

Include search order: for `#include "x"` the including file's directory first; then each `-I` directory; then
this package's own `compiler/include/` (where `core.p4` and `v1model.p4` live).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from pcpp import Preprocessor
from pcpp.parser import Action, OutputDirective

from compiler.ast import SourceLoc
from compiler.diagnostics import CompileError, Diagnostics

INCLUDE_DIR = str(Path(__file__).resolve().parent / "include")
MAX_INCLUDE_DEPTH = 40  # cpp allows 200; each level costs pcpp several Python frames

_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?(?:\*/|\Z)', re.DOTALL)


class UnterminatedComment(ValueError):
    """A `/*` without its `*/`; `offset` is where the comment starts."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"unterminated comment at offset {offset}")
        self.offset = offset


def blank_comments(text: str) -> str:
    """Replace every comment by spaces (keeping its newlines) so positions after it do not move.

    Raises `UnterminatedComment` for a `/*` that is never closed.
    """

    def repl(m: re.Match[str]) -> str:
        s = m.group()
        if s[0] == '"':
            return s
        if s.startswith("/*") and (len(s) < 4 or not s.endswith("*/")):
            raise UnterminatedComment(m.start())
        return re.sub(r"[^\n]", " ", s)

    if "/" not in text:
        return text
    return _COMMENT_OR_STRING.sub(repl, text)


def _offset_loc(file: str, text: str, offset: int) -> SourceLoc:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return SourceLoc(file, line, col)


def parse_defines(defines: Mapping[str, str] | Iterable[str]) -> dict[str, str]:
    """Normalise `-D` style definitions (`NAME`, `NAME=VALUE`, or a mapping) to {name: value} (`NAME` → "1")."""
    if isinstance(defines, Mapping):
        return {str(k): str(v) for k, v in defines.items()}
    out: dict[str, str] = {}
    for d in defines:
        name, sep, value = d.partition("=")
        out[name.strip()] = value if sep else "1"
    return out


class _IncludeNotFound(Exception):
    def __init__(self, loc: SourceLoc, name: str) -> None:
        super().__init__(name)
        self.loc = loc
        self.name = name


class _P4Preprocessor(Preprocessor):
    """pcpp with P4-friendly hooks: errors become diagnostics, files are read with comments blanked."""

    def __init__(self, diags: Diagnostics) -> None:
        super().__init__()
        self.diags = diags
        self.line_directive = None
        self.rewrite_paths = []  # keep file names as resolved (absolute), not relative to the cwd
        self.originals: dict[str, str] = {}
        self.rename: dict[str, str] = {}  # pcpp's absolute name of the main file → the name we were given

    def _loc(self, source: str | None, line: int, needle: str | None = None) -> SourceLoc:
        file = self.rename.get(source or "", source or "<unknown>")
        col = 1
        text = self.originals.get(file)
        if text is not None:
            lines = text.splitlines()
            if 1 <= line <= len(lines):
                src = lines[line - 1]
                idx = src.find(needle) if needle else -1
                col = idx + 1 if idx >= 0 else len(src) - len(src.lstrip()) + 1
        return SourceLoc(file, line, col)

    def on_file_open(self, is_system_include: bool, includepath: str) -> io.StringIO:
        with open(includepath, encoding="utf-8-sig") as f:  # raises OSError → pcpp tries the next directory
            try:
                text = f.read()
            except UnicodeDecodeError as e:
                self.diags.error(SourceLoc(includepath, 0, 0), f"{includepath} is not UTF-8 text ({e.reason})",
                                 "io")
                text = ""
        self.originals[includepath] = text
        try:
            return io.StringIO(blank_comments(text))
        except UnterminatedComment as e:
            self.diags.error(_offset_loc(includepath, text, e.offset), "unterminated comment", "syntax")
            return io.StringIO(blank_comments(text[: e.offset]))

    def on_include_not_found(self, is_malformed: bool, is_system_include: bool, curdir: str,
                             includepath: str) -> str:
        d = self.lastdirective
        if is_malformed:
            self.diags.error(self._loc(d.source, d.lineno, "#"), f"malformed #include: {includepath}", "preprocessor")
            raise OutputDirective(Action.IgnoreAndRemove)
        loc = self._loc(d.source, d.lineno, f'"{includepath}"')
        if loc.col == self._loc(d.source, d.lineno).col:  # not a "..." include: point at the <
            loc = self._loc(d.source, d.lineno, f"<{includepath}")
        raise _IncludeNotFound(loc, includepath)

    def define(self, tokens):  # type: ignore[no-untyped-def]
        if not isinstance(tokens, str) and all(t.type in self.t_WS for t in tokens):
            d = self.lastdirective
            self.diags.error(self._loc(d.source, d.lineno, "#"), "#define needs a macro name", "preprocessor")
            return None
        return super().define(tokens)

    def include(self, tokens, original_line):  # type: ignore[no-untyped-def]
        if self.include_depth > MAX_INCLUDE_DEPTH:
            d = self.lastdirective
            self.diags.error(self._loc(d.source, d.lineno, "#"),
                             f"#include nested more than {MAX_INCLUDE_DEPTH} deep (an include cycle?)", "preprocessor")
            return iter(())
        if all(t.type in self.t_WS for t in tokens):
            d = self.lastdirective
            self.diags.error(self._loc(d.source, d.lineno, "#"), "#include expects \"FILE\" or <FILE>",
                             "preprocessor")
            return iter(())
        return super().include(tokens, original_line)

    def undef(self, tokens):  # type: ignore[no-untyped-def]
        if all(t.type in self.t_WS for t in tokens):
            d = self.lastdirective
            self.diags.error(self._loc(d.source, d.lineno, "#"), "#undef needs a macro name", "preprocessor")
            return None
        return super().undef(tokens)

    def on_error(self, file: str, line: int, msg: str) -> None:
        msg = " ".join(msg.split())
        if msg.startswith("Misplaced #"):  # pcpp's wording → cpp's
            msg = f"{msg[len('Misplaced '):]} without #if"
        elif msg[:1].isupper() and msg[1:2].islower():
            msg = msg[0].lower() + msg[1:]
        self.diags.error(self._loc(file, line), msg, "preprocessor")
        self.return_code += 1

    def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):  # type: ignore[no-untyped-def]
        text = "".join(t.value for t in toks).strip()
        loc = self._loc(directive.source, directive.lineno, "#")
        if directive.value == "error":
            self.diags.error(loc, f"#error {text}".rstrip(), "preprocessor")
            return True
        if directive.value == "warning":
            self.diags.warning(loc, f"#warning {text}".rstrip(), "preprocessor")
            return True
        if directive.value == "pragma":
            return True
        if directive.value == "line":
            self.diags.error(loc, "unsupported: #line directives", "unsupported")
            return True
        self.diags.error(loc, f"unknown preprocessor directive '#{directive.value}'", "preprocessor")
        return True


def preprocess(path: str, include_dirs: Iterable[str] = (), defines: Mapping[str, str] | Iterable[str] = (),
               diags: Diagnostics | None = None, text: str | None = None) -> str:
    """Preprocess the file at `path` (or `text` standing for it) and return the expanded text with `#line` markers.

    Raises `CompileError` for a missing include, `#error`, or a malformed directive. The original texts of all
    files read are stored in `diags.sources` so diagnostics can quote them.
    """
    diags = diags if diags is not None else Diagnostics()
    if text is None:
        try:
            with open(path, encoding="utf-8-sig") as f:
                text = f.read()
        except OSError as e:
            diags.error(SourceLoc(path, 0, 0), f"cannot read {path}: {e.strerror or e}", "io")
            raise CompileError(diags) from None
        except UnicodeDecodeError as e:
            diags.error(SourceLoc(path, 0, 0), f"{path} is not UTF-8 text ({e.reason})", "io")
            raise CompileError(diags) from None
    pp = _P4Preprocessor(diags)
    for d in include_dirs:
        pp.add_path(str(d))
    pp.add_path(INCLUDE_DIR)
    pp.rewrite_paths = []  # add_path() registers relative display names; we report absolute include paths
    for name, value in parse_defines(defines).items():
        pp.define(f"{name} {value}")
    pp.originals[path] = text
    # pcpp names the main file by its absolute path; map it back to the name we were given.
    pp.rename[os.path.abspath(path)] = path
    try:
        blanked = blank_comments(text)
    except UnterminatedComment as e:
        diags.sources.setdefault(path, text)
        diags.error(_offset_loc(path, text, e.offset), "unterminated comment", "syntax")
        raise CompileError(diags) from None
    pp.parse(blanked, path)
    try:
        out = _render(pp, pp.rename)
    except _IncludeNotFound as e:
        diags.error(e.loc, f"cannot find include file '{e.name}'", "preprocessor")
        raise CompileError(diags) from None
    except RecursionError:
        d = pp.lastdirective
        loc = pp._loc(d.source, d.lineno, "#") if d is not None else SourceLoc(path, 0, 0)
        diags.error(loc, "unsupported: preprocessing nested too deep", "preprocessor")
        raise CompileError(diags) from None
    except (IndexError, KeyError, TypeError, ValueError, AttributeError) as e:
        # pcpp has no error path for some malformed directives; blame the last directive it saw.
        d = pp.lastdirective
        loc = pp._loc(d.source, d.lineno, "#") if d is not None else SourceLoc(path, 0, 0)
        diags.error(loc, f"malformed preprocessor directive ({type(e).__name__})", "preprocessor")
        raise CompileError(diags) from None
    finally:
        for name, original in pp.originals.items():
            diags.sources.setdefault(name, original)
    if diags.has_errors:
        raise CompileError(diags)
    return out


def _render(pp: Preprocessor, rename: dict[str, str]) -> str:
    """Write pcpp's token stream line by line, with a `#line` marker wherever the source position jumps."""
    out: list[str] = []
    cur_file: str | None = None
    next_line = 0  # the original line number the next output line would have
    line_toks: list = []
    ws_types = pp.t_WS

    def flush() -> None:
        nonlocal cur_file, next_line
        toks = line_toks
        if not toks or all(t.type in ws_types for t in toks):
            return
        first = toks[0]
        src = rename.get(first.source, first.source) if first.source else cur_file
        lineno = first.lineno
        if src != cur_file or lineno < next_line or lineno > next_line + 8:
            out.append(f'#line {lineno} "{src}"\n')
        else:
            out.append("\n" * (lineno - next_line))
        cur_file = src
        body = "".join(t.value for t in toks)
        out.append(body.rstrip("\n") + "\n")
        next_line = lineno + 1

    while True:
        tok = pp.token()
        if tok is None:
            break
        if tok.value and tok.value[0] == "\n":
            flush()
            line_toks = []
            continue
        line_toks.append(tok)
    flush()
    return "".join(out)
