"""Hit rate of the table-column rules (``ingestion.extraction.table_headers.HEADER_RULES``).

    python -m bench.table_headers ../shared/corpora/<corpus> [--json]

Loads the corpus's Confluence pages, extracts each chunk with the no-LLM extractor, reads the
table rows of each chunk with the extractor's own mentions and counts, per rule, the facts it
states and how many of them a gold relation of the corpus (``truth/relations.json``, the ends
matched by name or alias of ``truth/entities.json``) confirms: the rule's hit rate. A rule with
a low rate on both corpora is a candidate for removal.
"""

from __future__ import annotations

import argparse
import json
import re
import unicodedata
from collections import defaultdict
from pathlib import Path

from knotwork.ingestion.chunking import chunk_text
from knotwork.ingestion.extraction.extractor import build_extractor
from knotwork.ingestion.extraction.table_headers import HEADER_RULES, table_row_relations
from knotwork.ingestion.loaders.detect import load_path
from knotwork.settings import Settings

_SYMMETRIC = {"COLLABORATED_WITH", "RELATED_TO"}


def _norm(text: str) -> str:
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9 ]+", " ", text.lower())).strip()


def _gold(root: Path) -> tuple[dict[str, set[str]], set[tuple[str, str, str]]]:
    names: dict[str, set[str]] = defaultdict(set)
    for entity in json.loads((root / "truth" / "entities.json").read_text()):
        for name in [entity["canonical_name"], *entity.get("aliases", [])]:
            if len(_norm(name)) > 2:
                names[_norm(name)].add(entity["id"])
    relations = set()
    for rel in json.loads((root / "truth" / "relations.json").read_text()):
        relations.add((rel["source"], rel["type"], rel["target"]))
        if rel["type"] in _SYMMETRIC:
            relations.add((rel["target"], rel["type"], rel["source"]))
    return names, relations


def measure(root: Path) -> dict[str, dict[str, float]]:
    names, relations = _gold(root)
    settings = Settings()
    extractor = build_extractor(settings)
    texts = [span.text for doc in load_path(root / "confluence").documents
             for span in chunk_text(doc.content, settings.chunk_tokens, settings.chunk_overlap)]
    stated: dict[str, int] = defaultdict(int)
    confirmed: dict[str, int] = defaultdict(int)
    for text, extraction in zip(texts, extractor.extract(texts, {}), strict=True):
        mentions = sorted((m for e in extraction.entities for m in e.mentions), key=lambda m: m.start)
        for hit in table_row_relations(text, mentions):
            stated[hit.rule] += 1
            sources = names.get(_norm(hit.source.refers_to or hit.source.text), set())
            targets = names.get(_norm(hit.target.refers_to or hit.target.text), set())
            confirmed[hit.rule] += any((s, hit.type.value, t) in relations for s in sources for t in targets)
    return {rule.name: {"stated": stated[rule.name], "confirmed": confirmed[rule.name],
                        "hit_rate": round(confirmed[rule.name] / stated[rule.name], 3)
                        if stated[rule.name] else 0.0}
            for rule in HEADER_RULES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.corpus)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{'rule':<16}{'stated':>8}{'confirmed':>11}{'hit rate':>10}")
    for rule, row in result.items():
        print(f"{rule:<16}{row['stated']:>8}{row['confirmed']:>11}{row['hit_rate']:>10.3f}")


if __name__ == "__main__":
    main()
