"""The Python client's bench (bench/python.ts runs it): job.follow() of a finished job through
hotline_client against a plain `websockets` client reading the same bytes from the raw floor server
(bench/raw-ws-server.ts, 1 MiB binary frames), in interleaved pairs that alternate which goes
first. Prints {"a": [ms…], "b": [ms…]} (a: hotline_client, b: the floor).

    /usr/bin/python3 bench/python-follow.py DAEMON_URL TOKEN_FILE JOB RAW_URL BYTES PAIRS WARMUP
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clients" / "python"))

from hotline_client import HotlineClient, connect  # noqa: E402
from hotline_client._socket import Socket, open_socket  # noqa: E402


async def ours(client: HotlineClient, job: str, expect: int) -> None:
    got = 0
    async for event in client.job(job).follow():
        if event["event"] == "job.output":
            got += len(event["bytes"])
    if got != expect:
        raise RuntimeError(f"hotline_client follow got {got} of {expect} bytes")


async def floor(ws: Socket, expect: int) -> None:
    """What a plain websockets reader does: ask, then count the bytes of binary frames until `done`."""
    got = 0
    await ws.send(f"binary:{expect}")
    while True:
        message = await ws.recv()
        if isinstance(message, bytes):
            got += len(message)
        elif message == "done":
            break
    if got != expect:
        raise RuntimeError(f"raw floor got {got} of {expect} bytes")


async def main() -> None:
    url, token_file, job, raw_url = sys.argv[1:5]
    expect, pairs, warmup = (int(a) for a in sys.argv[5:8])
    client = await connect(url=url, token_file=token_file)
    # The same websockets settings as the client's own connections (no deflate, 32 MiB messages).
    raw = await open_socket(raw_url, None, {}, 10.0, None)
    samples: dict[str, list[float]] = {"a": [], "b": []}
    try:
        for i in range(warmup + pairs):
            runs = [("a", lambda: ours(client, job, expect)), ("b", lambda: floor(raw, expect))]
            for side, run in runs if i % 2 == 0 else runs[::-1]:
                start = time.perf_counter()
                await run()
                if i >= warmup:
                    samples[side].append((time.perf_counter() - start) * 1000)
    finally:
        await raw.close()
        await client.close()
    print(json.dumps(samples))


asyncio.run(main())
