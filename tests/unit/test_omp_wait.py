"""OpenMP waiters sleep instead of spinning unless the environment says otherwise (issue 23)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from knotwork.infra.embeddings.threads import OMP_WAIT_POLICY, passive_omp_wait

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_sets_the_policy_when_unset() -> None:
    env: dict[str, str] = {}
    assert passive_omp_wait(env) is True
    assert env == {"OMP_WAIT_POLICY": OMP_WAIT_POLICY} == {"OMP_WAIT_POLICY": "PASSIVE"}


def test_keeps_a_policy_the_environment_sets() -> None:
    env = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert passive_omp_wait(env) is False
    assert env == {"OMP_WAIT_POLICY": "ACTIVE"}


def _policy_after_import(extra: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"} | extra
    env["PYTHONPATH"] = SRC
    out = subprocess.run(
        [sys.executable, "-c", "import os, knotwork; print(os.environ['OMP_WAIT_POLICY'])"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return out.stdout.strip()


def test_importing_the_package_sets_it_before_torch_loads() -> None:
    assert _policy_after_import({}) == "PASSIVE"
    assert _policy_after_import({"OMP_WAIT_POLICY": "active"}) == "active"
