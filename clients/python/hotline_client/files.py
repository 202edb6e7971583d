"""`client.files`: exact bytes without a shell; large writes in chunks, reads through binary frames."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ._params import params as _params
from .errors import HotlineError
from .protocol import FilesEditParamsEditsItem, FilesEditResult, FilesListResult, FilesSearchResult, FilesWriteResult

if TYPE_CHECKING:
    from .client import HotlineClient

# files.read's largest slice.
READ_LIMIT = 4 * 1024 * 1024
# files.write chunks: 512 KiB of raw bytes keeps a base64 chunk well under the 1 MiB frame limit.
WRITE_CHUNK = 512 * 1024


@dataclass
class FileContent:
    """A whole file as read by `files.read`."""

    data: bytes
    size: int
    mtime: str
    sha256: str | None

    def text(self) -> str:
        return self.data.decode("utf-8")


class Files:
    """`client.files`: exact bytes without a shell (guide/65-filesystem.md)."""

    def __init__(self, client: HotlineClient) -> None:
        self._client = client

    async def read(self, path: str) -> FileContent:
        """The whole file, in slices whose bytes come raw in binary frames."""
        connection = await self._client._main()
        arrived: dict[int, memoryview] = {}
        waiting: dict[int, asyncio.Future[memoryview]] = {}

        def on_event(frame: dict[str, Any]) -> None:
            if frame.get("event") != "files.data":
                return
            offset: int = frame["offset"]
            future = waiting.pop(offset, None)
            if future is not None and not future.done():
                future.set_result(frame["bytes"])
            else:
                arrived[offset] = frame["bytes"]

        off = connection.on_event(on_event)
        pieces: list[memoryview] = []
        offset = 0
        try:
            while True:
                reply = await connection.request("files.read", {"path": path, "offset": offset, "limit": READ_LIMIT, "binary": True})
                start: int = reply["offset"]
                if reply["encoding"] == "binary":
                    if start in arrived:
                        data = arrived.pop(start)
                    else:
                        future: asyncio.Future[memoryview] = asyncio.get_running_loop().create_future()
                        waiting[start] = future

                        def dropped(reason: str, future: asyncio.Future[memoryview] = future) -> None:
                            if not future.done():
                                future.set_exception(HotlineError("unavailable", f"the connection closed ({reason}) while reading {path}"))

                        forget = connection.on_close(dropped)
                        data = await future
                        forget()
                else:
                    data = memoryview(base64.b64decode(reply["data"]) if reply["encoding"] == "base64" else reply["data"].encode("utf-8"))
                pieces.append(data)
                if reply["eof"]:
                    return FileContent(b"".join(pieces), reply["size"], reply["mtime"], reply.get("sha256"))
                offset = reply["next"]
        finally:
            off()

    async def write(
        self,
        path: str,
        data: bytes | str,
        *,
        mode: str | None = None,
        parents: bool | None = None,
        if_match: str | None = None,
    ) -> FilesWriteResult:
        """Replaces a file atomically; content over 512 KiB goes in chunks under one upload id."""
        first = _params(path=path, mode=mode, parents=parents, ifMatch=if_match)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if len(raw) <= WRITE_CHUNK:
            text = isinstance(data, str)
            body = data if isinstance(data, str) else base64.b64encode(raw).decode("ascii")
            return cast(FilesWriteResult, await self._client._send("files.write", {**first, "data": body, "encoding": "utf8" if text else "base64"}))
        connection = await self._client._main()  # an upload belongs to its connection
        chunk = base64.b64encode(raw[:WRITE_CHUNK]).decode("ascii")
        reply = await connection.request("files.write", {**first, "data": chunk, "encoding": "base64", "final": False})
        upload: str = reply["upload"]
        offset = WRITE_CHUNK
        while True:
            piece = raw[offset : offset + WRITE_CHUNK]
            last = offset + len(piece) >= len(raw)
            params: dict[str, Any] = {"path": path, "upload": upload, "offset": offset, "data": base64.b64encode(piece).decode("ascii"), "encoding": "base64"}
            if not last:
                params["final"] = False
            reply = await connection.request("files.write", params)
            if last:
                return cast(FilesWriteResult, reply)
            offset += len(piece)

    async def edit(self, path: str, edits: Sequence[FilesEditParamsEditsItem], *, if_match: str | None = None) -> FilesEditResult:
        """Exact search and replace: each `old` must occur `count` times (default 1), else nothing is written."""
        params = {"path": path, "edits": list(edits), **_params(ifMatch=if_match)}
        return cast(FilesEditResult, await self._client._send("files.edit", params))

    async def list(
        self,
        path: str,
        *,
        depth: int | None = None,
        glob: str | None = None,
        hidden: bool | None = None,
        gitignore: bool | None = None,
        limit: int | None = None,
    ) -> FilesListResult:
        params = _params(path=path, depth=depth, glob=glob, hidden=hidden, gitignore=gitignore, limit=limit)
        return cast(FilesListResult, await self._client._send("files.list", params))

    async def search(
        self, path: str, pattern: str, *, regex: bool | None = None, glob: str | None = None, max_results: int | None = None
    ) -> FilesSearchResult:
        params = _params(path=path, pattern=pattern, regex=regex, glob=glob, maxResults=max_results)
        return cast(FilesSearchResult, await self._client._send("files.search", params))
