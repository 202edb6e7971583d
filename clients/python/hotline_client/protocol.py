"""The protocol's types, generated from schemas/ by clients/python/scripts/generate_types.py: do not edit."""

from __future__ import annotations

from typing import Any, Literal, TypedDict, overload

PROTOCOL_VERSION = 1

ErrorCode = Literal["bad_json", "invalid_request", "unknown_action", "unauthorized", "forbidden", "not_found", "conflict", "limit_exceeded", "unavailable", "internal"]

ActionName = Literal["state.info", "state.guide", "state.catalog", "shell", "files.download", "files.extract", "files.run", "jobs.list", "jobs.status", "jobs.output", "jobs.follow", "jobs.unfollow", "jobs.wait", "jobs.input", "jobs.resize", "jobs.cancel", "tokens.create", "tokens.list", "tokens.revoke", "repos.add", "repos.list", "repos.snapshot", "repos.bundle", "tasks.create", "tasks.list", "tasks.commit", "tasks.run", "tasks.merge", "tasks.remove", "secrets.write", "prepare", "cache.list", "cache.prune", "files.read", "files.write", "files.edit", "files.list", "files.stat", "files.mkdir", "files.move", "files.remove", "files.search", "files.watch", "files.unwatch", "terminal.open", "console.open", "jobs.watch", "jobs.unwatch", "ssh.open", "ports.list", "ports.wait", "preview.open", "desktop.screenshot", "desktop.act", "browser.open", "desktop.open", "state.metrics", "session.open", "session.run", "session.status", "session.list", "session.close", "code.context.create", "code.run", "code.context.list", "code.context.restart", "code.context.remove", "code.file"]


class _WireErrorRequired(TypedDict):
    code: Literal["bad_json", "invalid_request", "unknown_action", "unauthorized", "forbidden", "not_found", "conflict", "limit_exceeded", "unavailable", "internal"]
    message: str


class WireError(_WireErrorRequired, total=False):
    path: str
    details: dict[str, Any]


class JobStatusProgress(TypedDict):
    phase: str
    done: float
    total: float | None
    unit: str
    message: str


class JobStatusProcessesListItem(TypedDict):
    pid: int
    command: str


class JobStatusProcesses(TypedDict):
    """jobs.status of a running process job: its live processes (all that carry its AGENT_JOB_ID), the first 20 by pid"""
    count: int
    list: list[JobStatusProcessesListItem]


class JobStatusUsage(TypedDict):
    """a process job's CPU and memory: every process carrying its AGENT_JOB_ID (setsid strays too); live while it runs, final once it ended"""
    cpuMs: int
    rssBytes: int
    peakRssBytes: int
    processes: int


class _JobStatusRequired(TypedDict):
    id: str
    kind: str
    title: str
    state: Literal["queued", "running", "succeeded", "failed", "cancelled", "timed_out", "lost"]
    createdAt: str
    outputBytes: int


class JobStatus(_JobStatusRequired, total=False):
    exitCode: int
    signal: str
    startedAt: str
    endedAt: str
    progress: JobStatusProgress
    omittedBytes: int
    error: WireError
    result: dict[str, Any]
    key: str
    cwd: str
    pid: int
    processes: JobStatusProcesses
    usage: JobStatusUsage


class NoParams(TypedDict):
    pass


class JobReply(TypedDict):
    job: JobStatus


class JobOutputEvent(TypedDict):
    event: Literal["job.output"]
    job: str
    stream: Literal["stdout", "stderr", "pty"]
    offset: int
    data: str
    encoding: Literal["utf8", "base64"]


class JobProgressEvent(TypedDict):
    event: Literal["job.progress"]
    job: str
    progress: JobStatusProgress


class _JobStateEventRequired(TypedDict):
    event: Literal["job.state"]
    job: str
    state: Literal["queued", "running", "succeeded", "failed", "cancelled", "timed_out", "lost"]


class JobStateEvent(_JobStateEventRequired, total=False):
    status: JobStatus


class _JobExitEventRequired(TypedDict):
    event: Literal["job.exit"]
    job: str
    status: JobStatus
    next: int


class JobExitEvent(_JobExitEventRequired, total=False):
    error: WireError


class JobCreatedEvent(TypedDict):
    event: Literal["job.created"]
    job: str
    status: JobStatus


class FsChangeEvent(TypedDict):
    event: Literal["fs.change"]
    watch: str
    path: str
    kind: Literal["create", "modify", "remove", "overflow"]


class JobOutputBinaryHeader(TypedDict):
    event: Literal["job.output"]
    job: str
    stream: Literal["stdout", "stderr", "pty"]
    offset: int


class FilesDataBinaryHeader(TypedDict):
    event: Literal["files.data"]
    path: str
    offset: int


class StateInfoResultDirectories(TypedDict):
    """Absolute paths; a directory may not exist yet until something is written there."""
    state: str
    config: str
    cache: str
    systemConfig: str
    workspaceRoot: str
    repos: str
    tasks: str
    jobs: str
    environments: str
    snapshots: str
    bundles: str


class StateInfoResultOutput(TypedDict):
    """job output kept on disk, against the budget"""
    budgetBytes: int
    usedBytes: int


class _StateInfoResultNixRequired(TypedDict):
    available: bool
    flakes: bool


class StateInfoResultNix(_StateInfoResultNixRequired, total=False):
    version: str
    reason: str


class StateInfoResultEventLoopWorstStall(TypedDict):
    busyMs: float
    cause: str
    at: str


class _StateInfoResultEventLoopRequired(TypedDict):
    since: str
    maxMs: float
    p99Ms: float
    stalls: int


class StateInfoResultEventLoop(_StateInfoResultEventLoopRequired, total=False):
    """how long the daemon kept every client waiting: its event-loop delay since `since`"""
    worstStall: StateInfoResultEventLoopWorstStall


class _StateInfoResultSshRequired(TypedDict):
    available: bool


class StateInfoResultSsh(_StateInfoResultSshRequired, total=False):
    """the SSH server (ssh.open): where it listens, or why it does not"""
    host: str
    port: int
    reason: str


class StateInfoResultDesktop1(TypedDict):
    available: Literal[True]
    display: str
    width: int
    height: int


class _StateInfoResultDesktop2Required(TypedDict):
    available: Literal[False]
    reason: str


class StateInfoResultDesktop2(_StateInfoResultDesktop2Required, total=False):
    display: str


class StateInfoResultActionsItem(TypedDict):
    name: str
    scope: str
    summary: str


class StateInfoResult(TypedDict):
    name: Literal["hotline"]
    version: str
    protocolVersion: int
    commit: str
    node: str
    system: str
    user: str
    pid: int
    startedAt: str
    uptimeMs: int
    directories: StateInfoResultDirectories
    jobs: dict[str, int]
    output: StateInfoResultOutput
    lastActivity: str
    idleMs: int
    nix: StateInfoResultNix
    eventLoop: StateInfoResultEventLoop
    ssh: StateInfoResultSsh
    desktop: StateInfoResultDesktop1 | StateInfoResultDesktop2
    scope: str
    actions: list[StateInfoResultActionsItem]


