"""One WebSocket to a daemon: requests matched to replies by id (many in flight), events handed to
listeners, reading paused on demand (a slow follower then makes the daemon read from disk)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

from ._socket import ConnectionClosed, Socket, closed_too_big, open_socket
from .discovery import Endpoint
from .errors import HotlineError
from .frames import parse_frame

EventListener = Callable[[dict[str, Any]], None]
CloseListener = Callable[[str], None]


class Connection:
    """When the socket closes every pending request fails with `unavailable`; a connection is never
    reopened — the client opens a new one."""

    def __init__(self, socket: Socket, url: str) -> None:
        self.url = url
        self.closed = False
        # Closed because the daemon sent a message over the client's size limit: a reconnect would meet it again.
        self.too_big = False
        self._socket = socket
        self._next_id = 1
        self._pending: dict[int, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self._event_listeners: list[EventListener] = []
        self._close_listeners: list[CloseListener] = []
        self._reading = asyncio.Event()
        self._reading.set()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, endpoint: Endpoint, headers: Mapping[str, str] = {}, timeout_s: float = 10.0) -> Connection:
        socket = await open_socket(endpoint.url, endpoint.token, headers, timeout_s, endpoint.daemon_file)
        return cls(socket, endpoint.url)

    async def request(self, action: str, params: Mapping[str, Any]) -> Any:
        """Sends one action; returns `result`, raises the daemon's error as a HotlineError."""
        reply = await self.exchange(action, params)
        if reply.get("ok") is True:
            return reply.get("result")
        raise HotlineError.from_wire(reply["error"])

    async def exchange(self, action: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Sends one action and returns its whole reply frame, an error reply too."""
        if self.closed:
            raise HotlineError("unavailable", f"the connection to {self.url} is closed; {action} was not sent")
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (action, future)
        try:
            await self._socket.send(json.dumps({**params, "id": request_id, "action": action}, separators=(",", ":")))
        except ConnectionClosed:
            pass  # the reader reports the close to every pending request, this one included
        return await future

    def on_event(self, listener: EventListener) -> Callable[[], None]:
        """Every event frame (output and file data with their `bytes`); returns the unsubscribe."""
        self._event_listeners.append(listener)
        return lambda: self._event_listeners.remove(listener) if listener in self._event_listeners else None

    def on_close(self, listener: CloseListener) -> Callable[[], None]:
        """Runs once when the socket closes, for whatever reason."""
        if self.closed:
            listener("already closed")
            return lambda: None
        self._close_listeners.append(listener)
        return lambda: self._close_listeners.remove(listener) if listener in self._close_listeners else None

    def pause(self) -> None:
        """Stops reading the socket (after the message being read)."""
        self._reading.clear()

    def resume(self) -> None:
        self._reading.set()

    async def close(self) -> None:
        """Closes with the WebSocket handshake and returns once the reader is done."""
        self._reading.set()
        if not self.closed:
            try:
                await self._socket.close(1000, "client closed")
            except Exception:  # noqa: BLE001 - a socket that is already gone is closed enough
                pass
        await asyncio.gather(self._reader, return_exceptions=True)

    async def _read(self) -> None:
        reason = "closed"
        try:
            while True:
                if not self._reading.is_set():
                    await self._reading.wait()
                message = await self._socket.recv()
                self._dispatch(parse_frame(message))
        except ConnectionClosed as err:
            self.too_big = closed_too_big(err)
            reason = "a message over the client's size limit (code 1009)" if self.too_big else f"code {getattr(err, 'code', None) or 1006}"
        except HotlineError as err:
            reason = err.message  # a daemon that sends garbage cannot be trusted with the rest
            await self._socket.close(1002, "malformed frame")
        except Exception as err:  # noqa: BLE001 - whatever broke the socket ends this connection
            reason = repr(err)
        finally:
            self._handle_close(reason)

    def _dispatch(self, frame: dict[str, Any]) -> None:
        if "event" in frame:
            for listener in list(self._event_listeners):
                listener(frame)
            return
        request_id = frame.get("id")
        pending = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if pending is not None and not pending[1].done():
            pending[1].set_result(frame)

    def _handle_close(self, reason: str) -> None:
        self.closed = True
        for action, future in self._pending.values():
            if not future.done():
                future.set_exception(
                    HotlineError("unavailable", f"the connection to {self.url} closed ({reason}) before the reply to {action}")
                )
        self._pending.clear()
        self._event_listeners.clear()
        listeners, self._close_listeners = self._close_listeners, []
        for listener in listeners:
            listener(reason)
