"""Answer quality on the bundled sample data: `python -m bench.sample_eval [--data-dir DIR]`.

A question counts as answered when a gold answer appears in the answer text, and as
cited when a citation's source_id is the gold source. Unanswerable questions count as
answered when Knotwork abstains (confidence < 0.3).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from knotwork import Knotwork, Settings

HERE = Path(__file__).parent
SAMPLE = HERE.parent / "src" / "knotwork" / "sample_data"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    questions = json.loads((HERE / "sample_questions.json").read_text())
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="kw-eval-"))
    with Knotwork(Settings(data_dir=data_dir)) as kw:
        kw.ingest_path(SAMPLE)
        by_cat: dict[str, list[tuple[bool, bool]]] = {}
        for item in questions:
            result = kw.query(item["q"])
            if item["a"]:
                answered = any(a.lower() in result.answer.lower() for a in item["a"])
                cited = any(c.source_id == item["source"] for c in result.citations)
            else:
                answered = cited = result.confidence < 0.3
            by_cat.setdefault(item["cat"], []).append((answered, cited))
            if args.verbose or not answered:
                mark = "ok " if answered else "MISS"
                print(f"{mark} {item['q']}\n     → {result.answer[:160]} ({result.confidence:.2f})")
    total = [x for rows in by_cat.values() for x in rows]
    for cat, rows in sorted(by_cat.items()):
        print(f"{cat:14} answered {sum(a for a, _ in rows)}/{len(rows)}  cited {sum(c for _, c in rows)}/{len(rows)}")
    print(f"{'all':14} answered {sum(a for a, _ in total)}/{len(total)}  cited {sum(c for _, c in total)}/{len(total)}")


if __name__ == "__main__":
    main()
