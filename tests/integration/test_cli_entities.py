"""``knotwork entities calibrate|reresolve|merge|unmerge|review|split|undo`` as subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_cli import Cli

pytestmark = [pytest.mark.integration, pytest.mark.models]
PAIRS = Path(__file__).resolve().parents[1] / "data" / "resolution_pairs.csv"


class LooseCli(Cli):
    """The same tenant with a lower match threshold (as after a calibration)."""

    def env(self) -> dict[str, str]:
        return super().env() | {"KNOTWORK_RESOLUTION_MATCH_THRESHOLD": "0.7",
                                "KNOTWORK_RESOLUTION_AMBIGUITY_THRESHOLD": "0.65"}


class StrictCli(Cli):
    """A tenant whose match threshold is stricter than any score (a strict calibration): two
    spellings of a company stay two entities until the threshold is loosened. (People are a
    poor example now: a typo twin is merged by the consolidation pass whatever the thresholds,
    and a different surname never is.)"""

    def env(self) -> dict[str, str]:
        return super().env() | {"KNOTWORK_RESOLUTION_MATCH_THRESHOLD": "0.995",
                                "KNOTWORK_RESOLUTION_AMBIGUITY_THRESHOLD": "0.99",
                                "KNOTWORK_RESOLUTION_AUTO_THRESHOLD": "0.999"}


@pytest.fixture
def cli(tmp_path: Path, falkordb_url: str) -> Cli:
    return Cli(tmp_path / "data", falkordb_url)


@pytest.fixture
def strict(tmp_path: Path, falkordb_url: str) -> Cli:
    return StrictCli(tmp_path / "data", falkordb_url)


def test_calibrate_prints_precision_recall_and_rejects_bad_files(cli: Cli, tmp_path: Path) -> None:
    out = cli.json("entities", "calibrate", str(PAIRS), "--json")
    assert out["current"]["f1"] >= 0.95 and out["current"]["confusable_merges"] == 0
    fitted = out["fitted"]
    assert 0.5 <= fitted["match_threshold"] <= fitted["auto_threshold"] <= 0.99
    assert fitted["at_operating_point"]["precision"] >= 0.98
    bad = tmp_path / "bad.csv"
    bad.write_text("mention,entity,type,same\nBob,Robert,PERSON,maybe\n")
    proc = cli.run("entities", "calibrate", str(bad), ok=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "'same' must be 0 or 1" in proc.stderr


def test_reresolve_merges_after_a_threshold_change_and_unmerge_undoes_it(strict: Cli) -> None:
    cli = strict
    cli.run("episode", "add", "Harbor Analytics signed the contract with TechCorp.", "--source", "text")
    cli.run("episode", "add", "Harbour Analytics Ltd opened an office in Lisbon.", "--source", "text")
    names = {e["name"] for e in cli.export()["entities"]}
    assert {"Harbor Analytics", "Harbour Analytics Ltd"} <= names  # below the strict threshold

    dry = cli.json("entities", "reresolve", "--dry-run", "--json")
    assert dry["merges"] == []
    loose = LooseCli(cli.data_dir, cli.falkordb_url, group=cli.group)
    report = loose.json("entities", "reresolve", "--json")
    [merge] = report["merges"]
    assert {merge["target"], merge["source"]} == {"Harbor Analytics", "Harbour Analytics Ltd"}
    after = {e["name"] for e in cli.export()["entities"]}
    assert len(after & {"Harbor Analytics", "Harbour Analytics Ltd"}) == 1

    undone = json.loads(cli.run("entities", "unmerge", merge["merge_id"]).stdout)
    assert undone["restored"] == [merge["source_id"]]
    assert {"Harbor Analytics", "Harbour Analytics Ltd"} <= {e["name"] for e in cli.export()["entities"]}
    again = cli.run("entities", "unmerge", merge["merge_id"], ok=False)
    assert again.returncode == 2 and "already undone" in again.stderr
    assert cli.json("entities", "review", "--json") == []


def test_split_moves_a_form_and_undo_puts_it_back(strict: Cli) -> None:
    cli = strict
    cli.run("episode", "add", "Acme Robotics signed the contract with TechCorp.", "--source", "text")
    cli.run("episode", "add", "ACME Robotic Systems opened an office in Lisbon.", "--source", "text")
    people = {e["name"]: e["id"] for e in cli.export()["entities"]}
    loose = LooseCli(cli.data_dir, cli.falkordb_url, group=cli.group)
    [merge] = loose.json("entities", "reresolve", "--json")["merges"]
    kept = merge["target_id"]
    moved_form = merge["source"]
    listed = cli.run("entities", "split", kept, "--list").stdout
    assert moved_form in listed and people[merge["target"]] == kept

    done = json.loads(cli.run("entities", "split", kept, "--form", moved_form).stdout)
    assert done["moved_mentions"] == 1 and done["moved_facts"] == 1
    entities = {e["name"]: e for e in cli.export()["entities"]}
    assert moved_form in entities and moved_form not in entities[merge["target"]]["aliases"]

    # the split holds through re-resolution at the loose threshold
    assert loose.json("entities", "reresolve", "--json")["merges"] == []
    cli.run("entities", "undo", done["action_id"])
    names = {e["name"] for e in cli.export()["entities"]}
    assert moved_form not in names
    none = cli.run("entities", "split", kept, ok=False)
    assert none.returncode == 2 and "--form" in none.stderr
    again = cli.run("entities", "undo", done["action_id"], ok=False)
    assert again.returncode == 2 and "already undone" in again.stderr
