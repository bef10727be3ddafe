"""The lexer: token kinds, literal values, `#line` position mapping."""

from __future__ import annotations

import pytest

from compiler.diagnostics import CompileError
from compiler.lexer import parse_int_body, tokenize


def kinds(text: str) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in tokenize(text)[:-1]]


def test_operators_longest_match_and_single_closing_angle() -> None:
    assert kinds("a &&& b && c & d") == [("ID", "a"), ("&&&", "&&&"), ("ID", "b"), ("&&", "&&"), ("ID", "c"),
                                         ("&", "&"), ("ID", "d")]
    assert [k for k, _ in kinds("|+| |-| ++ .. << <= >= == != >>")] == [
        "|+|", "|-|", "++", "..", "<<", "<=", ">=", "==", "!=", ">", ">"]
    assert [k for k, _ in kinds("1..3")] == ["INT", "..", "INT"]


def test_words_and_dont_care() -> None:
    assert kinds("_ _x apply") == [("DONTCARE", "_"), ("ID", "_x"), ("ID", "apply")]


@pytest.mark.parametrize("body, value", [("0x_ff", 255), ("0B101", 5), ("0o17", 15), ("0D10", 10), ("1_000", 1000)])
def test_integer_bodies(body: str, value: int) -> None:
    assert parse_int_body(body) == value


def test_width_prefixed_literals_and_strings() -> None:
    a, b, c = tokenize('8w0xFF 4s7 "x\\ty"')[:3]
    assert a.value == (255, 8, False) and b.value == (7, 4, True)
    assert c.kind == "STRING" and c.value == "x\ty"


def test_line_markers_map_positions() -> None:
    toks = tokenize('a\n#line 10 "other.p4"\n  b\n# 3 "third.p4" 2\nc\n', "main.p4")
    assert [(t.text, str(t.loc)) for t in toks[:-1]] == [
        ("a", "main.p4:1:1"), ("b", "other.p4:10:3"), ("c", "third.p4:3:1")]


def test_block_comment_lines_are_counted() -> None:
    toks = tokenize("/* one\ntwo */ x\ny")
    assert [str(t.loc) for t in toks[:-1]] == ["<string>:2:8", "<string>:3:1"]


def test_unexpected_character() -> None:
    with pytest.raises(CompileError) as info:
        tokenize("a\n  ` b", "f.p4")
    assert info.value.diagnostics[0].header() == "f.p4:2:3: error: unexpected character '`'"
