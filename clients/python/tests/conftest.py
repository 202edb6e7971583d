"""Shared fixtures: the daemon the vitest wrapper (test/python/python-client.test.ts) started,
described in the JSON file HOTLINE_PYTEST_HARNESS names."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

PACKAGE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PACKAGE))


@pytest.fixture(scope="session")
def harness() -> dict[str, Any]:
    path = os.environ.get("HOTLINE_PYTEST_HARNESS")
    if not path:
        pytest.skip("needs a daemon: run through npx vitest run test/python/")
    with open(path, encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    with open(data["tokenFile"], encoding="utf-8") as f:
        data["token"] = f.read().strip()
    return data
