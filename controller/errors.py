"""The controller's errors. Each message says what was wrong and where (which switch,
which entity, which field), so a caller can print it as it is."""

from __future__ import annotations

from dataclasses import dataclass


class P4RuntimeClientError(Exception):
    """Base class of every error the P4Runtime client raises."""


class SchemaError(P4RuntimeClientError, LookupError):
    """A name (table, action, field, ...) that the P4Info does not declare."""


class EncodeError(P4RuntimeClientError, ValueError):
    """A value that cannot be encoded for the field it is given for."""


class NoPipelineError(P4RuntimeClientError):
    """The client has no P4Info yet (no pipeline set or fetched)."""


class ArbitrationError(P4RuntimeClientError):
    """The client could not become the primary controller."""


class RpcError(P4RuntimeClientError):
    """A P4Runtime RPC failed as a whole (the gRPC status code and the server's text)."""

    def __init__(self, what: str, code: str, details: str):
        self.code = code
        self.details = details
        super().__init__(f"{what}: {code}: {details}")


@dataclass(frozen=True)
class UpdateFailure:
    """One failed element of a Write batch (or of a partially failed Read)."""

    index: int
    code: str  # the gRPC code name, e.g. "ALREADY_EXISTS"
    message: str  # the server's message
    entity: str  # the entity, described by names

    def __str__(self) -> str:
        return f"update {self.index} ({self.entity}): {self.code}: {self.message}"


class WriteError(P4RuntimeClientError):
    """Some updates of a Write batch failed; ``failures`` lists those (not the others).
    The message names the first ``SHOWN`` failures and counts the rest."""

    SHOWN = 5

    def __init__(self, target: str, total: int, failures: list[UpdateFailure]):
        self.failures = failures
        self.total = total
        lines = [f"{target}: {len(failures)} of {total} updates failed"]
        lines += [f"  {f}" for f in failures[:self.SHOWN]]
        if len(failures) > self.SHOWN:
            lines.append(f"  ... and {len(failures) - self.SHOWN} more")
        super().__init__("\n".join(lines))
