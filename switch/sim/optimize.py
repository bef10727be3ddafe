"""Peephole optimisation of generated straight-line action code (a list of Python source lines).

Placeholder: returns the body unchanged.
"""

from __future__ import annotations


def optimize_body(lines: list[str]) -> list[str]:
    """The body, optimised (see module docstring)."""
    return lines
