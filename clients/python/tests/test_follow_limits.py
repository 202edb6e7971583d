"""A follow that meets a frame over the client's size limit fails at once (issue 33 #17), against a
hostile server on a real socket: it answers jobs.follow, then announces a 64 MiB frame and never
answers a close. Reconnecting cannot help (the same follow brings the same frame), and each
reconnect used to wait out the library's close timeouts: about two minutes in all."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from typing import Any

import pytest

from hotline_client import HotlineError, connect
from hotline_client._socket import MAX_MESSAGE_BYTES

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class HostileServer:
    """Speaks just enough WebSocket: the handshake, reading the client's frames, and its own frames."""

    def __init__(self) -> None:
        self.connections = 0
        self.url = ""
        self._server: asyncio.AbstractServer | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> HostileServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def close(self) -> None:
        for writer in self._writers:
            writer.transport.abort()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin1")
            key = next(line.split(":", 1)[1].strip() for line in head.split("\r\n") if line.lower().startswith("sec-websocket-key:"))
            accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
            writer.write(
                f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n".encode()
            )
            while True:
                request = json.loads(await self._read_frame(reader))
                if request.get("action") != "jobs.follow":
                    continue
                reply = json.dumps({"id": request["id"], "ok": True, "result": {"job": {"id": request["job"], "state": "running"}}})
                writer.write(bytes([0x81, 126]) + len(reply).to_bytes(2, "big") + reply.encode())
                # A binary frame of 64 MiB, announced; none of it follows. Then silence (no close answered).
                writer.write(bytes([0x82, 127]) + (2 * MAX_MESSAGE_BYTES).to_bytes(8, "big"))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, StopIteration):
            pass

    @staticmethod
    async def _read_frame(reader: asyncio.StreamReader) -> bytes:
        """One masked client frame's payload (a close frame's too: it is read and ignored by the caller)."""
        first, second = await reader.readexactly(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(await reader.readexactly(2), "big")
        elif length == 127:
            length = int.from_bytes(await reader.readexactly(8), "big")
        mask = await reader.readexactly(4)
        payload = await reader.readexactly(length)
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return data if first & 0x0F == 1 else b"{}"


def test_a_frame_over_the_limit_fails_the_follow_at_once_without_reconnecting() -> None:
    async def main() -> tuple[HotlineError, int]:
        server = await HostileServer().start()
        try:
            client = await connect(url=server.url, token="t0k", lazy=True)
            try:
                # A guard against the old behaviour hanging the suite, not a measure of the new one.
                with pytest.raises(HotlineError) as failed:
                    await asyncio.wait_for(_follow_all(client), timeout=90)
                return failed.value, server.connections
            finally:
                await client.close()
        finally:
            await server.close()

    error, connections = asyncio.run(main())
    assert error.code == "limit_exceeded", error
    assert "1009" in error.message or "limit" in error.message, error.message
    assert connections == 1, f"the follow reconnected {connections - 1} times to meet the same frame again"


async def _follow_all(client: Any) -> None:
    async for _event in client.job("j0000000000000hostile").follow():
        pass
