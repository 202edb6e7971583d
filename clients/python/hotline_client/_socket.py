"""The one place that knows `websockets`: Debian's 10.4 (the legacy asyncio client) and current
releases (websockets.asyncio.client, 13+) behind one small interface."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Mapping
from typing import Any, Protocol, cast

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from .errors import HotlineError
from .protocol import ErrorCode

# The largest reply is a jobs.output page of 4 MiB, at most 25 MiB as JSON (guide/10-protocol.md).
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
# Messages the library itself holds before it stops reading the socket (binary output frames are
# at most 1 MiB each): a follower that is not read pushes back on the daemon instead of growing.
MAX_QUEUED_MESSAGES = 8
DEFAULT_CONNECT_TIMEOUT_S = 10.0
# How long a closing handshake waits for the daemon (and then for its TCP close): the library's
# default, 10 s each, made every close of a socket to an unresponsive peer cost 20 s.
CLOSE_TIMEOUT_S = 2.0
# The close code a client sends when a message passes its size limit (RFC 6455 §7.4.1).
MESSAGE_TOO_BIG = 1009
LEGACY_READ_LIMIT = 1024 * 1024

__all__ = ["Socket", "ConnectionClosed", "open_socket", "closed_too_big", "DEFAULT_CONNECT_TIMEOUT_S", "MAX_MESSAGE_BYTES"]


class Socket(Protocol):
    """What the client uses of a websockets client connection (both implementations have it)."""

    async def send(self, message: str | bytes) -> None: ...

    async def recv(self) -> str | bytes: ...

    async def close(self, code: int = 1000, reason: str = "") -> None: ...


def _implementation() -> tuple[Any, dict[str, Any]]:
    """The client's connect and the options only it takes."""
    try:
        return importlib.import_module("websockets.asyncio.client").connect, {"additional_headers": None}
    except ImportError:
        # The legacy client reads through an asyncio StreamReader that pauses the socket past twice
        # read_limit (64 KiB by default): a 1 MiB output frame then costs a dozen pause/resume turns.
        return importlib.import_module("websockets.client").connect, {"extra_headers": None, "read_limit": LEGACY_READ_LIMIT}


_REFUSALS: Mapping[int, ErrorCode] = {401: "unauthorized", 403: "forbidden", 503: "limit_exceeded"}


def _refusal(url: str, err: Exception) -> HotlineError | None:
    """A refused upgrade (401/403/503) as the daemon's own error when the library kept its body."""
    response = getattr(err, "response", None)
    status = getattr(response, "status_code", None) or getattr(err, "status_code", None)
    if not isinstance(status, int):
        return None
    body = getattr(response, "body", None)
    details: dict[str, Any] = {"httpStatus": status}
    if isinstance(body, bytes):
        details["body"] = body.decode("utf-8", "replace")
        try:
            error = json.loads(body)["error"]
            return HotlineError(error["code"], f"{error['message']} (HTTP {status} from {url})", details=details)
        except (ValueError, KeyError, TypeError):
            pass
    code = _REFUSALS.get(status, "unavailable")
    return HotlineError(code, f"{url} refused the WebSocket upgrade: HTTP {status}", details=details)


async def open_socket(url: str, token: str | None, headers: Mapping[str, str], timeout_s: float, daemon_file: str | None) -> Socket:
    """Opens and authenticates; refusals and unreachable daemons become HotlineErrors naming the URL."""
    connect, own_options = _implementation()
    all_headers = dict(headers)
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    options: dict[str, Any] = {
        **{k: all_headers if v is None else v for k, v in own_options.items()},
        "compression": None,
        "max_size": MAX_MESSAGE_BYTES,
        "max_queue": MAX_QUEUED_MESSAGES,
        "open_timeout": timeout_s,
        "close_timeout": CLOSE_TIMEOUT_S,
        # No keepalive pings of our own (the daemon pings us): a paused follower would miss the pong.
        "ping_interval": None,
    }
    try:
        return cast(Socket, await connect(url, **options))
    except InvalidHandshake as err:
        refused = _refusal(url, err)
        if refused is not None:
            raise refused from err
        raise HotlineError("unavailable", f"cannot reach the daemon at {url}: {err}") from err
    except (OSError, asyncio.TimeoutError, TimeoutError) as err:
        hint = f" (from {daemon_file}; is the daemon running? start one with: hotline daemon)" if daemon_file else ""
        raise HotlineError("unavailable", f"cannot reach the daemon at {url}{hint}: {err or type(err).__name__}") from err


def closed_too_big(err: ConnectionClosed) -> bool:
    """Whether the client itself closed the socket because a message passed MAX_MESSAGE_BYTES."""
    sent = getattr(err, "sent", None)
    return getattr(sent, "code", None) == MESSAGE_TOO_BIG