class StateGuideParams(TypedDict, total=False):
    section: str


class StateGuideResultSectionsItem(TypedDict):
    name: str
    title: str
    bytes: int
    actions: list[str]


class StateGuideResult(TypedDict):
    version: str
    section: str
    sha256: str
    text: str
    sections: list[StateGuideResultSectionsItem]


class _StateCatalogResultNixpkgsRequired(TypedDict):
    url: str


class StateCatalogResultNixpkgs(_StateCatalogResultNixpkgsRequired, total=False):
    rev: str
    narHash: str
    lastModified: int


class StateCatalogResult(TypedDict):
    system: str
    nixpkgs: StateCatalogResultNixpkgs
    inputs: list[dict[str, Any]]
    workspaces: list[dict[str, Any]]


class ShellParamsPty(TypedDict):
    cols: int
    rows: int


class _ShellParamsRequired(TypedDict):
    command: str | list[str]


class ShellParams(_ShellParamsRequired, total=False):
    cwd: str
    env: dict[str, str]
    timeoutMs: int
    stdin: str | bool
    pty: ShellParamsPty
    key: str
    wait: int


class ShellResultOutput(TypedDict):
    data: str
    encoding: Literal["utf8", "base64"]
    bytes: int
    omittedBytes: int


class _ShellResultRequired(TypedDict):
    job: JobStatus


class ShellResult(_ShellResultRequired, total=False):
    output: ShellResultOutput


class FilesDownloadParamsGithub(TypedDict):
    repo: str
    tag: str
    asset: str


class FilesDownloadParamsSha256sums(TypedDict, total=False):
    url: str
    asset: str
    name: str


class _FilesDownloadParamsRequired(TypedDict):
    dest: str


class FilesDownloadParams(_FilesDownloadParamsRequired, total=False):
    url: str
    github: FilesDownloadParamsGithub
    sha256: str
    sha256sums: FilesDownloadParamsSha256sums
    overwrite: bool
    parents: bool
    timeoutMs: int
    key: str
    wait: int


class _FilesExtractParamsRequired(TypedDict):
    archive: str
    dest: str


class FilesExtractParams(_FilesExtractParamsRequired, total=False):
    format: Literal["tar", "tar.gz", "tar.xz", "tar.zst", "zip"]
    strip: int
    parents: bool
    timeoutMs: int
    key: str
    wait: int


class _FilesRunParamsRequired(TypedDict):
    path: str


class FilesRunParams(_FilesRunParamsRequired, total=False):
    interpreter: Literal["bash", "sh", "python3"]
    args: list[str]
    cwd: str
    env: dict[str, str]
    timeoutMs: int
    stdin: str | bool
    key: str
    wait: int


class JobsListParams(TypedDict, total=False):
    state: Literal["queued", "running", "succeeded", "failed", "cancelled", "timed_out", "lost"] | list[Literal["queued", "running", "succeeded", "failed", "cancelled", "timed_out", "lost"]]
    kind: str
    limit: int
    before: str
    sort: Literal["newest", "cpu", "memory"]


class JobsListResult(TypedDict):
    jobs: list[JobStatus]
    more: bool


class JobsStatusParams(TypedDict):
    job: str


_JobsOutputParamsRequired = TypedDict("_JobsOutputParamsRequired", {"job": str})
_JobsOutputParamsOptional = TypedDict("_JobsOutputParamsOptional", {"from": int, "tail": int, "limit": int, "stream": Literal["stdout", "stderr", "pty"]}, total=False)


class JobsOutputParams(_JobsOutputParamsRequired, _JobsOutputParamsOptional):
    pass


_JobsOutputResultRequired = TypedDict("_JobsOutputResultRequired", {"data": str, "encoding": Literal["utf8", "base64"], "from": int, "next": int, "eof": bool})


class JobsOutputResult(_JobsOutputResultRequired):
    pass


_JobsFollowParamsRequired = TypedDict("_JobsFollowParamsRequired", {"job": str})
_JobsFollowParamsOptional = TypedDict("_JobsFollowParamsOptional", {"from": int, "stream": Literal["stdout", "stderr", "pty"], "binary": bool}, total=False)


class JobsFollowParams(_JobsFollowParamsRequired, _JobsFollowParamsOptional):
    pass


_JobsFollowResultRequired = TypedDict("_JobsFollowResultRequired", {"job": JobStatus, "from": int})


class JobsFollowResult(_JobsFollowResultRequired):
    pass


class JobsUnfollowResult(TypedDict):
    followed: bool


class JobsWaitParams(TypedDict):
    job: str
    timeoutMs: int


class JobsWaitResult(TypedDict):
    job: JobStatus
    timedOut: bool


class _JobsInputParamsRequired(TypedDict):
    job: str


class JobsInputParams(_JobsInputParamsRequired, total=False):
    data: str
    encoding: Literal["utf8", "base64"]
    eof: bool
    timeoutMs: int


class JobsInputResult(TypedDict):
    written: int


class JobsResizeParams(TypedDict):
    job: str
    cols: int
    rows: int


class JobsResizeResult(TypedDict):
    cols: int
    rows: int


class _JobsCancelParamsRequired(TypedDict):
    job: str


class JobsCancelParams(_JobsCancelParamsRequired, total=False):
    signal: Literal["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL", "SIGUSR1", "SIGUSR2"]
    graceMs: int
    wait: int


class _TokensCreateParamsRequired(TypedDict):
    scope: Literal["manage", "observe"]


class TokensCreateParams(_TokensCreateParamsRequired, total=False):
    ttlMs: int
    label: str


class TokensCreateResult(TypedDict):
    token: str
    scope: str
    expiresAt: str
    id: str


class _TokensListResultTokensItemRequired(TypedDict):
    id: str
    scope: Literal["manage", "observe"]
    createdAt: str


class TokensListResultTokensItem(_TokensListResultTokensItemRequired, total=False):
    expiresAt: str
    label: str
    use: Literal["ssh", "preview", "cdp"]
    port: int
    issuer: str


class TokensListResult(TypedDict):
    tokens: list[TokensListResultTokensItem]


class TokensRevokeParams(TypedDict):
    tokenId: str


class TokensRevokeResult(TypedDict):
    revoked: TokensListResultTokensItem


class ReposAddParams(TypedDict, total=False):
    repo: str
    url: str
    path: str
    lockTimeoutMs: int
    key: str
    wait: int


class ReposListResultReposItem(TypedDict):
    repo: str
    path: str
    branch: str | None
    commit: str | None
    origin: str | None


class ReposListResult(TypedDict):
    repos: list[ReposListResultReposItem]


class ReposSnapshotParams(TypedDict, total=False):
    repo: str
    ref: str
    key: str
    wait: int


