"""`client.session()`: a persistent bash session, where `cd`, variables and an activated venv carry
from one `run` to the next and each command is a job of its own (guide/32-sessions.md)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ._params import params as _params
from .job import Job
from .protocol import SessionOpenResultSession, SessionRunResultJob

if TYPE_CHECKING:
    from .client import HotlineClient

# session.run's longest wait: `run` waits this long unless told otherwise.
MAX_WAIT_MS = 600_000

SessionStatus = SessionOpenResultSession


@dataclass
class SessionRun:
    """What `Session.run` returns: the command's job, its status and exit code, and its output when
    it ended or waits for input (then `awaiting_input` and `last_line`, the prompt)."""

    job: Job
    status: SessionRunResultJob
    exit_code: int | None = None
    output: bytes | None = None
    omitted_bytes: int = 0
    awaiting_input: bool = False
    last_line: str | None = None


class Session:
    """A handle on one shell session (commands run one at a time; a second is `conflict`)."""

    def __init__(self, client: HotlineClient, status: SessionStatus) -> None:
        self._client = client
        self.id: str = status["id"]
        self.opened = status

    def __repr__(self) -> str:
        return f"Session({self.id!r})"

    async def run(self, command: str, *, timeout_ms: int | None = None, key: str | None = None, wait: int = MAX_WAIT_MS) -> SessionRun:
        """Runs a command; returns when it ended, when it waits for input, or when `wait` (ms) passed."""
        reply = await self._client._send("session.run", _params(session=self.id, command=command, timeoutMs=timeout_ms, key=key, wait=wait))
        status: SessionRunResultJob = reply["job"]
        run = SessionRun(
            job=self._client.job(status["id"]),
            status=status,
            exit_code=status.get("exitCode"),
            awaiting_input=status.get("awaitingInput") is True,
            last_line=status.get("lastLine"),
        )
        output = reply.get("output")
        if output is not None:
            data: str = output["data"]
            run.output = base64.b64decode(data) if output["encoding"] == "base64" else data.encode("utf-8")
            run.omitted_bytes = output.get("omittedBytes", 0)
        return run

    async def input(self, job: str | Job, data: str | bytes, *, eof: bool = False) -> int:
        """Writes to a running command's stdin (`eof` closes it); returns the bytes it took."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        job_id = job if isinstance(job, str) else job.id
        reply = await self._client._send("jobs.input", {"job": job_id, "data": base64.b64encode(raw).decode("ascii"), "encoding": "base64", "eof": eof})
        written: int = reply["written"]
        return written

    async def status(self) -> SessionStatus:
        reply = await self._client._send("session.status", {"session": self.id})
        return cast(SessionStatus, reply["session"])

    async def close(self) -> SessionStatus:
        """Ends the shell and every process it started."""
        reply = await self._client._send("session.close", {"session": self.id})
        return cast(SessionStatus, reply["session"])
