"""Hit rate of the sentence relation patterns (``ingestion.extraction.relations.PATTERNS``).

    python -m bench.relation_patterns ../shared/corpora/<corpus> [--json] [--show NAME]

Loads the corpus's Confluence pages and Slack messages, extracts each chunk with the no-LLM
extractor (no graph context: entity types can differ from an ingest's), runs the sentence
relation rules on each sentence's mentions and counts, per pattern, the relations it fires
(``fired``), those whose two ends both name a gold entity (``on_gold``) and those a gold
relation of the corpus confirms (``true``: same ends, type and direction; ``truth/relations.json``,
ends matched by name or alias of ``truth/entities.json``). ``--show NAME`` prints the sentences
a pattern fired on. Patterns that never fire are left out.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

from bench.table_headers import _gold, _norm
from knotwork.ingestion.chunking import chunk_text
from knotwork.ingestion.extraction.extractor import _sentences, build_extractor
from knotwork.ingestion.extraction.relations import relations_in_sentence
from knotwork.ingestion.loaders.detect import load_path
from knotwork.settings import Settings


def measure(root: Path, show: str | None = None) -> dict[str, dict[str, float]]:
    names, relations = _gold(root)
    settings = Settings()
    extractor = build_extractor(settings)
    texts = [
        span.text
        for part in ("confluence", "slack")
        if (root / part).exists()
        for doc in load_path(root / part).documents
        for span in chunk_text(doc.content, settings.chunk_tokens, settings.chunk_overlap)
    ]
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    docs = (
        list(extractor.nlp.pipe(texts, batch_size=16))
        if extractor.nlp is not None
        else [None] * len(texts)
    )
    for text, doc, extraction in zip(texts, docs, extractor.extract(texts, {}), strict=True):
        mentions = sorted(
            (m for e in extraction.entities for m in e.mentions), key=lambda m: m.start
        )
        for start, end in _sentences(text, doc):
            inside = [m for m in mentions if m.start >= start and m.end <= end]
            if len(inside) < 2:
                continue
            for hit in relations_in_sentence(text, inside):
                sources = names.get(_norm(hit.source.refers_to or hit.source.text), set())
                targets = names.get(_norm(hit.target.refers_to or hit.target.text), set())
                true = any((s, hit.type.value, t) in relations for s in sources for t in targets)
                row = rows[hit.rule]
                row[0] += 1
                row[1] += bool(sources and targets)
                row[2] += true
                if show and hit.rule in show.split(","):
                    sentence = re.sub(r"\s+", " ", text[start:end])[:160]
                    print(
                        f"{'+' if true else '-'} {hit.rule} {hit.source.text} → {hit.target.text}: {sentence}"
                    )
    return {
        name: {"fired": f, "on_gold": g, "true": t, "precision": round(t / g, 3) if g else 0.0}
        for name, (f, g, t) in sorted(rows.items())
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--show", help="print the sentences these patterns (comma-separated) fired on"
    )
    args = parser.parse_args()
    result = measure(args.corpus, args.show)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{'pattern':<32}{'fired':>7}{'on_gold':>9}{'true':>6}{'precision':>11}")
    for name, row in result.items():
        print(
            f"{name:<32}{row['fired']:>7}{row['on_gold']:>9}{row['true']:>6}{row['precision']:>11.3f}"
        )


if __name__ == "__main__":
    main()