class ReposBundleParams(TypedDict, total=False):
    repo: str
    lockTimeoutMs: int
    key: str
    wait: int


class _TasksCreateParamsRequired(TypedDict):
    task: str


class TasksCreateParams(_TasksCreateParamsRequired, total=False):
    repo: str
    base: str
    lockTimeoutMs: int


class TasksCreateResult(TypedDict):
    task: str
    repo: str
    branch: str
    base: str
    baseCommit: str
    createdAt: str
    path: str
    commit: str | None
    lockWaitMs: int


class TasksListParams(TypedDict, total=False):
    repo: str


class TasksListResultTasksItem(TypedDict):
    task: str
    repo: str
    branch: str
    base: str
    baseCommit: str
    createdAt: str
    path: str
    commit: str | None


class TasksListResult(TypedDict):
    tasks: list[TasksListResultTasksItem]


class _TasksCommitParamsRequired(TypedDict):
    task: str
    message: str


class TasksCommitParams(_TasksCommitParamsRequired, total=False):
    lockTimeoutMs: int


class _TasksCommitResultRequired(TypedDict):
    task: str
    branch: str
    committed: bool
    files: list[str]
    fileCount: int
    lockWaitMs: int


class TasksCommitResult(_TasksCommitResultRequired, total=False):
    commit: str


class _TasksRunParamsRequired(TypedDict):
    task: str
    command: str | list[str]


class TasksRunParams(_TasksRunParamsRequired, total=False):
    repo: str
    base: str
    message: str
    env: dict[str, str]
    timeoutMs: int
    stdin: str | bool
    lockTimeoutMs: int
    key: str
    wait: int


class _TasksMergeParamsRequired(TypedDict):
    task: str


class TasksMergeParams(_TasksMergeParamsRequired, total=False):
    into: str
    lockTimeoutMs: int


class TasksMergeResult(TypedDict):
    task: str
    branch: str
    into: str
    merged: bool
    commit: str
    lockWaitMs: int


class _TasksRemoveParamsRequired(TypedDict):
    task: str


class TasksRemoveParams(_TasksRemoveParamsRequired, total=False):
    force: bool
    lockTimeoutMs: int


class TasksRemoveResult(TypedDict):
    task: str
    repo: str
    branch: str
    branchDeleted: bool
    lockWaitMs: int


class _SecretsWriteParamsRequired(TypedDict):
    values: dict[str, str]


class SecretsWriteParams(_SecretsWriteParamsRequired, total=False):
    repo: str
    task: str
    lockTimeoutMs: int


class _SecretsWriteResultRequired(TypedDict):
    repo: str
    path: str
    names: list[str]
    lockWaitMs: int


class SecretsWriteResult(_SecretsWriteResultRequired, total=False):
    task: str


class _PrepareParamsRequired(TypedDict):
    workspace: str


class PrepareParams(_PrepareParamsRequired, total=False):
    packages: list[str]
    flake: str
    updateLock: bool
    key: str
    wait: int
    timeoutMs: int


class _PrepareResultEnvironmentRequired(TypedDict):
    workspace: str
    system: str
    cacheKey: str
    storePath: str
    variables: list[str]
    pathPrepend: list[str]
    hookRan: bool
    preparedAt: str


class PrepareResultEnvironment(_PrepareResultEnvironmentRequired, total=False):
    packages: list[str]
    flake: str
    nixpkgs: StateCatalogResultNixpkgs


_PrepareResultRestoredRequired = TypedDict("_PrepareResultRestoredRequired", {"from": str, "paths": int})


class PrepareResultRestored(_PrepareResultRestoredRequired):
    """set when the store had lost the environment's paths and they were restored from the binary cache instead of built"""


class _PrepareResultRequired(TypedDict):
    ready: bool


class PrepareResult(_PrepareResultRequired, total=False):
    environment: PrepareResultEnvironment
    restored: PrepareResultRestored
    job: JobStatus


class _CacheListResultEntriesItemPublicationRequired(TypedDict):
    published: bool
    to: str
    signed: bool
    paths: int
    at: str


class CacheListResultEntriesItemPublication(_CacheListResultEntriesItemPublicationRequired, total=False):
    reason: str


class _CacheListResultEntriesItemRequired(TypedDict):
    cacheKey: str
    system: str
    storePath: str
    valid: bool
    closureBytes: int | None
    workspaces: list[str]
    createdAt: str
    lastUsedAt: str


class CacheListResultEntriesItem(_CacheListResultEntriesItemRequired, total=False):
    packages: list[str]
    flake: str
    publication: CacheListResultEntriesItemPublication


class CacheListResult(TypedDict):
    entries: list[CacheListResultEntriesItem]


class CachePruneParams(TypedDict, total=False):
    olderThanMs: int
    keep: int


class CachePruneResultRemovedItem(TypedDict):
    cacheKey: str
    system: str
    lastUsedAt: str


class CachePruneResult(TypedDict):
    removed: list[CachePruneResultRemovedItem]
    kept: int


class _FilesReadParamsRequired(TypedDict):
    path: str


class FilesReadParams(_FilesReadParamsRequired, total=False):
    offset: int
    limit: int
    encoding: Literal["utf8", "base64"]
    binary: bool
    sha256: bool


class _FilesReadResultRequired(TypedDict):
    data: str
    encoding: Literal["utf8", "base64"] | Literal["binary"]
    size: int
    mtime: str
    offset: int
    next: int
    eof: bool


class FilesReadResult(_FilesReadResultRequired, total=False):
    sha256: str


class _FilesWriteParamsRequired(TypedDict):
    path: str
    data: str


class FilesWriteParams(_FilesWriteParamsRequired, total=False):
    encoding: Literal["utf8", "base64"]
    mode: str
    parents: bool
    ifMatch: str | Literal["absent"]
    upload: str
    offset: int
    final: bool


class _FilesWriteResultRequired(TypedDict):
    path: str
    done: bool
    received: int


class FilesWriteResult(_FilesWriteResultRequired, total=False):
    upload: str
    size: int
    sha256: str
    mtime: str


class _FilesEditParamsEditsItemRequired(TypedDict):
    old: str
    new: str


class FilesEditParamsEditsItem(_FilesEditParamsEditsItemRequired, total=False):
    count: int


class _FilesEditParamsRequired(TypedDict):
    path: str
    edits: list[FilesEditParamsEditsItem]


class FilesEditParams(_FilesEditParamsRequired, total=False):
    ifMatch: str


class FilesEditResult(TypedDict):
    path: str
    replacements: int
    size: int
    sha256: str
    mtime: str


class _FilesListParamsRequired(TypedDict):
    path: str


class FilesListParams(_FilesListParamsRequired, total=False):
    depth: int
    glob: str
    hidden: bool
    gitignore: bool
    limit: int


