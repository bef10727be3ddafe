"""P4Runtime error statuses: the exception the runtime raises and its mapping to gRPC / google.rpc.Status.

Per the P4Runtime spec (§"Error reporting") and PI's P4ErrorReporter: a batch Write with any failed update returns
gRPC status UNKNOWN whose `google.rpc.Status.details` hold one `p4.v1.Error` per update, in update order (OK entries
for the updates that succeeded), each with space "ALL-sswitch-p4org".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import grpc
from finsy.proto import p4r, rpc_code, rpc_status

from switch.errors import MatchError, MatchErrorCode

ERROR_SPACE = "ALL-sswitch-p4org"

Code = rpc_code.Code  # google.rpc.Code enum wrapper: Code.OK, Code.INVALID_ARGUMENT, ...


class P4RuntimeError(Exception):
    """A refused P4Runtime operation: a google.rpc code (int) and a message."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"P4RuntimeError({Code.Name(self.code)}, {self.message!r})"


def invalid(message: str) -> P4RuntimeError:
    """INVALID_ARGUMENT, the most common refusal."""
    return P4RuntimeError(Code.INVALID_ARGUMENT, message)


_MATCH_ERROR_CODES: dict[MatchErrorCode, int] = {
    MatchErrorCode.INVALID_TABLE_NAME: Code.INVALID_ARGUMENT,
    MatchErrorCode.INVALID_ACTION_NAME: Code.INVALID_ARGUMENT,
    MatchErrorCode.ACTION_NOT_IN_TABLE: Code.INVALID_ARGUMENT,
    MatchErrorCode.BAD_MATCH_KEY: Code.INVALID_ARGUMENT,
    MatchErrorCode.BAD_ACTION_DATA: Code.INVALID_ARGUMENT,
    MatchErrorCode.MISSING_PRIORITY: Code.INVALID_ARGUMENT,
    MatchErrorCode.UNEXPECTED_PRIORITY: Code.INVALID_ARGUMENT,
    MatchErrorCode.DUPLICATE_ENTRY: Code.ALREADY_EXISTS,
    MatchErrorCode.ENTRY_NOT_FOUND: Code.NOT_FOUND,
    MatchErrorCode.TABLE_FULL: Code.RESOURCE_EXHAUSTED,
    MatchErrorCode.TABLE_IS_CONST: Code.PERMISSION_DENIED,
    MatchErrorCode.DEFAULT_ACTION_IS_CONST: Code.PERMISSION_DENIED,
    MatchErrorCode.INVALID_INDEX: Code.OUT_OF_RANGE,
    MatchErrorCode.INVALID_VALUE: Code.INVALID_ARGUMENT,
    MatchErrorCode.GROUP_EXISTS: Code.ALREADY_EXISTS,
    MatchErrorCode.GROUP_NOT_FOUND: Code.NOT_FOUND,
    MatchErrorCode.SESSION_NOT_FOUND: Code.NOT_FOUND,
    MatchErrorCode.NO_PIPELINE: Code.FAILED_PRECONDITION,
}


def from_match_error(exc: MatchError) -> P4RuntimeError:
    """The P4Runtime refusal for an engine refusal."""
    return P4RuntimeError(_MATCH_ERROR_CODES.get(exc.code, Code.UNKNOWN), str(exc))


def grpc_code(code: int) -> grpc.StatusCode:
    """The grpc.StatusCode with google.rpc code number `code` (UNKNOWN if out of range)."""
    for status_code in grpc.StatusCode:
        if status_code.value[0] == code:
            return status_code
    return grpc.StatusCode.UNKNOWN


def batch_status(results: Sequence[P4RuntimeError | None]) -> rpc_status.Status | None:
    """google.rpc.Status for a Write whose updates ended as `results` (None = OK); None when all succeeded."""
    if all(r is None for r in results):
        return None
    status = rpc_status.Status(code=Code.UNKNOWN, message="Write failure.")
    for result in results:
        if result is None:
            error = p4r.Error(canonical_code=Code.OK)
        else:
            error = p4r.Error(canonical_code=result.code, message=result.message, space=ERROR_SPACE)
        status.details.add().Pack(error)
    return status


@dataclass(frozen=True)
class GrpcStatus(grpc.Status):
    """A concrete grpc.Status for `ServicerContext.abort_with_status` (carries google.rpc.Status as trailer)."""

    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple = ()


def to_grpc_status(status: rpc_status.Status) -> GrpcStatus:
    """Wrap a google.rpc.Status the way gRPC's C++ SetErrorDetails does (`grpc-status-details-bin` trailer)."""
    return GrpcStatus(
        code=grpc_code(status.code),
        details=status.message,
        trailing_metadata=(("grpc-status-details-bin", status.SerializeToString()),),
    )


def simple_grpc_status(error: P4RuntimeError) -> GrpcStatus:
    """A single-error RPC status (non-Write RPCs), with the google.rpc.Status trailer PI also sends."""
    return to_grpc_status(rpc_status.Status(code=error.code, message=error.message))
