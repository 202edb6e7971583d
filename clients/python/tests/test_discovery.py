"""connect()'s discovery agrees with the Node client's (client/discovery.ts, client/directories.ts)
on the table of environment combinations the Node test uses (test/helpers/directory-envs.ts), and
on each state of daemon.json and the token file; connect() with no arguments reaches the daemon."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hotline_client import HotlineError, connect, discover_daemon, hotline_directories


def test_directories_match_the_node_client_on_every_combination(harness: dict[str, Any]) -> None:
    cases = harness["directories"]
    assert len(cases) == 4 * 4 * 3 * 4 * 3
    mismatches = []
    for case in cases:
        dirs = hotline_directories(state_dir=case.get("stateDir"), config_dir=case.get("configDir"), env=case["env"])
        ours = {"stateDir": dirs.state_dir, "configDir": dirs.config_dir}
        if ours != case["node"]:
            mismatches.append({"env": case["env"], "stateDir": case.get("stateDir"), "configDir": case.get("configDir"), "python": ours, "node": case["node"]})
    assert mismatches == []


def test_daemon_json_and_token_file_states_match_the_node_client(harness: dict[str, Any]) -> None:
    for case in harness["discovery"]:
        node = case["node"]
        try:
            endpoint = discover_daemon(env=case["env"])
        except HotlineError as err:
            assert "code" in node, (case["name"], err)
            assert err.code == node["code"], case["name"]
            if case["sameMessage"]:
                assert (err.message, err.details) == (node["message"], node.get("details")), case["name"]
            continue
        assert "url" in node, (case["name"], endpoint)
        assert (endpoint.url, endpoint.token, endpoint.daemon_file) == (node["url"], node["token"], node["daemonFile"]), case["name"]


def test_connect_finds_the_local_daemon_from_the_environment(harness: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOTLINE_STATE_DIR", harness["stateDir"])
    monkeypatch.setenv("HOTLINE_CONFIG_DIR", harness["configDir"])

    async def main() -> None:
        async with await connect() as client:
            info = await client.request("state.info")
            assert info["directories"]["state"] == harness["stateDir"]
        with pytest.raises(HotlineError) as caught:
            await connect(state_dir=harness["work"])  # no daemon.json there
        assert caught.value.code == "unavailable" and "daemon.json is missing" in caught.value.message
        with pytest.raises(HotlineError) as refused:
            await connect(url=harness["url"], token="not-the-token")
        assert refused.value.code == "unauthorized"

    asyncio.run(main())
