"""HotlineError: every failure the client reports, under the wire's stable codes."""

from __future__ import annotations

from typing import Any

from .protocol import ErrorCode, WireError


class HotlineError(Exception):
    """A daemon's error reply unchanged (same code, message, path and details as on the wire), or a
    client-side failure under the same codes (`unavailable` when the daemon cannot be reached,
    `unauthorized` when no token can be read)."""

    code: ErrorCode
    message: str
    path: str | None
    details: dict[str, Any] | None

    def __init__(self, code: ErrorCode, message: str, *, path: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path
        self.details = details

    @classmethod
    def from_wire(cls, error: WireError) -> HotlineError:
        """The error of a reply (`ok: false`), kept exactly as the daemon sent it."""
        return cls(error["code"], error["message"], path=error.get("path"), details=error.get("details"))

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"{self.code}{where}: {self.message}"

    def __repr__(self) -> str:
        return f"HotlineError({self.code!r}, {self.message!r}, path={self.path!r})"
