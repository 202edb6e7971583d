"""Jobs through the Python client against a real daemon: output byte-exact, errors as on the wire,
a follow that survives three cut connections, wait and cancel, and the sync facade."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from typing import Any

import pytest

from hotline_client import HotlineError, ReconnectPolicy, connect, sync
from hotline_client._socket import open_socket
from proxy import CuttingProxy


def test_shell_output_is_byte_exact(harness: dict[str, Any]) -> None:
    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            small = await client.shell(["printf", r"a\000\377\376\nline two\r\n\351t\303\251"], wait=30_000)
            assert small.status["state"] == "succeeded"
            assert small.output == b"a\x00\xff\xfe\nline two\r\n\xe9t\xc3\xa9"
            assert await small.job.output() == small.output
            for binary in (True, False):  # binary frames, and JSON events (base64 for bytes that are not UTF-8)
                followed = [e["bytes"] async for e in small.job.follow(binary=binary) if e["event"] == "job.output"]
                assert b"".join(followed) == small.output

            path = os.path.join(harness["work"], "random.bin")
            big = await client.shell(f"head -c 300000 /dev/urandom | tee {path}", wait=30_000)
            assert big.status["state"] == "succeeded"
            with open(path, "rb") as f:
                expected = f.read()
            assert len(expected) == 300000
            assert await big.job.output() == expected  # past the inline limit: read back in pages
            # Inline, a long output is its head and tail with the middle counted in omitted_bytes.
            inline = big.output
            assert inline is not None and big.omitted_bytes > 0 and len(inline) + big.omitted_bytes == len(expected)
            head = next(i for i in range(len(inline) + 1) if i == len(inline) or inline[i] != expected[i])
            assert expected.endswith(inline[head:])

    asyncio.run(main())


def test_an_error_reply_raises_hotline_error_with_the_wire_code_and_path(harness: dict[str, Any]) -> None:
    async def raw(request: dict[str, Any]) -> dict[str, Any]:
        """The reply as the daemon sends it, read on a bare socket (no request table, no parsing)."""
        ws = await open_socket(harness["url"], harness["token"], {}, 10.0, None)
        try:
            await ws.send(json.dumps({"id": 1, **request}))
            reply: dict[str, Any] = json.loads(await ws.recv())
            return reply
        finally:
            await ws.close()

    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            cases: list[dict[str, Any]] = [
                {"action": "shell", "command": "true", "timeoutMs": -5},
                {"action": "files.read", "path": os.path.join(harness["work"], "no-such-file")},
                {"action": "jobs.status", "job": "j0000000000000000zz"},
            ]
            for request in cases:
                wire = (await raw(request))["error"]
                params = {k: v for k, v in request.items() if k != "action"}
                with pytest.raises(HotlineError) as caught:
                    await client.request(request["action"], params)
                err = caught.value
                assert (err.code, err.path, err.message, err.details) == (wire["code"], wire.get("path"), wire["message"], wire.get("details"))
            assert [c["action"] for c in cases] and err.code == "not_found" and err.path == "/job"

    asyncio.run(main())


def test_follow_through_three_cut_connections_delivers_every_byte_once(harness: dict[str, Any]) -> None:
    size = 20 * 1024 * 1024
    path = os.path.join(harness["work"], "follow.bin")

    async def main() -> None:
        proxy = await CuttingProxy(harness["url"], cut_at=[3_000_000, 9_000_000, 15_000_000]).start()
        direct = await connect(url=harness["url"], token=harness["token"])
        through = await connect(url=proxy.url, token=harness["token"], lazy=True, reconnect=ReconnectPolicy(attempts=5, delay_ms=50))
        try:
            run = await direct.shell(f"head -c {size} /dev/urandom | tee {path}")
            digest = hashlib.sha256()
            got = 0
            next_offset = 0
            events: list[str] = []
            async with through.job(run.job.id).follow() as follow:
                async for event in follow:
                    events.append(event["event"])
                    if event["event"] == "job.output":
                        assert event["offset"] == next_offset  # in order, no gap, no repeat
                        digest.update(event["bytes"])
                        got += len(event["bytes"])
                        next_offset = event["offset"] + len(event["bytes"])
                    elif event["event"] == "job.exit":
                        assert event["status"]["state"] == "succeeded"
                        assert event["next"] == size
            assert events[-1] == "job.exit"
            assert proxy.cuts == 3 and proxy.accepted >= 4
            assert got == size
            with open(path, "rb") as f:
                assert digest.hexdigest() == hashlib.sha256(f.read()).hexdigest()
            assert hashlib.sha256(await direct.job(run.job.id).output()).hexdigest() == digest.hexdigest()
        finally:
            await through.close()
            await direct.close()
            await proxy.close()

    asyncio.run(main())


def test_wait_and_cancel(harness: dict[str, Any]) -> None:
    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            run = await client.shell("sleep 60")
            running = await run.job.wait(timeout_ms=200)
            assert running["state"] == "running"
            await run.job.cancel(grace_ms=0)
            assert (await run.job.wait())["state"] == "cancelled"

    asyncio.run(main())


def test_the_sync_facade_runs_without_an_event_loop(harness: dict[str, Any]) -> None:
    with sync.connect(url=harness["url"], token=harness["token"]) as client:
        run = client.shell("printf 'one\\n'; printf 'two\\n'", wait=30_000)
        assert run.output == b"one\ntwo\n"
        assert client.request("jobs.status", {"job": run.job.id})["state"] == "succeeded"
        streamed = b"".join(e["bytes"] for e in run.job.follow() if e["event"] == "job.output")
        assert streamed == b"one\ntwo\n"
        assert run.job.wait()["exitCode"] == 0
        with pytest.raises(HotlineError) as caught:
            client.files.read(os.path.join(harness["work"], "missing"))
        assert caught.value.code == "not_found"


def test_terminal_open_starts_a_terminal_job_with_a_link(harness: dict[str, Any]) -> None:
    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            opened = await client.terminal.open(command="printf 'term-ready\\n'; sleep 60", cols=100, rows=30)
            assert opened["available"] is True, opened
            assert "#job=" in opened["webTerminalUrl"] and opened["job"]["kind"] == "terminal"
            job = client.job(opened["job"]["id"])
            seen = b""
            async with job.follow() as follow:
                async for event in follow:
                    if event["event"] == "job.output":
                        assert event["stream"] == "pty"
                        seen += event["bytes"]
                        if b"term-ready" in seen:
                            break
            await job.cancel(grace_ms=0)
            assert (await job.wait())["state"] == "cancelled"

    asyncio.run(main())


def test_a_jobs_usage_and_the_sandbox_metrics(harness: dict[str, Any]) -> None:
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\n"

    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            run = await client.shell(["python3", "-c", burn], wait=60_000)
            assert run.status["state"] == "succeeded"
            usage = run.status["usage"]  # final at the end: the CPU its exit added, exact
            assert usage["cpuMs"] >= 450 and usage["processes"] == 0 and usage["rssBytes"] == 0
            metrics = await client.metrics(limit=5)
            while not metrics["samples"]:  # a daemon that just started has taken none yet
                await asyncio.sleep(metrics["intervalMs"] / 1000)
                metrics = await client.metrics(limit=5)
            assert metrics["enabled"] is True and 0 < len(metrics["samples"]) <= 5
            last = metrics["samples"][-1]
            assert last["cpu"]["cores"] > 0 and last["memory"]["limitBytes"] >= last["memory"]["usedBytes"] > 0
            assert {d["name"] for d in last["disks"]} >= {"home", "state"}
            newer = await client.metrics(since_ms=last["at"])
            assert all(s["at"] > last["at"] for s in newer["samples"])

    asyncio.run(main())
    with sync.connect(url=harness["url"], token=harness["token"]) as client:
        assert client.metrics(limit=1)["enabled"] is True
