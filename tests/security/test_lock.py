"""Installs are reproducible: uv.lock pins every dependency and agrees with pyproject.toml
(bin/setup installs from it with `uv sync --locked`, which refuses a stale lock too)."""

import subprocess

from tests.servers import ROOT


def test_the_lock_agrees_with_pyproject():
    result = subprocess.run(
        [str(ROOT / ".tools" / "bin" / "uv"), "lock", "--check", "--offline"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
