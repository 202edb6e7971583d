"""mypy --strict (Debian's mypy) passes on the package and the README's example, and reports a
wrong param type (tests/typecheck/wrong_param.py, one error per marked line)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent


def mypy(*paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null", *paths],
        cwd=PACKAGE,
        capture_output=True,
        text=True,
    )


def test_the_package_and_the_example_pass_mypy_strict() -> None:
    result = mypy("hotline_client", "examples/example.py")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_wrong_param_type_is_reported() -> None:
    wrong = PACKAGE / "tests" / "typecheck" / "wrong_param.py"
    marked = [i + 1 for i, line in enumerate(wrong.read_text().splitlines()) if "# error:" in line]
    result = mypy(str(wrong.relative_to(PACKAGE)))
    assert result.returncode == 1, result.stdout
    reported = sorted({int(m.group(1)) for m in re.finditer(r"wrong_param\.py:(\d+): error", result.stdout)})
    assert reported == marked, result.stdout
    assert 'No overload variant of "request"' in result.stdout
    assert 'Argument "wait" to "shell" of "HotlineClient" has incompatible type "str"' in result.stdout
    assert 'TypedDict "JobStatus" has no key "nosuchfield"' in result.stdout
    assert '"memoryview" has no attribute "decode"' in result.stdout
