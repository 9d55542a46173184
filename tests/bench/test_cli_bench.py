"""``knotwork bench quality``: one-line errors with exit code 2 (no store is touched)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_SCRIPT = Path(sys.executable).with_name("knotwork")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "knotwork.services.cli"]


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, "bench", "quality", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def test_not_a_world_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = _run(REPO, str(tmp_path / "empty"))
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "not a generated world" in lines[0]
    assert not any((tmp_path / "empty").iterdir())


@pytest.mark.skipif(not _SCRIPT.exists(), reason="needs the installed console script")
def test_outside_the_checkout_says_where_to_run_it(tmp_path: Path) -> None:
    proc = _run(tmp_path, str(tmp_path))
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "repository root" in lines[0]
