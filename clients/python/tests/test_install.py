"""`pip install ./clients/python` works in a venv without a package index: setuptools comes from
Debian's python3-setuptools (a venv with --system-site-packages, --no-build-isolation), websockets
from python3-websockets; the installed package carries py.typed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent


def test_pip_installs_into_a_venv_offline(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    source = tmp_path / "source"  # a copy, so the build leaves nothing in the checkout
    subprocess.run(["cp", "-r", str(PACKAGE), str(source)], check=True)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-build-isolation", "--no-cache-dir", str(source)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    probe = subprocess.run(
        [str(python), "-c", "import hotline_client, os; d = os.path.dirname(hotline_client.__file__); print(d); print(os.path.exists(os.path.join(d, 'py.typed')))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    where, typed = probe.stdout.split()
    assert where.startswith(str(venv)) and typed == "True"
    shown = subprocess.run([str(python), "-m", "pip", "show", "hotline-client"], capture_output=True, text=True, check=True)
    assert "Requires: websockets" in shown.stdout
