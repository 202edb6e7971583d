"""One WebSocket message → a reply or an event; binary frames (jobs.follow and files.read with
`binary: true`) are a 4-byte big-endian header length, the JSON header, then the raw bytes. An
event's `bytes` is a memoryview: of the frame itself for a binary frame (slicing a `bytes` past its
header would copy each 1 MiB frame once more; as with the Node client's Buffer, the view is the
frame's bytes), of the decoded data for a JSON one."""

from __future__ import annotations

import base64
import json
from typing import Any, Literal, TypedDict, Union

from .errors import HotlineError
from .protocol import JobExitEvent, JobProgressEvent, JobStateEvent


class OutputChunk(TypedDict):
    """A `job.output` event with its bytes decoded (from a binary frame, or a text frame's data + encoding).
    `bytes` is a read-only memoryview (no copy of the frame): write or hash it as it is, `bytes(...)`
    or `.tobytes()` for a `bytes`, `str(event["bytes"], "utf-8")` for text."""

    event: Literal["job.output"]
    job: str
    stream: Literal["stdout", "stderr", "pty"]
    offset: int
    bytes: memoryview


class FileData(TypedDict):
    """The binary frame that follows a `files.read` reply with `encoding: "binary"`."""

    event: Literal["files.data"]
    path: str
    offset: int
    bytes: memoryview


FollowEvent = Union[OutputChunk, JobProgressEvent, JobStateEvent, JobExitEvent]
"""What a follower receives: output as bytes, every other job event exactly as the protocol defines it."""


def _malformed(what: str) -> HotlineError:
    return HotlineError("internal", f"the daemon sent a malformed frame: {what}")


def parse_binary(data: bytes) -> dict[str, Any]:
    if len(data) < 4:
        raise _malformed(f"binary frame of {len(data)} bytes")
    length = int.from_bytes(data[:4], "big")
    if 4 + length > len(data):
        raise _malformed(f"binary header of {length} bytes in a frame of {len(data)}")
    header = json.loads(data[4 : 4 + length])
    if not isinstance(header, dict):
        raise _malformed("a binary header that is not an object")
    header["bytes"] = memoryview(data)[4 + length :]
    return header


def parse_text(text: str) -> dict[str, Any]:
    frame = json.loads(text)
    if not isinstance(frame, dict):
        raise _malformed("a text frame that is not an object")
    if frame.get("event") == "job.output":
        data = frame.pop("data")
        encoding = frame.pop("encoding")
        frame["bytes"] = memoryview(base64.b64decode(data) if encoding == "base64" else data.encode("utf-8"))
    elif "event" not in frame and frame.get("ok") not in (True, False):
        raise _malformed("a text frame with neither `event` nor `ok`")
    return frame


def parse_frame(message: str | bytes) -> dict[str, Any]:
    """A reply (`ok`, `id`, `result` | `error`) or an event (`event`, with `bytes` for output and file data)."""
    try:
        return parse_binary(message) if isinstance(message, bytes) else parse_text(message)
    except HotlineError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise _malformed(str(err)) from err
