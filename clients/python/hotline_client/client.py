"""HotlineClient: one daemon, requests on a shared connection, follows on connections of their own."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._params import params as _params
from .code import Code
from .connection import Connection
from .discovery import Endpoint, discover_daemon, read_token_file
from .errors import HotlineError
from .files import Files
from .follow import FollowStream, ReconnectPolicy
from .job import Job
from .protocol import ActionRequests, JobStatus, PrepareResultEnvironment, StateMetricsResult
from .session import Session
from .tasks import Tasks, Terminal

# Idle follow connections kept for the next follow (opening one costs an upgrade with auth).
MAX_IDLE_CONNECTIONS = 2


@dataclass
class ShellRun:
    """What `shell` returns: the job handle and status, and the output when `wait` saw the job end
    (all of it, or its head and tail with `omitted_bytes` left out between)."""

    job: Job
    status: JobStatus
    output: bytes | None = None
    omitted_bytes: int = 0


@dataclass
class PrepareRun:
    """What `prepare` returns: `ready` with the environment on a cache hit, else the job building it."""

    ready: bool
    environment: PrepareResultEnvironment | None
    job: Job | None
    status: JobStatus | None


class HotlineClient(ActionRequests):
    """A client of one daemon. Requests share one connection, reopened on the next request after it
    drops (a request in flight then fails with `unavailable`: it may or may not have run, so retry
    only with an idempotency `key`). Each follow has a connection of its own; one that ended with
    job.exit is kept for the next follow (at most 2 idle). `close()` (or `async with`) ends them all."""

    def __init__(
        self,
        resolve_endpoint: Callable[[], Endpoint],
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout_s: float = 10.0,
        reconnect: ReconnectPolicy | None = None,
    ) -> None:
        self.reconnect = reconnect or ReconnectPolicy()
        self.files = Files(self)
        self.code = Code(self)
        self.tasks = Tasks(self)
        self.terminal = Terminal(self)
        self._resolve_endpoint = resolve_endpoint
        self._headers = dict(headers or {})
        self._connect_timeout_s = connect_timeout_s
        self._main_connection: Connection | None = None
        self._main_opening: asyncio.Future[Connection] | None = None
        self._connections: set[Connection] = set()
        self._idle: list[Connection] = []
        self._follows: set[FollowStream] = set()
        self._closed = False

    async def __aenter__(self) -> HotlineClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _send(self, action: str, params: Any) -> Any:
        connection = self._main_connection
        if connection is None or connection.closed:
            connection = await self._main()
        return await connection.request(action, params)

    async def shell(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout_ms: int | None = None,
        stdin: str | bool | None = None,
        pty: tuple[int, int] | None = None,
        key: str | None = None,
        wait: int | None = None,
    ) -> ShellRun:
        """Runs a command (a string under `bash -c`, a list without a shell); with `wait` (ms), the
        output comes back inline when the job ended in time. `pty` is (cols, rows)."""
        params = _params(
            command=command if isinstance(command, str) else list(command),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            timeoutMs=timeout_ms,
            stdin=stdin,
            pty={"cols": pty[0], "rows": pty[1]} if pty else None,
            key=key,
            wait=wait,
        )
        reply = await self._send("shell", params)
        status: JobStatus = reply["job"]
        run = ShellRun(job=self.job(status["id"]), status=status)
        output = reply.get("output")
        if output is not None:
            data: str = output["data"]
            run.output = base64.b64decode(data) if output["encoding"] == "base64" else data.encode("utf-8")
            run.omitted_bytes = output.get("omittedBytes", 0)
        return run

    async def prepare(
        self,
        workspace: str,
        *,
        packages: Sequence[str] | None = None,
        flake: str | None = None,
        update_lock: bool | None = None,
        key: str | None = None,
        wait: int | None = None,
        timeout_ms: int | None = None,
    ) -> PrepareRun:
        """Prepares a workspace's Nix environment; jobs inside the workspace then get it."""
        params = _params(
            workspace=workspace,
            packages=list(packages) if packages is not None else None,
            flake=flake,
            updateLock=update_lock,
            key=key,
            wait=wait,
            timeoutMs=timeout_ms,
        )
        reply = await self._send("prepare", params)
        status: JobStatus | None = reply.get("job")
        return PrepareRun(
            ready=reply["ready"],
            environment=reply.get("environment"),
            job=self.job(status["id"]) if status else None,
            status=status,
        )

    async def metrics(self, *, since_ms: int | None = None, limit: int | None = None) -> StateMetricsResult:
        """The sandbox over time (state.metrics): CPU, memory, disks, processes, connections and jobs,
        one sample every `intervalMs`, oldest first. Pass the last sample's `at` as `since_ms` for
        only newer ones (`limit`: the newest that many, default 30). A job's own CPU and memory are
        its status's `usage`."""
        result: StateMetricsResult = await self._send("state.metrics", _params(sinceMs=since_ms, limit=limit))
        return result

    async def session(
        self,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        input_wait_ms: int | None = None,
        idle_timeout_ms: int | None = None,
        resume: str | None = None,
        id: str | None = None,
    ) -> Session:
        """A shell session: opens one (session.open), resumes a lost one (`resume`), or with `id`
        attaches to an existing one (session.status)."""
        if id is not None:
            reply = await self._send("session.status", {"session": id})
            return Session(self, reply["session"])
        params = _params(
            cwd=cwd,
            env=dict(env) if env is not None else None,
            inputWaitMs=input_wait_ms,
            idleTimeoutMs=idle_timeout_ms,
            resume=resume,
        )
        reply = await self._send("session.open", params)
        return Session(self, reply["session"])

    def job(self, job_id: str) -> Job:
        """A handle on an existing job (no request is sent)."""
        return Job(self, job_id)

    async def close(self) -> None:
        """Closes every connection (idle ones too) and stops every follow."""
        self._closed = True
        for follow in list(self._follows):
            await follow.aclose()
        if self._main_opening is not None:
            await asyncio.gather(self._main_opening, return_exceptions=True)
        self._idle.clear()
        await asyncio.gather(*(c.close() for c in list(self._connections)), return_exceptions=True)
        self._main_connection = None

    # The follow host's side (FollowHost).

    async def open_connection(self) -> Connection:
        """A connection of its own (for follows): an idle one a finished follow left, else a new one."""
        if self._closed:
            raise HotlineError("unavailable", "the client is closed")
        while self._idle:
            idle = self._idle.pop()
            if not idle.closed:
                return idle
        connection = await Connection.open(self._resolve_endpoint(), self._headers, self._connect_timeout_s)
        self._connections.add(connection)
        connection.on_close(lambda _reason: self._connections.discard(connection))
        if self._closed:
            await connection.close()
            raise HotlineError("unavailable", "the client is closed")
        return connection

    def release_connection(self, connection: Connection) -> None:
        """Takes back the connection of a follow that ended with job.exit, for the next follow."""
        if self._closed or connection.closed:
            asyncio.get_running_loop().create_task(connection.close())
            return
        self._idle.append(connection)
        while len(self._idle) > MAX_IDLE_CONNECTIONS:
            asyncio.get_running_loop().create_task(self._idle.pop(0).close())

    def track(self, follow: FollowStream) -> None:
        self._follows.add(follow)

    def untrack(self, follow: FollowStream) -> None:
        self._follows.discard(follow)

    async def _main(self) -> Connection:
        """The shared request connection, opened (again) when there is none."""
        if self._main_connection is not None and not self._main_connection.closed:
            return self._main_connection
        if self._main_opening is None or self._main_opening.done():
            self._main_opening = asyncio.ensure_future(self.open_connection())
        opening = self._main_opening
        try:
            self._main_connection = await asyncio.shield(opening)
        finally:
            if self._main_opening is opening and opening.done():
                self._main_opening = None
        return self._main_connection