class _FilesListResultEntriesItemRequired(TypedDict):
    name: str
    path: str
    type: Literal["file", "directory", "symlink", "fifo", "socket", "device", "other"]
    size: int
    mode: str
    mtime: str


class FilesListResultEntriesItem(_FilesListResultEntriesItemRequired, total=False):
    target: str


class FilesListResult(TypedDict):
    entries: list[FilesListResultEntriesItem]
    more: bool


class FilesStatParams(TypedDict):
    path: str


class _FilesMkdirParamsRequired(TypedDict):
    path: str


class FilesMkdirParams(_FilesMkdirParamsRequired, total=False):
    parents: bool
    mode: str


class FilesMkdirResult(TypedDict):
    path: str
    created: bool


_FilesMoveParamsRequired = TypedDict("_FilesMoveParamsRequired", {"from": str, "to": str})
_FilesMoveParamsOptional = TypedDict("_FilesMoveParamsOptional", {"overwrite": bool}, total=False)


class FilesMoveParams(_FilesMoveParamsRequired, _FilesMoveParamsOptional):
    pass


_FilesMoveResultRequired = TypedDict("_FilesMoveResultRequired", {"from": str, "to": str})


class FilesMoveResult(_FilesMoveResultRequired):
    pass


class _FilesRemoveParamsRequired(TypedDict):
    path: str


class FilesRemoveParams(_FilesRemoveParamsRequired, total=False):
    recursive: bool


class FilesRemoveResult(TypedDict):
    path: str
    type: Literal["file", "directory", "symlink", "fifo", "socket", "device", "other"]


class _FilesSearchParamsRequired(TypedDict):
    path: str
    pattern: str


class FilesSearchParams(_FilesSearchParamsRequired, total=False):
    regex: bool
    glob: str
    maxResults: int


class FilesSearchResultMatchesItem(TypedDict):
    path: str
    line: int
    column: int
    text: str


class FilesSearchResult(TypedDict):
    matches: list[FilesSearchResultMatchesItem]
    more: bool
    timedOut: bool


class FilesWatchResult(TypedDict):
    watch: str
    path: str


class FilesUnwatchParams(TypedDict):
    watch: str


class FilesUnwatchResult(TypedDict):
    watched: bool


class TerminalOpenParams(TypedDict, total=False):
    job: str
    cwd: str
    command: str
    cols: int
    rows: int
    ttlMs: int
    scope: Literal["manage", "observe"]


class _TerminalOpenResult1Required(TypedDict):
    available: Literal[True]
    expiresAt: str
    scope: Literal["manage", "observe"]
    job: JobStatus


class TerminalOpenResult1(_TerminalOpenResult1Required, total=False):
    webTerminalUrl: str
    webTerminalUnavailable: str
    webTerminalExpiresAt: str
    tokenId: str
    sshCommand: str
    sshHost: str
    sshPort: int
    sshUser: str
    sshKnownHosts: str
    sshHostKeyFingerprint: str
    sshTokenId: str
    sshExpiresAt: str
    sshUnavailable: str


class TerminalOpenResult2(TypedDict):
    available: Literal[False]
    reason: str


class ConsoleOpenParams(TypedDict, total=False):
    ttlMs: int
    scope: Literal["manage", "observe"]


class ConsoleOpenResult1(TypedDict):
    available: Literal[True]
    consoleUrl: str
    expiresAt: str
    tokenId: str
    scope: Literal["manage", "observe"]


class JobsWatchParams(TypedDict, total=False):
    limit: int


class JobsUnwatchResult(TypedDict):
    watching: bool


class SshOpenParams(TypedDict, total=False):
    ttlMs: int


class SshOpenResult1(TypedDict):
    available: Literal[True]
    sshCommand: str
    sshHost: str
    sshPort: int
    sshUser: str
    sshKnownHosts: str
    sshHostKeyFingerprint: str
    expiresAt: str
    tokenId: str


class _PortsListResultPortsItemRequired(TypedDict):
    port: int
    address: str
    family: Literal["ipv4", "ipv6"]


class PortsListResultPortsItem(_PortsListResultPortsItemRequired, total=False):
    pid: int
    command: str
    job: str
    foreignJob: Literal[True]


class PortsListResult(TypedDict):
    ports: list[PortsListResultPortsItem]


class _PortsWaitParamsRequired(TypedDict):
    port: int


class PortsWaitParams(_PortsWaitParamsRequired, total=False):
    timeoutMs: int


class PortsWaitResult(TypedDict):
    listening: bool
    listeners: list[PortsListResultPortsItem]


class _PreviewOpenParamsRequired(TypedDict):
    port: int


class PreviewOpenParams(_PreviewOpenParamsRequired, total=False):
    ttlMs: int
    path: str
    waitMs: int


class PreviewOpenResult1(TypedDict):
    available: Literal[True]
    url: str
    expiresAt: str
    tokenId: str
    port: int
    listening: bool


class DesktopScreenshotParamsRegion(TypedDict):
    """a part of the screen, in screen pixels"""
    x: int
    y: int
    width: int
    height: int


class DesktopScreenshotParams(TypedDict, total=False):
    maxWidth: int
    maxHeight: int
    format: Literal["png", "jpeg"]
    quality: int
    region: DesktopScreenshotParamsRegion
    binary: bool


class DesktopScreenshotResultScreen(TypedDict):
    width: int
    height: int


class DesktopScreenshotResultRegion(TypedDict):
    x: int
    y: int
    width: int
    height: int


class DesktopScreenshotResult(TypedDict):
    format: Literal["png", "jpeg"]
    width: int
    height: int
    scale: float
    screen: DesktopScreenshotResultScreen
    region: DesktopScreenshotResultRegion
    bytes: int
    data: str


class DesktopActParamsScaledTo(TypedDict):
    width: int
    height: int


class DesktopActParamsScreenshot(TypedDict, total=False):
    """a screenshot after the step, in the reply"""
    maxWidth: int
    maxHeight: int
    format: Literal["png", "jpeg"]
    quality: int


class _DesktopActParamsRequired(TypedDict):
    do: Literal["mouse_move", "left_click", "right_click", "middle_click", "double_click", "triple_click", "left_click_drag", "left_mouse_down", "left_mouse_up", "scroll", "key", "hold_key", "type", "cursor_position", "wait"]


class DesktopActParams(_DesktopActParamsRequired, total=False):
    coordinate: list[Any]
    startCoordinate: list[Any]
    text: str
    scrollDirection: Literal["up", "down", "left", "right"]
    scrollAmount: int
    duration: float
    scaledTo: DesktopActParamsScaledTo
    screenshot: DesktopActParamsScreenshot


class _DesktopActResultRequired(TypedDict):
    done: str


class DesktopActResult(_DesktopActResultRequired, total=False):
    coordinate: list[Any]
    screenshot: DesktopScreenshotResult


class BrowserOpenParams(TypedDict, total=False):
    url: str
    ttlMs: int


class BrowserOpenResultPagesItem(TypedDict):
    url: str
    title: str


