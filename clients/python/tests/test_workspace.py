"""The coding workspace through the Python client: a task created, a file edited with files.edit,
committed and merged into the repository's branch."""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from typing import Any

import pytest

from hotline_client import HotlineError, connect


def git(cwd: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_task_edit_commit_merge(harness: dict[str, Any]) -> None:
    repo = f"py{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            started = await client.request("repos.add", {"repo": repo, "wait": 60_000})
            status = await client.job(started["job"]["id"]).wait()
            assert status["state"] == "succeeded", status
            added: dict[str, Any] = status.get("result", {})
            task = await client.tasks.create("t1", repo=repo)
            assert task["branch"] == "task-t1" and task["repo"] == repo
            source = os.path.join(task["path"], "src", "main.py")
            await client.files.write(source, "RETRIES = 3\nprint('hello')\n", parents=True)
            first = await client.tasks.commit("t1", "add main.py")
            assert first["committed"] and first["files"] == ["src/main.py"]

            with pytest.raises(HotlineError) as caught:
                await client.files.edit(source, [{"old": "RETRIES = 4", "new": "RETRIES = 5"}])
            assert caught.value.code == "invalid_request" and caught.value.path == "/edits/0/old"
            edited = await client.files.edit(source, [{"old": "RETRIES = 3", "new": "RETRIES = 5"}])
            assert edited["replacements"] == 1
            second = await client.tasks.commit("t1", "five retries")
            assert second["committed"]

            merged = await client.tasks.merge("t1")
            assert merged["merged"] and merged["into"] == added["branch"]
            assert git(added["path"], "show", f"{merged['into']}:src/main.py") == "RETRIES = 5\nprint('hello')\n"
            assert [t["task"] for t in (await client.tasks.list(repo=repo))["tasks"]] == ["t1"]
            removed = await client.tasks.remove("t1")
            assert removed["branchDeleted"]

    asyncio.run(main())
