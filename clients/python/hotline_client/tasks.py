"""`client.tasks` and `client.terminal`: the workspace's task worktrees, and terminal jobs with a browser link."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ._params import params as _params
from .protocol import TasksCommitResult, TasksCreateResult, TasksListResult, TasksMergeResult, TasksRemoveResult, TerminalOpenResult

if TYPE_CHECKING:
    from .client import HotlineClient


class Tasks:
    """`client.tasks`: git worktrees per task (guide/50-workspace.md)."""

    def __init__(self, client: HotlineClient) -> None:
        self._client = client

    async def create(self, task: str, *, repo: str | None = None, base: str | None = None, lock_timeout_ms: int | None = None) -> TasksCreateResult:
        params = _params(task=task, repo=repo, base=base, lockTimeoutMs=lock_timeout_ms)
        return cast(TasksCreateResult, await self._client._send("tasks.create", params))

    async def list(self, *, repo: str | None = None) -> TasksListResult:
        return cast(TasksListResult, await self._client._send("tasks.list", _params(repo=repo)))

    async def commit(self, task: str, message: str, *, lock_timeout_ms: int | None = None) -> TasksCommitResult:
        params = _params(task=task, message=message, lockTimeoutMs=lock_timeout_ms)
        return cast(TasksCommitResult, await self._client._send("tasks.commit", params))

    async def merge(self, task: str, *, into: str | None = None, lock_timeout_ms: int | None = None) -> TasksMergeResult:
        params = _params(task=task, into=into, lockTimeoutMs=lock_timeout_ms)
        return cast(TasksMergeResult, await self._client._send("tasks.merge", params))

    async def remove(self, task: str, *, force: bool | None = None, lock_timeout_ms: int | None = None) -> TasksRemoveResult:
        params = _params(task=task, force=force, lockTimeoutMs=lock_timeout_ms)
        return cast(TasksRemoveResult, await self._client._send("tasks.remove", params))


class Terminal:
    """`client.terminal`: a terminal job and a browser link to it (guide/70-browser.md)."""

    def __init__(self, client: HotlineClient) -> None:
        self._client = client

    async def open(
        self,
        *,
        job: str | None = None,
        cwd: str | None = None,
        command: str | None = None,
        cols: int | None = None,
        rows: int | None = None,
        ttl_ms: int | None = None,
    ) -> TerminalOpenResult:
        params = _params(job=job, cwd=cwd, command=command, cols=cols, rows=rows, ttlMs=ttl_ms)
        return cast(TerminalOpenResult, await self._client._send("terminal.open", params))
