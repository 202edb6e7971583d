"""`client.code`: stateful Python and JavaScript contexts (guide section `code`)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast

from ._params import params as _params
from .job import MAX_WAIT_MS, Job
from .protocol import (
    CodeContextCreateResultContext,
    CodeContextListResult,
    CodeContextRestartResult,
    CodeRunResultResult,
    CodeRunResultResultOutputsItem,
    JobStatus,
)
from .protocol import CodeRunResult as CodeRunReply

if TYPE_CHECKING:
    from .client import HotlineClient

Language = Literal["python", "javascript"]
# The names the protocol's generator gives these shapes, under the names a caller reads.
CodeRunResult = CodeRunResultResult
CodeOutput = CodeRunResultResultOutputsItem
ContextStatus = CodeContextCreateResultContext

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")


@dataclass
class CodeRun:
    """What `code.run` returns: the job and its status, the run's result (None only when `wait`
    passed before the run ended: it goes on, `job.wait()`), and its stdout/stderr interleaved."""

    job: Job
    status: JobStatus
    result: CodeRunResult | None = None
    output: bytes | None = None


@dataclass
class CodeImage:
    """One image of a run, whether it came inline or as a file of the run."""

    mime: str
    data: bytes
    output: int
    width: int | None = None
    height: int | None = None


class Code:
    """`client.code`: `await client.code.run("x = 1")`, contexts, and the images of a run."""

    def __init__(self, client: HotlineClient) -> None:
        self._client = client

    async def run(
        self,
        code: str,
        *,
        context: str | None = None,
        language: Language | None = None,
        timeout_ms: int | None = None,
        key: str | None = None,
        wait: int | None = None,
    ) -> CodeRun:
        """Runs code in a context (the language's default one without `context`); waits for the
        run's end unless given `wait` (ms)."""
        params = _params(code=code, context=context, language=language, timeoutMs=timeout_ms, key=key)
        params["wait"] = MAX_WAIT_MS if wait is None else wait
        reply = cast(CodeRunReply, await self._client._send("code.run", params))
        job = self._client.job(reply["job"]["id"])
        result = reply.get("result")
        if result is not None:
            output = reply.get("output")
            data: bytes
            if output is not None and output["omittedBytes"] == 0:
                data = base64.b64decode(output["data"]) if output["encoding"] == "base64" else output["data"].encode("utf-8")
            else:
                data = await job.output()
            return CodeRun(job=job, status=reply["job"], result=result, output=data)
        if wait is not None:
            return CodeRun(job=job, status=reply["job"])
        status = await job.wait()
        result = cast("CodeRunResult | None", status.get("result"))
        return CodeRun(job=job, status=status, result=result, output=await job.output())

    async def create_context(
        self,
        language: Language,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        idle_timeout_ms: int | None = None,
        interpreter: str | None = None,
    ) -> ContextStatus:
        """A new context; returns once its interpreter is ready."""
        params = _params(
            language=language, cwd=cwd, env=dict(env) if env is not None else None, idleTimeoutMs=idle_timeout_ms, interpreter=interpreter
        )
        reply = await self._client._send("code.context.create", params)
        return cast(ContextStatus, reply["context"])

    async def list_contexts(self) -> CodeContextListResult:
        return cast(CodeContextListResult, await self._client._send("code.context.list", {}))

    async def restart_context(self, context: str) -> CodeContextRestartResult:
        """A fresh interpreter for the context; the reply lists the names that were lost."""
        return cast(CodeContextRestartResult, await self._client._send("code.context.restart", {"context": context}))

    async def remove_context(self, context: str) -> None:
        await self._client._send("code.context.remove", {"context": context})

    async def file(self, job: str, file: str) -> bytes:
        """A file a run kept (an output's `files`), read whole with code.file."""
        parts: list[bytes] = []
        offset = 0
        while True:
            page = await self._client._send("code.file", {"job": job, "file": file, "offset": offset})
            parts.append(base64.b64decode(page["data"]))
            if page["eof"]:
                return b"".join(parts)
            offset = page["next"]

    async def images(self, run: CodeRun) -> list[CodeImage]:
        """The images of a run's outputs, in order, read from the run's files where they were kept there."""
        images: list[CodeImage] = []
        outputs = run.result["outputs"] if run.result is not None else []
        for index, output in enumerate(outputs):
            for mime in _IMAGE_TYPES:
                inline = output["data"].get(mime)
                files = output.get("files", {})
                if isinstance(inline, str):
                    data = inline.encode("utf-8") if mime == "image/svg+xml" else base64.b64decode(inline)
                elif mime in files:
                    data = await self.file(run.job.id, files[mime]["file"])
                else:
                    continue
                size = output.get("metadata", {}).get(mime)
                width = size.get("width") if isinstance(size, dict) else None
                height = size.get("height") if isinstance(size, dict) else None
                images.append(CodeImage(mime=mime, data=data, output=index, width=width, height=height))
        return images
