"""Code contexts through the Python client: state across runs, a figure as PNG bytes, an error
with its traceback, a context of its own, and the sync facade."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

from hotline_client import connect
from hotline_client.sync import connect as connect_sync


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_runs_keep_state_and_return_typed_results(harness: dict[str, Any]) -> None:
    async def main() -> None:
        async with await connect(url=harness["url"], token=harness["token"]) as client:
            first = await client.code.run("x = 41")
            assert first.result is not None and first.result["status"] == "ok"
            second = await client.code.run("print('adding')\nx + 1")
            assert second.result is not None
            assert second.result["outputs"] == [{"type": "result", "data": {"text/plain": "42"}}]
            assert second.output == b"adding\n"
            assert second.status["kind"] == "code" and second.status["state"] == "succeeded"

            plot = await client.code.run(
                "import matplotlib.pyplot as plt\nplt.figure(figsize=(3, 2), dpi=40)\nplt.plot([0, 1], [1, 0])\nNone"
            )
            images = await client.code.images(plot)
            assert [(i.mime, i.width, i.height) for i in images] == [("image/png", 120, 80)]
            assert png_size(images[0].data) == (120, 80)

            failed = await client.code.run("raise ValueError('boom')")
            assert failed.result is not None and failed.result["status"] == "error"
            error = failed.result.get("error")
            assert error is not None and error["name"] == "ValueError" and error["value"] == "boom"
            assert any("<cell" in line for line in error["traceback"])

            context = await client.code.create_context("javascript")
            run = await client.code.run("let a = 1; a + 1", context=context["id"])
            assert run.result is not None and run.result["outputs"][0]["data"]["text/plain"] == "2"
            listed = await client.code.list_contexts()
            assert context["id"] in [c["id"] for c in listed["contexts"]]
            restarted = await client.code.restart_context(context["id"])
            assert "a" in restarted["lost"] and restarted["context"]["generation"] == 2
            await client.code.remove_context(context["id"])

    asyncio.run(main())


def test_the_sync_facade_runs_code(harness: dict[str, Any]) -> None:
    with connect_sync(url=harness["url"], token=harness["token"]) as client:
        run = client.code.run("sum(range(10))", language="python")
        assert run.result is not None and run.result["outputs"][0]["data"]["text/plain"] == "45"
        assert run.job.status()["result"] == run.result
