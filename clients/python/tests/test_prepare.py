"""prepare of a package from the offline stand-in nixpkgs (test/fixtures/nixpkgs-standin, which the
daemon was started with as HOTLINE_NIXPKGS), then a job in the workspace that runs it."""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import Any

import pytest

from hotline_client import connect


def test_prepare_then_a_job_that_uses_the_package(harness: dict[str, Any]) -> None:
    if not harness["nix"]:
        pytest.skip("nix is not installed")
    workspace = tempfile.mkdtemp(prefix="ws-", dir=harness["work"])

    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            before = await client.shell("command -v hello-a || echo missing", cwd=workspace, wait=30_000)
            assert before.output == b"missing\n"
            prepared = await client.prepare(workspace, packages=["hello-a"], wait=120_000)
            if not prepared.ready:
                assert prepared.job is not None
                status = await prepared.job.wait()
                assert status["state"] == "succeeded", status
                assert status.get("result", {})["environment"]["packages"] == ["hello-a"]
            os.mkdir(os.path.join(workspace, "src"))
            run = await client.shell("hello-a", cwd=os.path.join(workspace, "src"), wait=30_000)
            assert run.status["state"] == "succeeded"
            assert run.output == b"hello-a from standin 1\n"
            again = await client.prepare(workspace, packages=["hello-a"])
            assert again.ready and again.job is None and again.environment is not None

    asyncio.run(main())
