"""The README's example: run a command, stream its output if it did not finish within the wait."""

from __future__ import annotations

import asyncio
import sys

from hotline_client import connect


async def main() -> None:
    client = await connect()  # the local daemon (daemon.json + token); or connect(url=..., token=...)
    run = await client.shell("make test", cwd="/home/agent/src/project", wait=30_000)
    if run.output is None:
        async for event in run.job.follow():
            if event["event"] == "job.output":
                sys.stdout.buffer.write(event["bytes"])
    print((await run.job.wait())["state"], run.status["id"])
    status = await client.request("jobs.status", {"job": run.job.id})
    print(status["outputBytes"])
    await client.close()  # releases every socket


if __name__ == "__main__":
    asyncio.run(main())
