"""hotline_client: a typed Python client for the hotline daemon, the same client as Node's
`hotline/client`. Params and results are TypedDicts generated from the protocol's JSON Schemas
(hotline_client.protocol); errors are HotlineError with the wire's stable codes.

    import asyncio
    from hotline_client import connect

    async def main() -> None:
        async with await connect() as client:
            run = await client.shell("make test", wait=30_000)
            ...

For scripts and notebooks without an event loop: hotline_client.sync.
"""

from .client import HotlineClient, PrepareRun, ShellRun, connect
from .code import Code, CodeImage, CodeOutput, CodeRun, CodeRunResult, ContextStatus
from .connection import Connection
from .discovery import Directories, Endpoint, discover_daemon, hotline_directories, read_token_file
from .errors import HotlineError
from .files import FileContent
from .follow import FollowStream, ReconnectPolicy
from .frames import FileData, FollowEvent, OutputChunk
from .job import Job
from .protocol import ActionName, ErrorCode, JobStatus, WireError
from .session import Session, SessionRun

__all__ = [
    "ActionName",
    "Code",
    "CodeImage",
    "CodeOutput",
    "CodeRun",
    "CodeRunResult",
    "Connection",
    "ContextStatus",
    "Directories",
    "Endpoint",
    "ErrorCode",
    "FileContent",
    "FileData",
    "FollowEvent",
    "FollowStream",
    "HotlineClient",
    "HotlineError",
    "Job",
    "JobStatus",
    "OutputChunk",
    "PrepareRun",
    "ReconnectPolicy",
    "Session",
    "SessionRun",
    "ShellRun",
    "WireError",
    "connect",
    "discover_daemon",
    "hotline_directories",
    "read_token_file",
]

__version__ = "0.1.0"
