"""bench.name_forms on a tiny invented corpus: counts links, precision and labelled pairs."""

from __future__ import annotations

import json
from pathlib import Path

from bench.name_forms import main, measure


def _corpus(root: Path) -> Path:
    truth = root / "truth"
    truth.mkdir(parents=True)
    entities = [
        {"id": "p:rosalind", "type": "PERSON", "canonical_name": "Rosalind Lindqvist",
         "aliases": ["R. Lindqvist", "Ros"]},
        {"id": "p:petra", "type": "PERSON", "canonical_name": "Petra Lindqvist",
         "aliases": ["P. Lindqvist"]},
        {"id": "o:quay", "type": "ORGANIZATION", "canonical_name": "Quayside Logistics GmbH",
         "aliases": ["QL", "Quay Side Logistics GmbH"]},
    ]
    pairs = [{"a": "R. Lindqvist", "b": "Rosalind Lindqvist", "same": True},
             {"a": "R. Lindqvist", "b": "P. Lindqvist", "same": False},
             {"a": "QL", "b": "Quayside Logistics GmbH", "same": True}]
    (truth / "entities.json").write_text(json.dumps(entities))
    (truth / "resolution_pairs.json").write_text(json.dumps(pairs))
    return root


def test_rule_hits_and_precision_on_an_invented_truth(tmp_path: Path) -> None:
    stats = measure(_corpus(tmp_path / "c"))
    # R. and P. Lindqvist each find their own full name; neither finds the other
    assert stats["initial_surname"].links == 2 and stats["initial_surname"].precision == 1.0
    assert stats["initial_surname"].labelled_same == 1
    assert stats["initial_surname"].labelled_diff == 0
    assert stats["compact"].correct == 1  # "Quay Side Logistics" / "Quayside Logistics"
    assert stats["acronym"].labelled_same == 1
    assert stats["given_prefix"].links >= 1


def test_main_prints_one_line_per_rule(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(_corpus(tmp_path / "c"))]) == 0
    out = capsys.readouterr().out
    assert "initial_surname" in out and "acronym" in out
