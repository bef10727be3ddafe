"""Errors of the switch engine: load-time errors and the match-table error vocabulary.

One `MatchErrorCode` enum (after BMv2's match_error_codes.h) is raised by every table / PRE / mirror operation;
it is mapped to gRPC and P4Runtime codes only at the server edge (switch/runtime) and to STF messages in switch/stf.
"""

from __future__ import annotations

import enum


class LoadError(Exception):
    """A BMv2 JSON program that cannot be loaded; the message names the construct (and where it is in the JSON)."""


class MatchErrorCode(enum.Enum):
    """Why a control-plane operation on a table, the PRE or the mirror sessions failed."""

    INVALID_TABLE_NAME = "invalid table name"
    INVALID_ACTION_NAME = "invalid action name"
    ACTION_NOT_IN_TABLE = "action not allowed in this table"
    BAD_MATCH_KEY = "bad match key"
    BAD_ACTION_DATA = "bad action data"
    MISSING_PRIORITY = "priority required for this table"
    UNEXPECTED_PRIORITY = "priority not allowed for this table"
    DUPLICATE_ENTRY = "duplicate entry"
    ENTRY_NOT_FOUND = "entry not found"
    TABLE_FULL = "table full"
    TABLE_IS_CONST = "table entries are const"
    DEFAULT_ACTION_IS_CONST = "default action is const"
    INVALID_INDEX = "index out of range"
    INVALID_VALUE = "invalid value"
    GROUP_EXISTS = "multicast group exists"
    GROUP_NOT_FOUND = "multicast group not found"
    SESSION_NOT_FOUND = "mirror session not found"
    NO_PIPELINE = "no pipeline loaded"


class MatchError(Exception):
    """A control-plane operation refused by the engine; `code` says why, the message says what."""

    def __init__(self, code: MatchErrorCode, message: str = "") -> None:
        super().__init__(f"{code.value}: {message}" if message else code.value)
        self.code = code
        self.message = message