class BrowserOpenResult(TypedDict):
    cdpUrl: str
    expiresAt: str
    tokenId: str
    pid: int
    pages: list[BrowserOpenResultPagesItem]


class DesktopOpenResult1(TypedDict):
    available: Literal[True]
    desktopUrl: str
    expiresAt: str
    tokenId: str
    scope: Literal["manage", "observe"]


class StateMetricsParams(TypedDict, total=False):
    sinceMs: int
    limit: int


class StateMetricsResultSources(TypedDict):
    """where CPU and memory are read: a cgroup's files or the machine's /proc"""
    cpu: str
    memory: str


class StateMetricsResultSamplesItemCpu(TypedDict):
    usedCores: float
    cores: float


class StateMetricsResultSamplesItemMemory(TypedDict):
    usedBytes: int
    cacheBytes: int
    limitBytes: int


class StateMetricsResultSamplesItemDaemon(TypedDict):
    rssBytes: int
    cpuCores: float


class StateMetricsResultSamplesItemDisksItem(TypedDict):
    name: Literal["home", "state", "nix"]
    path: str
    usedBytes: int
    freeBytes: int


class StateMetricsResultSamplesItemJobs(TypedDict):
    """the running process jobs together (their usage): cores used since the previous sample, resident memory"""
    cpuCores: float
    rssBytes: int


class StateMetricsResultSamplesItemOutput(TypedDict):
    """job output: written in the interval, kept on disk in all"""
    writtenBytes: int
    keptBytes: int


class StateMetricsResultSamplesItem(TypedDict):
    at: int
    cpu: StateMetricsResultSamplesItemCpu
    memory: StateMetricsResultSamplesItemMemory
    daemon: StateMetricsResultSamplesItemDaemon
    disks: list[StateMetricsResultSamplesItemDisksItem]
    processes: int
    connections: int
    runningJobs: int
    jobs: StateMetricsResultSamplesItemJobs
    output: StateMetricsResultSamplesItemOutput


class StateMetricsResult(TypedDict):
    intervalMs: int
    windowMs: int
    enabled: bool
    sources: StateMetricsResultSources
    samples: list[StateMetricsResultSamplesItem]
    more: bool


class SessionOpenParams(TypedDict, total=False):
    cwd: str
    env: dict[str, str]
    inputWaitMs: int
    idleTimeoutMs: int
    resume: str


class _SessionOpenResultSessionEndedRequired(TypedDict):
    reason: str


class SessionOpenResultSessionEnded(_SessionOpenResultSessionEndedRequired, total=False):
    """why an exited or lost session ended"""
    exitCode: int


class _SessionOpenResultSessionRequired(TypedDict):
    id: str
    state: Literal["idle", "running", "awaiting_input", "exited", "lost"]
    cwd: str
    createdAt: str


class SessionOpenResultSession(_SessionOpenResultSessionRequired, total=False):
    job: str
    shellJob: str
    pid: int
    generation: int
    inputWaitMs: int
    idleTimeoutMs: int
    ended: SessionOpenResultSessionEnded
    processes: JobStatusProcesses


class SessionOpenResultResumed(TypedDict):
    cwd: str
    lost: list[str]


class _SessionOpenResultRequired(TypedDict):
    session: SessionOpenResultSession


class SessionOpenResult(_SessionOpenResultRequired, total=False):
    resumed: SessionOpenResultResumed


class _SessionRunParamsRequired(TypedDict):
    session: str
    command: str


class SessionRunParams(_SessionRunParamsRequired, total=False):
    timeoutMs: int
    key: str
    wait: int


class _SessionRunResultJobRequired(TypedDict):
    id: str
    kind: str
    title: str
    state: Literal["queued", "running", "succeeded", "failed", "cancelled", "timed_out", "lost"]
    createdAt: str
    outputBytes: int


class SessionRunResultJob(_SessionRunResultJobRequired, total=False):
    exitCode: int
    signal: str
    startedAt: str
    endedAt: str
    progress: JobStatusProgress
    omittedBytes: int
    error: WireError
    result: dict[str, Any]
    key: str
    cwd: str
    pid: int
    processes: JobStatusProcesses
    usage: JobStatusUsage
    session: str
    awaitingInput: Literal[True]
    lastLine: str
    shellReplaced: Literal[True]


class _SessionRunResultRequired(TypedDict):
    job: SessionRunResultJob


class SessionRunResult(_SessionRunResultRequired, total=False):
    output: ShellResultOutput


class SessionStatusParams(TypedDict):
    session: str


class SessionStatusResult(TypedDict):
    session: SessionOpenResultSession


class SessionListResult(TypedDict):
    sessions: list[SessionOpenResultSession]


class _CodeContextCreateParamsRequired(TypedDict):
    language: Literal["python", "javascript"]


class CodeContextCreateParams(_CodeContextCreateParamsRequired, total=False):
    cwd: str
    env: dict[str, str]
    idleTimeoutMs: int
    interpreter: str


class CodeContextCreateResultContextStopped(TypedDict):
    """why a stopped context's interpreter ended"""
    reason: str


class _CodeContextCreateResultContextRequired(TypedDict):
    id: str
    language: Literal["python", "javascript"]
    cwd: str
    generation: int
    state: Literal["starting", "idle", "busy", "restarting", "stopped"]
    executionCount: int
    idleTimeoutMs: int
    createdAt: str


class CodeContextCreateResultContext(_CodeContextCreateResultContextRequired, total=False):
    default: Literal[True]
    interpreter: str
    version: str
    pid: int
    job: str
    hostJob: str
    names: list[str]
    namesTotal: int
    memoryBytes: int
    lastRunAt: str
    stopped: CodeContextCreateResultContextStopped


class CodeContextCreateResult(TypedDict):
    context: CodeContextCreateResultContext


class _CodeRunParamsRequired(TypedDict):
    code: str


class CodeRunParams(_CodeRunParamsRequired, total=False):
    context: str
    language: Literal["python", "javascript"]
    timeoutMs: int
    key: str
    wait: int


class CodeRunResultResultOutputsItemFilesValue(TypedDict):
    file: str
    bytes: int


class _CodeRunResultResultOutputsItemRequired(TypedDict):
    type: Literal["result", "display"]
    data: dict[str, Any]


class CodeRunResultResultOutputsItem(_CodeRunResultResultOutputsItemRequired, total=False):
    files: dict[str, CodeRunResultResultOutputsItemFilesValue]
    metadata: dict[str, Any]


class CodeRunResultResultError(TypedDict):
    name: str
    value: str
    traceback: list[str]


class CodeRunResultResultOmittedItem(TypedDict):
    mime: str
    bytes: int
    why: str


class _CodeRunResultResultRequired(TypedDict):
    status: Literal["ok", "error", "interrupted", "timed_out"]
    outputs: list[CodeRunResultResultOutputsItem]
    executionCount: int
    context: str
    language: Literal["python", "javascript"]
    generation: int