def _resolver(
    url: str | None, token: str | None, token_file: str | None, state_dir: str | None, config_dir: str | None, env: Mapping[str, str] | None
) -> Callable[[], Endpoint]:
    if url is None:
        if token is not None or token_file is not None:
            raise HotlineError("invalid_request", "token and token_file need a url; without url the local daemon's token is used")
        return lambda: discover_daemon(state_dir=state_dir, config_dir=config_dir, env=env)
    if token is not None:
        endpoint = Endpoint(url=url, token=token)
        return lambda: endpoint
    if token_file is None:
        raise HotlineError("invalid_request", f"connecting to {url} needs a token or a token_file")
    known_url, known_file = url, token_file
    return lambda: Endpoint(url=known_url, token=read_token_file(known_file))


async def connect(
    *,
    url: str | None = None,
    token: str | None = None,
    token_file: str | None = None,
    state_dir: str | None = None,
    config_dir: str | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    connect_timeout_s: float = 10.0,
    reconnect: ReconnectPolicy | None = None,
    lazy: bool = False,
) -> HotlineClient:
    """Connects to a daemon: the local one (found like the CLI finds it: daemon.json and the token
    file under HOTLINE_STATE_DIR / HOTLINE_CONFIG_DIR, XDG_*, ~), or `url` with `token` or
    `token_file`. The first connection opens here, so a wrong URL or token fails now (unless `lazy`)."""
    client = HotlineClient(
        _resolver(url, token, token_file, state_dir, config_dir, env),
        headers=headers,
        connect_timeout_s=connect_timeout_s,
        reconnect=reconnect,
    )
    if not lazy:
        await client._main()
    return client

