"""A synchronous facade for scripts and notebooks that do not run an event loop: the async client
runs on an event loop in a background thread, and each call waits for its result there.

    from hotline_client.sync import connect

    with connect() as client:
        run = client.shell("make test", wait=30_000)
        print(run.job.wait()["state"])
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from . import client as aio
from .code import Code, CodeImage, CodeRun, CodeRunResult
from .files import Files
from .follow import FollowStream, Stream
from .frames import FollowEvent
from .job import Job, Signal
from .protocol import JobsCancelResult, JobStatus, PrepareResultEnvironment, SessionRunResultJob, SyncActionRequests
from .session import Session, SessionRun, SessionStatus
from .tasks import Tasks, Terminal

P = ParamSpec("P")
T = TypeVar("T")
U = TypeVar("U")


class _Loop:
    """An event loop in a daemon thread (it never keeps a finished program alive)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="hotline-client", daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def wrap(self, method: Callable[P, Awaitable[T]]) -> Callable[P, T]:
        """The same method, blocking: same parameters, same result type."""
        return self.wrap_as(method, lambda result: result)

    def wrap_as(self, method: Callable[P, Awaitable[T]], convert: Callable[[T], U]) -> Callable[P, U]:
        """The same method, blocking, its result converted (async handles → blocking ones)."""

        async def call(*args: P.args, **kwargs: P.kwargs) -> U:
            return convert(await method(*args, **kwargs))

        def blocking(*args: P.args, **kwargs: P.kwargs) -> U:
            return self.run(call(*args, **kwargs))

        blocking.__doc__ = method.__doc__
        return blocking

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class SyncFollow:
    """`for event in job.follow()`: the async FollowStream's events, one blocking step each."""

    def __init__(self, loop: _Loop, stream: FollowStream) -> None:
        self._loop = loop
        self._stream = stream

    @property
    def offset(self) -> int:
        return self._stream.offset

    def __iter__(self) -> Iterator[FollowEvent]:
        return self

    def __next__(self) -> FollowEvent:
        try:
            return self._loop.run(self._stream.__anext__())
        except StopAsyncIteration:
            raise StopIteration from None

    def __enter__(self) -> SyncFollow:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._loop.run(self._stream.aclose())


class SyncJob:
    def __init__(self, loop: _Loop, job: Job) -> None:
        self._loop = loop
        self._job = job
        self.id = job.id

    def __repr__(self) -> str:
        return f"SyncJob({self.id!r})"

    def status(self) -> JobStatus:
        return self._loop.run(self._job.status())

    def wait(self, timeout_ms: int | None = None) -> JobStatus:
        return self._loop.run(self._job.wait(timeout_ms))

    def cancel(self, *, signal: Signal | None = None, grace_ms: int | None = None) -> JobsCancelResult:
        return self._loop.run(self._job.cancel(signal=signal, grace_ms=grace_ms))

    def output(self, *, from_: int = 0, stream: Stream | None = None) -> bytes:
        return self._loop.run(self._job.output(from_=from_, stream=stream))

    def follow(self, *, from_: int = 0, stream: Stream | None = None, binary: bool = True) -> SyncFollow:
        async def start() -> FollowStream:
            return self._job.follow(from_=from_, stream=stream, binary=binary)

        return SyncFollow(self._loop, self._loop.run(start()))


@dataclass
class SyncShellRun:
    job: SyncJob
    status: JobStatus
    output: bytes | None = None
    omitted_bytes: int = 0


@dataclass
class SyncPrepareRun:
    ready: bool
    environment: PrepareResultEnvironment | None
    job: SyncJob | None
    status: JobStatus | None


class SyncFiles:
    def __init__(self, loop: _Loop, files: Files) -> None:
        self.read = loop.wrap(files.read)
        self.write = loop.wrap(files.write)
        self.edit = loop.wrap(files.edit)
        self.list = loop.wrap(files.list)
        self.search = loop.wrap(files.search)


class SyncTasks:
    def __init__(self, loop: _Loop, tasks: Tasks) -> None:
        self.create = loop.wrap(tasks.create)
        self.list = loop.wrap(tasks.list)
        self.commit = loop.wrap(tasks.commit)
        self.merge = loop.wrap(tasks.merge)
        self.remove = loop.wrap(tasks.remove)


