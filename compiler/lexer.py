"""The P4_16 lexer: preprocessed text → a list of `Token`s with original positions.

The input is the preprocessor's output; `#line N "file"` (and `# N "file"`) markers re-map positions to the original
files. Words are all `ID` tokens (keywords are recognised by the parser from the text, since P4 lets several of
them — `key`, `actions`, `entries`, `apply`, ... — appear as names); `_` alone is `DONTCARE`. `>` is always a single
token so that `bit<bit<8>>`-style type arguments close cleanly; the parser joins two adjacent `>` into a shift.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.ast import SourceLoc
from compiler.diagnostics import CompileError, Diagnostics

# Words the parser never accepts as a declared name.
RESERVED = frozenset(
    """abstract action apply bit bool const control default else enum error exit extern false header header_union
    if in inout int list match_kind out package parser return select state string struct switch table this
    transition true tuple type typedef varbit value_set void""".split()
)


@dataclass(slots=True)
class Token:
    """One token: `kind` is ID, INT, STRING, DONTCARE, EOF or the operator text itself (`;`, `&&&`, `>`, ...)."""

    kind: str
    text: str
    loc: SourceLoc
    pos: int  # offset in the preprocessed text (adjacency checks, e.g. `>` `>`)
    value: object = None  # INT: (value, width|None, signed); STRING: decoded text

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r}, {self.loc})"


_OPERATORS = [
    "&&&", "|+|", "|-|", "..", "<<", "<=", ">=", "==", "!=", "&&", "||", "++",
    "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "?", ":", ";", ",", ".", "(", ")", "{", "}", "[", "]",
    "<", ">", "=", "@",
]

_INT_BODY = r"(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[dD][0-9_]+|[0-9][0-9_]*)"
_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<line>\#[ \t]*(?:line[ \t]+)?(?P<lnum>[0-9]+)(?:[ \t]+"(?P<lfile>(?:[^"\\\n]|\\.)*)")?[^\n]*)
  | (?P<hash>\#[^\n]*)
  | (?P<comment>//[^\n]*|/\*(?:.|\n)*?\*/)
  | (?P<int>(?P<width>[0-9]+)(?P<ws_sign>[ws])(?P<wbody>""" + _INT_BODY + r""")|""" + _INT_BODY + r""")
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<op>""" + "|".join(re.escape(o) for o in _OPERATORS) + r""")
    """,
    re.VERBOSE,
)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "0": "\0"}


def parse_int_body(text: str) -> int:
    """The value of an unsized P4 integer literal body (`0x1F`, `0b1_0`, `0o7`, `0d9`, `42`)."""
    t = text.replace("_", "")
    if len(t) > 1 and t[0] == "0" and t[1] in "xXbBoOdD":
        base = {"x": 16, "b": 2, "o": 8, "d": 10}[t[1].lower()]
        return int(t[2:], base)
    return int(t, 10)


def _decode_string(raw: str) -> str:
    body = raw[1:-1]
    if "\\" not in body:
        return body
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


def tokenize(text: str, file: str = "<string>", diags: Diagnostics | None = None) -> list[Token]:
    """Split preprocessed `text` into tokens; raise `CompileError` on a character that starts no token."""
    tokens: list[Token] = []
    append = tokens.append
    line = 1
    line_start = 0  # offset of the current line's first character
    pos = 0
    n = len(text)
    match = _TOKEN_RE.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            d = diags if diags is not None else Diagnostics()
            bad = text[pos]
            loc = SourceLoc(file, line, pos - line_start + 1)
            if bad == '"':
                d.error(loc, "unterminated string literal", "syntax")
            elif text.startswith("/*", pos):
                d.error(loc, "unterminated comment", "syntax")
            else:
                d.error(loc, f"unexpected character {bad!r}", "syntax")
            raise CompileError(d)
        kind = m.lastgroup
        end = m.end()
        if kind == "ws":
            pass
        elif kind == "nl":
            line += 1
            line_start = end
        elif kind == "id":
            word = m.group()
            append(Token("DONTCARE" if word == "_" else "ID", word, SourceLoc(file, line, pos - line_start + 1), pos))
        elif kind == "op":
            append(Token(m.group(), m.group(), SourceLoc(file, line, pos - line_start + 1), pos))
        elif kind == "int":
            loc = SourceLoc(file, line, pos - line_start + 1)
            if m.group("width") is not None:
                width = int(m.group("width"))
                signed = m.group("ws_sign") == "s"
                value = parse_int_body(m.group("wbody"))
            else:
                width, signed, value = None, False, parse_int_body(m.group())
            append(Token("INT", m.group(), loc, pos, (value, width, signed)))
        elif kind == "string":
            append(Token("STRING", m.group(), SourceLoc(file, line, pos - line_start + 1), pos,
                         _decode_string(m.group())))
        elif kind == "line" and text[line_start:pos].strip():
            # `#0` in the middle of a line (a macro's pasted `#`) is no line marker: an error where it stands
            d = diags if diags is not None else Diagnostics()
            d.error(SourceLoc(file, line, pos - line_start + 1), "unexpected '#'", "syntax")
            raise CompileError(d)
        elif kind == "line":
            # `#line N "file"`: the *next* line is line N of `file`.
            lfile = m.group("lfile")
            if lfile is not None:
                file = lfile.replace('\\"', '"').replace("\\\\", "\\")
            line = int(m.group("lnum")) - 1
            # The newline ending the directive will bump `line` to N.
        elif kind == "hash":
            d = diags if diags is not None else Diagnostics()
            loc = SourceLoc(file, line, pos - line_start + 1)
            if m.group().startswith("#}"):
                d.error(loc, "unsupported: the invalid-header expression '{#}'", "unsupported")
            else:
                d.error(loc, f"unexpected preprocessor directive {m.group().split()[0]!r}", "syntax")
            raise CompileError(d)
        elif kind == "comment":
            nls = m.group().count("\n")
            if nls:
                line += nls
                line_start = pos + m.group().rfind("\n") + 1
        pos = end
    # End of input is reported just after the last token (the text usually ends with a newline).
    if tokens:
        last = tokens[-1]
        eof_loc = SourceLoc(last.loc.file, last.loc.line, last.loc.col + len(last.text))
    else:
        eof_loc = SourceLoc(file, line, pos - line_start + 1)
    append(Token("EOF", "", eof_loc, pos))
    return tokens