class CodeRunResultResult(_CodeRunResultResultRequired, total=False):
    error: CodeRunResultResultError
    contextRestarted: Literal[True]
    restartReason: str
    lost: list[str]
    lostTotal: int
    omitted: list[CodeRunResultResultOmittedItem]


class _CodeRunResultRequired(TypedDict):
    job: JobStatus


class CodeRunResult(_CodeRunResultRequired, total=False):
    result: CodeRunResultResult
    output: ShellResultOutput


class CodeContextListResultBudget(TypedDict):
    open: int
    maxContexts: int
    memoryBytes: int
    maxMemoryBytes: int


class CodeContextListResult(TypedDict):
    contexts: list[CodeContextCreateResultContext]
    budget: CodeContextListResultBudget


class CodeContextRestartParams(TypedDict):
    context: str


class _CodeContextRestartResultRequired(TypedDict):
    context: CodeContextCreateResultContext
    lost: list[str]


class CodeContextRestartResult(_CodeContextRestartResultRequired, total=False):
    lostTotal: int


class CodeContextRemoveResult(TypedDict):
    removed: str


class _CodeFileParamsRequired(TypedDict):
    job: str
    file: str


class CodeFileParams(_CodeFileParamsRequired, total=False):
    offset: int
    limit: int


class CodeFileResult(TypedDict):
    data: str
    encoding: Literal["base64"]
    size: int
    offset: int
    next: int
    eof: bool


StateInfoParams = NoParams
StateCatalogParams = NoParams
FilesDownloadResult = JobReply
FilesExtractResult = JobReply
FilesRunResult = ShellResult
JobsStatusResult = JobStatus
JobsUnfollowParams = JobsStatusParams
JobsCancelResult = JobStatus
TokensListParams = NoParams
ReposAddResult = JobReply
ReposListParams = NoParams
ReposSnapshotResult = JobReply
ReposBundleResult = JobReply
TasksRunResult = ShellResult
CacheListParams = NoParams
FilesStatResult = FilesListResultEntriesItem
FilesWatchParams = FilesRemoveParams
TerminalOpenResult = TerminalOpenResult1 | TerminalOpenResult2
ConsoleOpenResult = ConsoleOpenResult1 | TerminalOpenResult2
JobsWatchResult = JobsListResult
JobsUnwatchParams = NoParams
SshOpenResult = SshOpenResult1 | TerminalOpenResult2
PortsListParams = NoParams
PreviewOpenResult = PreviewOpenResult1 | TerminalOpenResult2
DesktopOpenParams = ConsoleOpenParams
DesktopOpenResult = DesktopOpenResult1 | TerminalOpenResult2
SessionListParams = NoParams
SessionCloseParams = SessionStatusParams
SessionCloseResult = SessionStatusResult
CodeContextListParams = NoParams
CodeContextRemoveParams = CodeContextRestartParams


