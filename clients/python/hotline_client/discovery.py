"""Finding the local daemon exactly as the CLI and the Node client do (client/discovery.ts,
client/directories.ts): the URL from <state>/daemon.json, the token from <config>/token."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import HotlineError


@dataclass(frozen=True)
class Endpoint:
    """What a connection needs; `daemon_file` names the daemon.json it came from, for error messages."""

    url: str
    token: str
    daemon_file: str | None = None


@dataclass(frozen=True)
class Directories:
    state_dir: str
    config_dir: str


def _xdg(env: Mapping[str, str], name: str, fallback: str) -> str:
    value = env.get(name)
    # XDG says relative values are invalid and must be ignored.
    if value is not None and value.startswith("/"):
        return os.path.join(value, "hotline")
    return os.path.join(os.path.expanduser("~"), fallback, "hotline")


def _pick(explicit: str | None, env: Mapping[str, str], name: str, fallback: str) -> str:
    from_env = env.get(name)
    chosen = explicit if explicit is not None else (from_env if from_env else fallback)
    return os.path.abspath(chosen)


def hotline_directories(
    *, state_dir: str | None = None, config_dir: str | None = None, env: Mapping[str, str] | None = None
) -> Directories:
    """The daemon's state and config directories: option > HOTLINE_STATE_DIR / HOTLINE_CONFIG_DIR >
    $XDG_STATE_HOME / $XDG_CONFIG_HOME > ~/.local/state, ~/.config (each with /hotline)."""
    env = os.environ if env is None else env
    return Directories(
        state_dir=_pick(state_dir, env, "HOTLINE_STATE_DIR", _xdg(env, "XDG_STATE_HOME", ".local/state")),
        config_dir=_pick(config_dir, env, "HOTLINE_CONFIG_DIR", _xdg(env, "XDG_CONFIG_HOME", ".config")),
    )


def read_token_file(path: str) -> str:
    """Reads a token file; a missing or empty one is `unauthorized`, naming the file."""
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as err:
        raise HotlineError("unauthorized", f"cannot read the token file {path}: {err.strerror or err}") from err
    if not token:
        raise HotlineError("unauthorized", f"the token file {path} is empty")
    return token


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # it exists but belongs to someone else
    except (OSError, OverflowError):
        return False
    return True


def discover_daemon(
    *, state_dir: str | None = None, config_dir: str | None = None, env: Mapping[str, str] | None = None
) -> Endpoint:
    """The local daemon's endpoint. A daemon.json whose pid is gone (a crashed daemon leaves it behind)
    is `unavailable` naming the file, instead of a bare connection refused later."""
    dirs = hotline_directories(state_dir=state_dir, config_dir=config_dir, env=env)
    daemon_file = os.path.join(dirs.state_dir, "daemon.json")
    details = {"daemonFile": daemon_file}
    try:
        with open(daemon_file, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        raise HotlineError(
            "unavailable", f"no running daemon found ({daemon_file} is missing); start one with: hotline daemon", details=details
        ) from None
    try:
        record = json.loads(text)
    except ValueError as err:
        raise HotlineError(
            "unavailable", f"{daemon_file} is not valid JSON ({err}); restart the daemon: hotline daemon", details=details
        ) from None
    url = record.get("url") if isinstance(record, dict) else None
    if not isinstance(url, str):
        raise HotlineError("unavailable", f"{daemon_file} has no url; restart the daemon: hotline daemon", details=details)
    pid = record.get("pid")
    if isinstance(pid, int) and not isinstance(pid, bool) and not _process_exists(pid):
        raise HotlineError(
            "unavailable",
            f"stale {daemon_file}: the daemon that wrote it (pid {pid}) is gone; start one with: hotline daemon",
            details={"daemonFile": daemon_file, "pid": pid, "url": url},
        )
    return Endpoint(url=url, token=read_token_file(os.path.join(dirs.config_dir, "token")), daemon_file=daemon_file)
