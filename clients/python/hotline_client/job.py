"""A handle on one job of one daemon; every method is one or a few actions."""

from __future__ import annotations

import base64
import time
from typing import TYPE_CHECKING, Any, Literal

from .follow import FollowStream, Stream
from .protocol import JobsCancelResult, JobStatus

if TYPE_CHECKING:
    from .client import HotlineClient

# jobs.wait accepts at most this per call; longer waits are several calls.
MAX_WAIT_MS = 600_000
# jobs.output's largest page.
PAGE_BYTES = 4 * 1024 * 1024

Signal = Literal["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL", "SIGUSR1", "SIGUSR2"]


class Job:
    def __init__(self, client: HotlineClient, job_id: str) -> None:
        self._client = client
        self.id = job_id

    def __repr__(self) -> str:
        return f"Job({self.id!r})"

    async def status(self) -> JobStatus:
        return await self._client.request("jobs.status", {"job": self.id})

    async def wait(self, timeout_ms: int | None = None) -> JobStatus:
        """The final status once the job has ended; with `timeout_ms`, the current status when that
        time passed first (the job keeps running)."""
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        while True:
            left = MAX_WAIT_MS if deadline is None else max(0, min(MAX_WAIT_MS, int((deadline - time.monotonic()) * 1000)))
            reply = await self._client.request("jobs.wait", {"job": self.id, "timeoutMs": left})
            if not reply["timedOut"] or (deadline is not None and time.monotonic() >= deadline):
                return reply["job"]

    async def cancel(self, *, signal: Signal | None = None, grace_ms: int | None = None) -> JobsCancelResult:
        """Signals the job's process group (jobs.cancel)."""
        params: dict[str, Any] = {"job": self.id}
        if signal is not None:
            params["signal"] = signal
        if grace_ms is not None:
            params["graceMs"] = grace_ms
        result: JobsCancelResult = await self._client._send("jobs.cancel", params)
        return result

    async def output(self, *, from_: int = 0, stream: Stream | None = None) -> bytes:
        """The output log from `from_` up to what exists now, read in pages. Bytes the output cap
        dropped are skipped (the reply's `from` jumps past them)."""
        pages: list[bytes] = []
        offset = from_
        while True:
            params: dict[str, Any] = {"job": self.id, "from": offset, "limit": PAGE_BYTES}
            if stream is not None:
                params["stream"] = stream
            page = await self._client._send("jobs.output", params)
            data: str = page["data"]
            pages.append(base64.b64decode(data) if page["encoding"] == "base64" else data.encode("utf-8"))
            if page["eof"] or page["next"] == offset:
                return b"".join(pages)
            offset = page["next"]

    def follow(self, *, from_: int = 0, stream: Stream | None = None, binary: bool = True) -> FollowStream:
        """The job's events, resuming across dropped sockets; see FollowStream."""
        return FollowStream(self._client, self.id, from_=from_, stream=stream, binary=binary)
