"""hotline_client/protocol.py is exactly what scripts/generate_types.py makes of schemas/: a schema
change without a regenerated (and committed) file fails here."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
SCRIPT = PACKAGE / "scripts" / "generate_types.py"
SCHEMAS = PACKAGE.parent.parent / "schemas"


def check(*extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--check", *extra], capture_output=True, text=True)


def test_the_committed_file_matches_the_schemas() -> None:
    result = check()
    assert result.returncode == 0, result.stderr


def test_a_changed_schema_makes_the_check_fail(tmp_path: Path) -> None:
    copy = tmp_path / "schemas"
    shutil.copytree(SCHEMAS, copy)
    params = copy / "actions" / "jobs.status.params.json"
    schema = json.loads(params.read_text())
    schema["properties"]["verbose"] = {"type": "boolean"}
    params.write_text(json.dumps(schema))
    result = check("--schemas", str(copy))
    assert result.returncode == 1 and "is stale" in result.stderr


def test_every_action_has_typed_params_and_result() -> None:
    from hotline_client import protocol

    index = json.loads((SCHEMAS / "index.json").read_text())
    names = [a["name"] for a in index["actions"]]
    assert list(protocol.ActionName.__args__) == names  # type: ignore[attr-defined]
    for name in names:
        alias = "".join(p[:1].upper() + p[1:] for p in name.split("."))
        assert hasattr(protocol, alias + "Params") and hasattr(protocol, alias + "Result"), name
