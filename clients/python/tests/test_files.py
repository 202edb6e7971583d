"""files.write in chunks under an upload id and files.read through binary frames, byte-exact."""

from __future__ import annotations

import asyncio
import hashlib
import os
from typing import Any

from hotline_client import connect
from hotline_client.files import WRITE_CHUNK


def test_large_write_goes_in_chunks_and_reads_back_byte_exact(harness: dict[str, Any]) -> None:
    data = os.urandom(3 * WRITE_CHUNK + 12345) + bytes(range(256))
    path = os.path.join(harness["work"], "upload", "big.bin")

    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            sent: list[dict[str, Any]] = []
            connection = await client._main()
            original = connection.request

            async def recording(action: str, params: Any) -> Any:
                sent.append({k: v for k, v in params.items() if k != "data"})
                return await original(action, params)

            connection.request = recording  # type: ignore[method-assign]
            written = await client.files.write(path, data, parents=True, mode="0600", if_match="absent")
            connection.request = original  # type: ignore[method-assign]
            assert written["sha256"] == hashlib.sha256(data).hexdigest() and written["size"] == len(data)
            # 3 whole chunks and a short last one: the first opens the upload, the others name it.
            assert len(sent) == 4 and sent[0]["final"] is False and "upload" not in sent[0]
            assert len({s["upload"] for s in sent[1:]}) == 1
            assert [s.get("offset") for s in sent[1:]] == [WRITE_CHUNK, 2 * WRITE_CHUNK, 3 * WRITE_CHUNK]
            assert [s.get("final") for s in sent[1:]] == [False, False, None]
            with open(path, "rb") as f:
                assert f.read() == data
            assert oct(os.stat(path).st_mode & 0o777) == "0o600"

            big = os.path.join(harness["work"], "read.bin")
            content = os.urandom(9 * 1024 * 1024 + 7)
            with open(big, "wb") as f:
                f.write(content)
            read = await client.files.read(big)
            assert read.data == content and read.size == len(content)
            assert read.sha256 == hashlib.sha256(content).hexdigest()

            small = await client.files.write(os.path.join(harness["work"], "note.txt"), "héllo\n")
            assert (await client.files.read(small["path"])).text() == "héllo\n"
            listing = await client.files.list(harness["work"], glob="*.txt")
            assert [e["name"] for e in listing["entries"]] == ["note.txt"]
            found = await client.files.search(harness["work"], "héllo", glob="*.txt")
            assert [m["path"] for m in found["matches"]] == [small["path"]]

    asyncio.run(main())