class ActionRequests:
    """Typed `request` overloads: every action's params and result."""

    @overload
    async def request(self, action: Literal["state.info"], params: StateInfoParams | None = None) -> StateInfoResult: ...

    @overload
    async def request(self, action: Literal["state.guide"], params: StateGuideParams | None = None) -> StateGuideResult: ...

    @overload
    async def request(self, action: Literal["state.catalog"], params: StateCatalogParams | None = None) -> StateCatalogResult: ...

    @overload
    async def request(self, action: Literal["shell"], params: ShellParams) -> ShellResult: ...

    @overload
    async def request(self, action: Literal["files.download"], params: FilesDownloadParams) -> FilesDownloadResult: ...

    @overload
    async def request(self, action: Literal["files.extract"], params: FilesExtractParams) -> FilesExtractResult: ...

    @overload
    async def request(self, action: Literal["files.run"], params: FilesRunParams) -> FilesRunResult: ...

    @overload
    async def request(self, action: Literal["jobs.list"], params: JobsListParams | None = None) -> JobsListResult: ...

    @overload
    async def request(self, action: Literal["jobs.status"], params: JobsStatusParams) -> JobsStatusResult: ...

    @overload
    async def request(self, action: Literal["jobs.output"], params: JobsOutputParams) -> JobsOutputResult: ...

    @overload
    async def request(self, action: Literal["jobs.follow"], params: JobsFollowParams) -> JobsFollowResult: ...

    @overload
    async def request(self, action: Literal["jobs.unfollow"], params: JobsUnfollowParams) -> JobsUnfollowResult: ...

    @overload
    async def request(self, action: Literal["jobs.wait"], params: JobsWaitParams) -> JobsWaitResult: ...

    @overload
    async def request(self, action: Literal["jobs.input"], params: JobsInputParams) -> JobsInputResult: ...

    @overload
    async def request(self, action: Literal["jobs.resize"], params: JobsResizeParams) -> JobsResizeResult: ...

    @overload
    async def request(self, action: Literal["jobs.cancel"], params: JobsCancelParams) -> JobsCancelResult: ...

    @overload
    async def request(self, action: Literal["tokens.create"], params: TokensCreateParams) -> TokensCreateResult: ...

    @overload
    async def request(self, action: Literal["tokens.list"], params: TokensListParams | None = None) -> TokensListResult: ...

    @overload
    async def request(self, action: Literal["tokens.revoke"], params: TokensRevokeParams) -> TokensRevokeResult: ...

    @overload
    async def request(self, action: Literal["repos.add"], params: ReposAddParams | None = None) -> ReposAddResult: ...

    @overload
    async def request(self, action: Literal["repos.list"], params: ReposListParams | None = None) -> ReposListResult: ...

    @overload
    async def request(self, action: Literal["repos.snapshot"], params: ReposSnapshotParams | None = None) -> ReposSnapshotResult: ...

    @overload
    async def request(self, action: Literal["repos.bundle"], params: ReposBundleParams | None = None) -> ReposBundleResult: ...

    @overload
    async def request(self, action: Literal["tasks.create"], params: TasksCreateParams) -> TasksCreateResult: ...

    @overload
    async def request(self, action: Literal["tasks.list"], params: TasksListParams | None = None) -> TasksListResult: ...

    @overload
    async def request(self, action: Literal["tasks.commit"], params: TasksCommitParams) -> TasksCommitResult: ...

    @overload
    async def request(self, action: Literal["tasks.run"], params: TasksRunParams) -> TasksRunResult: ...

    @overload
    async def request(self, action: Literal["tasks.merge"], params: TasksMergeParams) -> TasksMergeResult: ...

    @overload
    async def request(self, action: Literal["tasks.remove"], params: TasksRemoveParams) -> TasksRemoveResult: ...

    @overload
    async def request(self, action: Literal["secrets.write"], params: SecretsWriteParams) -> SecretsWriteResult: ...

    @overload
    async def request(self, action: Literal["prepare"], params: PrepareParams) -> PrepareResult: ...

    @overload
    async def request(self, action: Literal["cache.list"], params: CacheListParams | None = None) -> CacheListResult: ...

    @overload
    async def request(self, action: Literal["cache.prune"], params: CachePruneParams | None = None) -> CachePruneResult: ...

    @overload
    async def request(self, action: Literal["files.read"], params: FilesReadParams) -> FilesReadResult: ...

    @overload
    async def request(self, action: Literal["files.write"], params: FilesWriteParams) -> FilesWriteResult: ...

    @overload
    async def request(self, action: Literal["files.edit"], params: FilesEditParams) -> FilesEditResult: ...

    @overload
    async def request(self, action: Literal["files.list"], params: FilesListParams) -> FilesListResult: ...

    @overload
    async def request(self, action: Literal["files.stat"], params: FilesStatParams) -> FilesStatResult: ...

    @overload
    async def request(self, action: Literal["files.mkdir"], params: FilesMkdirParams) -> FilesMkdirResult: ...

    @overload
    async def request(self, action: Literal["files.move"], params: FilesMoveParams) -> FilesMoveResult: ...

    @overload
    async def request(self, action: Literal["files.remove"], params: FilesRemoveParams) -> FilesRemoveResult: ...

    @overload
    async def request(self, action: Literal["files.search"], params: FilesSearchParams) -> FilesSearchResult: ...

    @overload
    async def request(self, action: Literal["files.watch"], params: FilesWatchParams) -> FilesWatchResult: ...

    @overload
    async def request(self, action: Literal["files.unwatch"], params: FilesUnwatchParams) -> FilesUnwatchResult: ...

    @overload
    async def request(self, action: Literal["terminal.open"], params: TerminalOpenParams | None = None) -> TerminalOpenResult: ...

    @overload
    async def request(self, action: Literal["console.open"], params: ConsoleOpenParams | None = None) -> ConsoleOpenResult: ...

    @overload
    async def request(self, action: Literal["jobs.watch"], params: JobsWatchParams | None = None) -> JobsWatchResult: ...

    @overload
    async def request(self, action: Literal["jobs.unwatch"], params: JobsUnwatchParams | None = None) -> JobsUnwatchResult: ...

    @overload
    async def request(self, action: Literal["ssh.open"], params: SshOpenParams | None = None) -> SshOpenResult: ...

    @overload
    async def request(self, action: Literal["ports.list"], params: PortsListParams | None = None) -> PortsListResult: ...

    @overload
    async def request(self, action: Literal["ports.wait"], params: PortsWaitParams) -> PortsWaitResult: ...

    @overload
    async def request(self, action: Literal["preview.open"], params: PreviewOpenParams) -> PreviewOpenResult: ...

    @overload
    async def request(self, action: Literal["desktop.screenshot"], params: DesktopScreenshotParams | None = None) -> DesktopScreenshotResult: ...

    @overload
    async def request(self, action: Literal["desktop.act"], params: DesktopActParams) -> DesktopActResult: ...

    @overload
    async def request(self, action: Literal["browser.open"], params: BrowserOpenParams | None = None) -> BrowserOpenResult: ...

    @overload
    async def request(self, action: Literal["desktop.open"], params: DesktopOpenParams | None = None) -> DesktopOpenResult: ...

    @overload
    async def request(self, action: Literal["state.metrics"], params: StateMetricsParams | None = None) -> StateMetricsResult: ...

    @overload
    async def request(self, action: Literal["session.open"], params: SessionOpenParams | None = None) -> SessionOpenResult: ...

    @overload
    async def request(self, action: Literal["session.run"], params: SessionRunParams) -> SessionRunResult: ...

    @overload
    async def request(self, action: Literal["session.status"], params: SessionStatusParams) -> SessionStatusResult: ...

    @overload
    async def request(self, action: Literal["session.list"], params: SessionListParams | None = None) -> SessionListResult: ...

    @overload
    async def request(self, action: Literal["session.close"], params: SessionCloseParams) -> SessionCloseResult: ...

    @overload
    async def request(self, action: Literal["code.context.create"], params: CodeContextCreateParams) -> CodeContextCreateResult: ...

    @overload
    async def request(self, action: Literal["code.run"], params: CodeRunParams) -> CodeRunResult: ...

    @overload
    async def request(self, action: Literal["code.context.list"], params: CodeContextListParams | None = None) -> CodeContextListResult: ...

    @overload
    async def request(self, action: Literal["code.context.restart"], params: CodeContextRestartParams) -> CodeContextRestartResult: ...

    @overload
    async def request(self, action: Literal["code.context.remove"], params: CodeContextRemoveParams) -> CodeContextRemoveResult: ...

    @overload
    async def request(self, action: Literal["code.file"], params: CodeFileParams) -> CodeFileResult: ...

    async def request(self, action: str, params: Any = None) -> Any:
        """Sends one action and returns its result; raises HotlineError with the wire's error."""
        return await self._send(action, params or {})

    async def _send(self, action: str, params: Any) -> Any:
        raise NotImplementedError