class SyncTerminal:
    def __init__(self, loop: _Loop, terminal: Terminal) -> None:
        self.open = loop.wrap(terminal.open)


@dataclass
class SyncSessionRun:
    job: SyncJob
    status: SessionRunResultJob
    exit_code: int | None
    output: bytes | None
    omitted_bytes: int
    awaiting_input: bool
    last_line: str | None


class SyncSession:
    """The blocking twin of Session."""

    def __init__(self, loop: _Loop, session: Session) -> None:
        self.id = session.id
        self.opened: SessionStatus = session.opened

        def session_run(run: SessionRun) -> SyncSessionRun:
            return SyncSessionRun(
                SyncJob(loop, run.job), run.status, run.exit_code, run.output, run.omitted_bytes, run.awaiting_input, run.last_line
            )

        self.run = loop.wrap_as(session.run, session_run)
        self.input = loop.wrap(session.input)
        self.status = loop.wrap(session.status)
        self.close = loop.wrap(session.close)


@dataclass
class SyncCodeRun:
    job: SyncJob
    status: JobStatus
    result: CodeRunResult | None = None
    output: bytes | None = None


class SyncCode:
    def __init__(self, loop: _Loop, code: Code) -> None:
        def code_run(run: CodeRun) -> SyncCodeRun:
            return SyncCodeRun(SyncJob(loop, run.job), run.status, run.result, run.output)

        self.run = loop.wrap_as(code.run, code_run)
        self.create_context = loop.wrap(code.create_context)
        self.list_contexts = loop.wrap(code.list_contexts)
        self.restart_context = loop.wrap(code.restart_context)
        self.remove_context = loop.wrap(code.remove_context)
        self.file = loop.wrap(code.file)

        async def images(run: SyncCodeRun) -> list[CodeImage]:
            return await code.images(CodeRun(run.job._job, run.status, run.result, run.output))

        self.images = loop.wrap(images)


class SyncClient(SyncActionRequests):
    """The blocking twin of HotlineClient: the same methods, each returning its result."""

    def __init__(self, loop: _Loop, client: aio.HotlineClient) -> None:
        self._loop = loop
        self._client = client
        self.files = SyncFiles(loop, client.files)
        self.code = SyncCode(loop, client.code)
        self.tasks = SyncTasks(loop, client.tasks)
        self.terminal = SyncTerminal(loop, client.terminal)

        def shell_run(run: aio.ShellRun) -> SyncShellRun:
            return SyncShellRun(SyncJob(loop, run.job), run.status, run.output, run.omitted_bytes)

        def prepare_run(run: aio.PrepareRun) -> SyncPrepareRun:
            return SyncPrepareRun(run.ready, run.environment, SyncJob(loop, run.job) if run.job else None, run.status)

        self.shell = loop.wrap_as(client.shell, shell_run)
        self.prepare = loop.wrap_as(client.prepare, prepare_run)
        self.metrics = loop.wrap(client.metrics)
        self.session = loop.wrap_as(client.session, lambda session: SyncSession(loop, session))

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send_sync(self, action: str, params: Any) -> Any:
        return self._loop.run(self._client._send(action, params))

    def job(self, job_id: str) -> SyncJob:
        return SyncJob(self._loop, self._client.job(job_id))

    def close(self) -> None:
        """Closes every connection and stops the background loop."""
        try:
            self._loop.run(self._client.close())
        finally:
            self._loop.stop()


def _blocking(connect_async: Callable[P, Awaitable[aio.HotlineClient]]) -> Callable[P, SyncClient]:
    def connect(*args: P.args, **kwargs: P.kwargs) -> SyncClient:
        """Like hotline_client.connect (the same arguments), blocking."""
        loop = _Loop()

        async def opened() -> aio.HotlineClient:
            return await connect_async(*args, **kwargs)

        try:
            return SyncClient(loop, loop.run(opened()))
        except BaseException:
            loop.stop()
            raise

    return connect


connect = _blocking(aio.connect)
