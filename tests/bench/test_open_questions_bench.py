"""bench.open_questions counts each open-question rule by category."""

from __future__ import annotations

import json
from pathlib import Path

from bench.open_questions import hit_rates, read_questions


def test_the_hit_rate_bench_counts_each_rule_by_category(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"question": "Why did the export fail?", "category": "local"},
        {"question": "Describe the warehouse rollout.", "category": "global"},
        {"question": "Who leads the warehouse team?", "category": "local"},
    ]))
    rates = hit_rates(read_questions(path))
    assert rates["why"] == {"local": 1}
    assert rates["imperative-account"] == {"global": 1}
    assert rates["-"] == {"local": 1}