class SyncActionRequests:
    """Typed `request` overloads of the sync facade."""

    @overload
    def request(self, action: Literal["state.info"], params: StateInfoParams | None = None) -> StateInfoResult: ...

    @overload
    def request(self, action: Literal["state.guide"], params: StateGuideParams | None = None) -> StateGuideResult: ...

    @overload
    def request(self, action: Literal["state.catalog"], params: StateCatalogParams | None = None) -> StateCatalogResult: ...

    @overload
    def request(self, action: Literal["shell"], params: ShellParams) -> ShellResult: ...

    @overload
    def request(self, action: Literal["files.download"], params: FilesDownloadParams) -> FilesDownloadResult: ...

    @overload
    def request(self, action: Literal["files.extract"], params: FilesExtractParams) -> FilesExtractResult: ...

    @overload
    def request(self, action: Literal["files.run"], params: FilesRunParams) -> FilesRunResult: ...

    @overload
    def request(self, action: Literal["jobs.list"], params: JobsListParams | None = None) -> JobsListResult: ...

    @overload
    def request(self, action: Literal["jobs.status"], params: JobsStatusParams) -> JobsStatusResult: ...

    @overload
    def request(self, action: Literal["jobs.output"], params: JobsOutputParams) -> JobsOutputResult: ...

    @overload
    def request(self, action: Literal["jobs.follow"], params: JobsFollowParams) -> JobsFollowResult: ...

    @overload
    def request(self, action: Literal["jobs.unfollow"], params: JobsUnfollowParams) -> JobsUnfollowResult: ...

    @overload
    def request(self, action: Literal["jobs.wait"], params: JobsWaitParams) -> JobsWaitResult: ...

    @overload
    def request(self, action: Literal["jobs.input"], params: JobsInputParams) -> JobsInputResult: ...

    @overload
    def request(self, action: Literal["jobs.resize"], params: JobsResizeParams) -> JobsResizeResult: ...

    @overload
    def request(self, action: Literal["jobs.cancel"], params: JobsCancelParams) -> JobsCancelResult: ...

    @overload
    def request(self, action: Literal["tokens.create"], params: TokensCreateParams) -> TokensCreateResult: ...

    @overload
    def request(self, action: Literal["tokens.list"], params: TokensListParams | None = None) -> TokensListResult: ...

    @overload
    def request(self, action: Literal["tokens.revoke"], params: TokensRevokeParams) -> TokensRevokeResult: ...

    @overload
    def request(self, action: Literal["repos.add"], params: ReposAddParams | None = None) -> ReposAddResult: ...

    @overload
    def request(self, action: Literal["repos.list"], params: ReposListParams | None = None) -> ReposListResult: ...

    @overload
    def request(self, action: Literal["repos.snapshot"], params: ReposSnapshotParams | None = None) -> ReposSnapshotResult: ...

    @overload
    def request(self, action: Literal["repos.bundle"], params: ReposBundleParams | None = None) -> ReposBundleResult: ...

    @overload
    def request(self, action: Literal["tasks.create"], params: TasksCreateParams) -> TasksCreateResult: ...

    @overload
    def request(self, action: Literal["tasks.list"], params: TasksListParams | None = None) -> TasksListResult: ...

    @overload
    def request(self, action: Literal["tasks.commit"], params: TasksCommitParams) -> TasksCommitResult: ...

    @overload
    def request(self, action: Literal["tasks.run"], params: TasksRunParams) -> TasksRunResult: ...

    @overload
    def request(self, action: Literal["tasks.merge"], params: TasksMergeParams) -> TasksMergeResult: ...

    @overload
    def request(self, action: Literal["tasks.remove"], params: TasksRemoveParams) -> TasksRemoveResult: ...

    @overload
    def request(self, action: Literal["secrets.write"], params: SecretsWriteParams) -> SecretsWriteResult: ...

    @overload
    def request(self, action: Literal["prepare"], params: PrepareParams) -> PrepareResult: ...

    @overload
    def request(self, action: Literal["cache.list"], params: CacheListParams | None = None) -> CacheListResult: ...

    @overload
    def request(self, action: Literal["cache.prune"], params: CachePruneParams | None = None) -> CachePruneResult: ...

    @overload
    def request(self, action: Literal["files.read"], params: FilesReadParams) -> FilesReadResult: ...

    @overload
    def request(self, action: Literal["files.write"], params: FilesWriteParams) -> FilesWriteResult: ...

    @overload
    def request(self, action: Literal["files.edit"], params: FilesEditParams) -> FilesEditResult: ...

    @overload
    def request(self, action: Literal["files.list"], params: FilesListParams) -> FilesListResult: ...

    @overload
    def request(self, action: Literal["files.stat"], params: FilesStatParams) -> FilesStatResult: ...

    @overload
    def request(self, action: Literal["files.mkdir"], params: FilesMkdirParams) -> FilesMkdirResult: ...

    @overload
    def request(self, action: Literal["files.move"], params: FilesMoveParams) -> FilesMoveResult: ...

    @overload
    def request(self, action: Literal["files.remove"], params: FilesRemoveParams) -> FilesRemoveResult: ...

    @overload
    def request(self, action: Literal["files.search"], params: FilesSearchParams) -> FilesSearchResult: ...

    @overload
    def request(self, action: Literal["files.watch"], params: FilesWatchParams) -> FilesWatchResult: ...

    @overload
    def request(self, action: Literal["files.unwatch"], params: FilesUnwatchParams) -> FilesUnwatchResult: ...

    @overload
    def request(self, action: Literal["terminal.open"], params: TerminalOpenParams | None = None) -> TerminalOpenResult: ...

    @overload
    def request(self, action: Literal["console.open"], params: ConsoleOpenParams | None = None) -> ConsoleOpenResult: ...

    @overload
    def request(self, action: Literal["jobs.watch"], params: JobsWatchParams | None = None) -> JobsWatchResult: ...

    @overload
    def request(self, action: Literal["jobs.unwatch"], params: JobsUnwatchParams | None = None) -> JobsUnwatchResult: ...

    @overload
    def request(self, action: Literal["ssh.open"], params: SshOpenParams | None = None) -> SshOpenResult: ...

    @overload
    def request(self, action: Literal["ports.list"], params: PortsListParams | None = None) -> PortsListResult: ...

    @overload
    def request(self, action: Literal["ports.wait"], params: PortsWaitParams) -> PortsWaitResult: ...

    @overload
    def request(self, action: Literal["preview.open"], params: PreviewOpenParams) -> PreviewOpenResult: ...

    @overload
    def request(self, action: Literal["desktop.screenshot"], params: DesktopScreenshotParams | None = None) -> DesktopScreenshotResult: ...

    @overload
    def request(self, action: Literal["desktop.act"], params: DesktopActParams) -> DesktopActResult: ...

    @overload
    def request(self, action: Literal["browser.open"], params: BrowserOpenParams | None = None) -> BrowserOpenResult: ...

    @overload
    def request(self, action: Literal["desktop.open"], params: DesktopOpenParams | None = None) -> DesktopOpenResult: ...

    @overload
    def request(self, action: Literal["state.metrics"], params: StateMetricsParams | None = None) -> StateMetricsResult: ...

    @overload
    def request(self, action: Literal["session.open"], params: SessionOpenParams | None = None) -> SessionOpenResult: ...

    @overload
    def request(self, action: Literal["session.run"], params: SessionRunParams) -> SessionRunResult: ...

    @overload
    def request(self, action: Literal["session.status"], params: SessionStatusParams) -> SessionStatusResult: ...

    @overload
    def request(self, action: Literal["session.list"], params: SessionListParams | None = None) -> SessionListResult: ...

    @overload
    def request(self, action: Literal["session.close"], params: SessionCloseParams) -> SessionCloseResult: ...

    @overload
    def request(self, action: Literal["code.context.create"], params: CodeContextCreateParams) -> CodeContextCreateResult: ...

    @overload
    def request(self, action: Literal["code.run"], params: CodeRunParams) -> CodeRunResult: ...

    @overload
    def request(self, action: Literal["code.context.list"], params: CodeContextListParams | None = None) -> CodeContextListResult: ...

    @overload
    def request(self, action: Literal["code.context.restart"], params: CodeContextRestartParams) -> CodeContextRestartResult: ...

    @overload
    def request(self, action: Literal["code.context.remove"], params: CodeContextRemoveParams) -> CodeContextRemoveResult: ...

    @overload
    def request(self, action: Literal["code.file"], params: CodeFileParams) -> CodeFileResult: ...

    def request(self, action: str, params: Any = None) -> Any:
        """Sends one action and returns its result; raises HotlineError with the wire's error."""
        return self._send_sync(action, params or {})

    def _send_sync(self, action: str, params: Any) -> Any:
        raise NotImplementedError
