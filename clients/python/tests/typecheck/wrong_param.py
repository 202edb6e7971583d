"""Deliberately wrong: tests/test_typecheck.py expects mypy to report each marked line."""

from __future__ import annotations

from hotline_client import HotlineClient


async def wrong(client: HotlineClient) -> None:
    await client.request("jobs.status", {"job": 42})  # error: job is a str
    await client.request("shell", {"command": "true", "timeoutMs": "5000"})  # error: timeoutMs is an int
    await client.shell("make", wait="30s")  # error: wait is an int
    status = await client.request("jobs.wait", {"job": "j123456", "timeoutMs": 10})
    status["job"]["nosuchfield"]  # error: not a JobStatus key
    async for event in client.job("j123456").follow():
        if event["event"] == "job.output":
            event["bytes"].decode()  # error: a memoryview of the frame (str(view, "utf-8") decodes it)
