"""`job.follow()`: a job's events as an async iterator that survives dropped sockets."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from ._socket import MAX_MESSAGE_BYTES
from .errors import HotlineError
from .frames import FollowEvent
from .protocol import ErrorCode

if TYPE_CHECKING:
    from .connection import Connection

Stream = Literal["stdout", "stderr", "pty"]

# Bytes held for a slow consumer before the socket is paused (the daemon then reads from disk).
HIGH_WATER = 8 * 1024 * 1024
LOW_WATER = 2 * 1024 * 1024


@dataclass(frozen=True)
class ReconnectPolicy:
    """How a follow survives dropped sockets: consecutive reconnects without progress, the first back-off."""

    attempts: int = 5
    delay_ms: int = 100


class FollowHost(Protocol):
    """What a follow needs from its client: connections of its own, and a place to hand one back."""

    reconnect: ReconnectPolicy

    async def open_connection(self) -> Connection: ...

    def release_connection(self, connection: Connection) -> None: ...

    def track(self, follow: FollowStream) -> None: ...

    def untrack(self, follow: FollowStream) -> None: ...


class FollowStream:
    """The job's events on a connection of its own with binary output frames. When the socket drops
    it follows again from the offset after the last byte it delivered, so the consumer sees every
    byte exactly once and in order; it ends after `job.exit`. A slow consumer pauses the socket
    instead of growing memory. `async with` (or `aclose()`) stops a follow left early."""

    def __init__(self, host: FollowHost, job: str, *, from_: int = 0, stream: Stream | None = None, binary: bool = True) -> None:
        self.job = job
        self._host = host
        self._cursor = from_
        self._stream = stream
        self._binary = binary
        self._queue: deque[FollowEvent] = deque()
        self._queued_bytes = 0
        self._changed = asyncio.Event()
        self._exit = asyncio.Event()
        self._connection: Connection | None = None
        self._detach: Callable[[], None] | None = None
        self._failed_attempts = 0
        self._exited = False
        self._stopped = False
        self._error: BaseException | None = None
        host.track(self)
        self._task = asyncio.get_running_loop().create_task(self._run())

    @property
    def offset(self) -> int:
        """The log offset after the last output byte delivered: where a new follow would resume."""
        return self._cursor

    def __aiter__(self) -> FollowStream:
        return self

    async def __anext__(self) -> FollowEvent:
        while True:
            if self._queue:
                event = self._queue.popleft()
                if event["event"] == "job.output":
                    self._queued_bytes -= len(event["bytes"])
                    if self._queued_bytes <= LOW_WATER and self._connection is not None:
                        self._connection.resume()
                return event
            if self._error is not None:
                raise self._error
            if self._stopped or self._exited:
                raise StopAsyncIteration
            self._changed.clear()
            await self._changed.wait()

    async def __aenter__(self) -> FollowStream:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stops following: closes the connection (unless job.exit already handed it back)."""
        if not self._stopped:
            self._stopped = True
            self._queue.clear()
            self._queued_bytes = 0
            self._changed.set()
            self._exit.set()
        connection = self._connection
        self._connection = None
        if not self._task.done():
            self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        if connection is not None:
            await connection.close()
        self._host.untrack(self)

    async def _run(self) -> None:
        try:
            while not self._stopped and not self._exited:
                if not await self._follow_once():
                    return
        finally:
            self._changed.set()
            self._host.untrack(self)

    async def _follow_once(self) -> bool:
        """One connection's follow; False when the follow is over (exit, stop or failure)."""
        try:
            connection = await self._host.open_connection()
        except HotlineError as err:
            return await self._dropped(err)
        if self._stopped:
            self._host.release_connection(connection)
            return False
        self._connection = connection
        dropped = asyncio.Event()
        off_event = connection.on_event(self._on_event)
        off_close = connection.on_close(lambda _reason: dropped.set())

        def detach() -> None:
            off_event()
            off_close()

        self._detach = detach
        params: dict[str, Any] = {"job": self.job, "from": self._cursor, "binary": self._binary}
        if self._stream is not None:
            params["stream"] = self._stream
        try:
            await connection.request("jobs.follow", params)
        except HotlineError as err:
            if not connection.closed:  # a refusal (not_found …); a dropped socket is retried below
                detach()
                self._fail(err)
                await connection.close()
                return False
        if not connection.closed and not self._exited:
            waits = [asyncio.ensure_future(dropped.wait()), asyncio.ensure_future(self._exit.wait())]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
        detach()
        if self._exited:
            return False  # _on_event handed the connection back
        if self._stopped:
            return False
        self._connection = None
        if connection.too_big:
            # The same follow from the same offset brings the same message: fail now, not after every reconnect.
            why = f"the daemon sent a message over the client's {MAX_MESSAGE_BYTES}-byte limit (close code 1009)"
            self._give_up("limit_exceeded", why)
            return False
        return await self._dropped(HotlineError("unavailable", f"the connection closed while following {self.job}"))

    def _on_event(self, frame: dict[str, Any]) -> None:
        if frame.get("job") != self.job or self._stopped:
            return
        kind = frame.get("event")
        if kind == "job.output":
            data: memoryview = frame["bytes"]
            offset: int = frame["offset"]
            end = offset + len(data)
            if end <= self._cursor:
                return  # already delivered before a reconnect
            if offset < self._cursor:
                data = data[self._cursor - offset :]
                frame = {**frame, "offset": self._cursor, "bytes": data}
            self._cursor = end
            self._failed_attempts = 0
            self._push(cast(FollowEvent, frame))
            self._queued_bytes += len(data)
            if self._queued_bytes > HIGH_WATER and self._connection is not None:
                self._connection.pause()
        elif kind == "job.exit":
            self._exited = True
            self._push(cast(FollowEvent, frame))
            self._exit.set()
            self._release()
        elif kind in ("job.state", "job.progress"):
            self._push(cast(FollowEvent, frame))

    def _release(self) -> None:
        """Hands the connection back at once: the daemon's follower on it ended with job.exit, so a
        follow started right after this one's last event reuses it (a new one costs an upgrade and a
        cold TCP window)."""
        connection = self._connection
        if connection is None:
            return
        self._connection = None  # aclose() must not close it once another follow may own it
        if self._detach is not None:
            self._detach()
            self._detach = None
        connection.resume()
        self._host.release_connection(connection)

    def _push(self, event: FollowEvent) -> None:
        self._queue.append(event)
        self._changed.set()

    async def _dropped(self, cause: HotlineError) -> bool:
        if self._stopped or self._exited:
            return False
        self._failed_attempts += 1
        policy = self._host.reconnect
        if self._failed_attempts > policy.attempts:
            self._give_up("unavailable", f"{policy.attempts} reconnects without progress ({cause.message})")
            return False
        # The first reconnect is immediate (a dropped socket is the common case); then back off.
        if self._failed_attempts > 1:
            await asyncio.sleep(policy.delay_ms * 2 ** (self._failed_attempts - 2) / 1000)
        return True

    def _give_up(self, code: ErrorCode, why: str) -> None:
        """Ends the follow with an error that says where to resume."""
        message = f"gave up following {self.job}: {why}; resume with from_={self._cursor}"
        self._fail(HotlineError(code, message, details={"job": self.job, "from": self._cursor}))

    def _fail(self, error: BaseException) -> None:
        if self._stopped or self._exited or self._error is not None:
            return
        self._error = error
        self._changed.set()
