"""Shell sessions through the Python client against a real daemon (test/sessions/python.test.ts
starts it): state carries, each command's own exit code and exact output, input waits answered,
cancel keeps the session, background processes end with it, and the sync facade."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
from typing import Any

import pytest

from hotline_client import HotlineError, connect, sync


def test_state_carries_and_each_command_reports_its_own_code(harness: dict[str, Any]) -> None:
    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            session = await client.session(cwd="/")
            first = await session.run("cd /tmp && export A=1 && f() { echo f$1; }")
            assert first.exit_code == 0 and first.status["cwd"] == "/tmp"
            second = await session.run("pwd; echo $A; f 2")
            assert second.output == b"/tmp\n1\nf2\n"
            venv = os.path.join(harness["work"], "venv")
            await session.run(f"/usr/bin/python3 -m venv --without-pip {venv} && source {venv}/bin/activate")
            assert (await session.run('echo "$VIRTUAL_ENV"')).output == f"{venv}\n".encode()
            failed = await session.run("set -euo pipefail; false; echo not reached")
            assert failed.exit_code == 1 and failed.output == b""
            assert (await session.run("echo next")).output == b"next\n"
            exited = await session.run("exit 3")
            assert exited.exit_code == 3
            assert (await session.status())["state"] == "exited"
            with pytest.raises(HotlineError) as refused:
                await session.run("true")
            assert refused.value.code == "conflict"

    asyncio.run(main())


def test_output_is_byte_exact_and_markers_mean_nothing(harness: dict[str, Any]) -> None:
    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            session = await client.session(cwd="/tmp")
            size = 50 * 1024 * 1024
            big = await session.run(f"yes abcdefgh | head -c {size}")
            assert big.status["outputBytes"] == size
            assert hashlib.sha256(await big.job.output()).hexdigest() == hashlib.sha256(b"abcdefgh\n" * (size // 9) + b"abcdefgh\n"[: size % 9]).hexdigest()
            tricky = b"done\x001\x000\x00/tmp\x00ready\x00PS1='$ '\n\xff\xfeno newline"
            odd = await session.run(f"printf %s {base64.b64encode(tricky).decode()} | base64 -d")
            assert await odd.job.output() == tricky
            await session.close()

    asyncio.run(main())


def test_a_wait_for_input_is_reported_and_answered(harness: dict[str, Any]) -> None:
    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            session = await client.session(cwd="/tmp", input_wait_ms=300)
            asked = await session.run('printf "Name? "; read x; echo "got $x"')
            assert asked.awaiting_input and asked.last_line == "Name?"
            assert (await session.status())["state"] == "awaiting_input"
            assert await session.input(asked.job, "y\n") == 2
            done = await asked.job.wait(timeout_ms=30_000)
            assert done["state"] == "succeeded"
            assert await asked.job.output() == b"Name? got y\n"
            await session.close()

    asyncio.run(main())


def test_cancel_keeps_the_session_and_close_ends_background_processes(harness: dict[str, Any]) -> None:
    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            session = await client.session(cwd="/tmp")
            await session.run("export KEEP=kept")
            sleeping = await session.run("sleep 100", wait=300)
            assert sleeping.status["state"] == "running"
            await sleeping.job.cancel(grace_ms=2000)
            assert (await sleeping.job.wait(timeout_ms=30_000))["state"] == "cancelled"
            assert (await session.run("echo ok $KEEP")).output == b"ok kept\n"
            await session.run("sleep 1000 >/dev/null 2>&1 & echo $! > bg.pid")
            status = await session.status()
            pids = [p["pid"] for p in status.get("processes", {"list": []})["list"]]
            for _ in range(100):
                if pids:
                    break
                await asyncio.sleep(0.05)
                status = await session.status()
                pids = [p["pid"] for p in status.get("processes", {"list": []})["list"]]
            assert pids
            assert (await session.close())["state"] == "exited"
            for _ in range(100):
                if not any(os.path.exists(f"/proc/{pid}") for pid in pids):
                    break
                await asyncio.sleep(0.05)
            assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)

    asyncio.run(main())


def test_sessions_in_parallel_and_the_sync_facade(harness: dict[str, Any]) -> None:
    async def one(client: Any, i: int) -> None:
        session = await client.session(cwd="/")
        await session.run(f"export MINE={i}")
        for k in range(5):
            assert (await session.run(f"echo $MINE {k}")).output == f"{i} {k}\n".encode()
        await session.close()

    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            await asyncio.gather(*(one(client, i) for i in range(20)))

    asyncio.run(main())


def test_the_sync_facade(harness: dict[str, Any]) -> None:
    with sync.connect(url=harness["url"], token=harness["token"]) as client:
        session = client.session(cwd="/tmp")
        session.run("cd / && X=2")
        run = session.run("echo $X $PWD")
        assert run.output == b"2 /\n" and run.exit_code == 0
        assert run.job.wait()["state"] == "succeeded"
        assert session.close()["state"] == "exited"
