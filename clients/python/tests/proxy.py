"""A TCP proxy in front of the daemon that cuts every connection it carries once the bytes it
forwarded to the client pass each threshold (the Python twin of test/helpers/cutting-proxy.ts)."""

from __future__ import annotations

import asyncio
from urllib.parse import urlparse


class CuttingProxy:
    def __init__(self, target: str, cut_at: list[int]) -> None:
        parsed = urlparse(target)
        self._host = parsed.hostname or "127.0.0.1"
        self._port = parsed.port or 80
        self._cut_at = sorted(cut_at)
        self.forwarded = 0
        self.cuts = 0
        self.accepted = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.AbstractServer | None = None
        self.url = ""

    async def start(self) -> CuttingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut(self) -> None:
        """Terminates every connection (RST-like abort, as a dropped network would)."""
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _serve(self, down_reader: asyncio.StreamReader, down_writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection(self._host, self._port)
        self._writers.update((down_writer, up_writer))

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, downstream: bool) -> None:
            try:
                while data := await reader.read(256 * 1024):
                    writer.write(data)
                    await writer.drain()
                    if downstream:
                        self.forwarded += len(data)
                        if self._cut_at and self.forwarded >= self._cut_at[0]:
                            self._cut_at.pop(0)
                            self.cuts += 1
                            self.cut()
                            return
            except (ConnectionError, OSError):
                pass
            finally:
                writer.transport.abort()
                self._writers.discard(writer)

        await asyncio.gather(pipe(down_reader, up_writer, False), pipe(up_reader, down_writer, True))
