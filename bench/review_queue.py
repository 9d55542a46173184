"""The admin review queue at scale: the first page of a 1,000-item queue, rendered.

    .venv/bin/python -m bench.review_queue [--items 1000] [--entities 300] [--limit 50]
        [--runs 15]

A fresh embedded stack (SQLite, FalkorDB, qdrant-edge, hashing embedder) gets ``--entities``
people (ingested from short messages, so they have mentions) and ``--items`` pending review
items, each attached to one of them with two runner-up
candidates (the queue shows every side's card: aliases, mentions, summary). Then
``GET /admin`` (first page, ``--limit`` items, sorted by impact, as an admin signed in by
header) is timed ``--runs`` times, the first apart (cold). Goal: p95 < 300 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from knotwork.domain.models import EntityType
from knotwork.resolution.models import ReviewCandidate, ReviewItem
from knotwork.resolution.workflow import EntityWorkflow
from knotwork.services.api.app import create_app
from knotwork.settings import EmbedderBackend, Settings

FIRST = ["Ada", "Bela", "Cyra", "Dov", "Eli", "Fen", "Gil", "Hal", "Ida", "Jon", "Kim", "Lev"]
LAST = ["Arden", "Brook", "Castle", "Dale", "Ember", "Frost", "Grove", "Heath", "Isle", "Jett",
        "Knoll", "Lake", "Moor", "North", "Oak", "Pike", "Quill", "Reed", "Stone", "Thorn",
        "Vale", "Wood", "Yarrow", "Zeal", "Birch"]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--entities", type=int, default=300)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    key = secrets.token_hex(8)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", group="bench_queue",  # type: ignore[call-arg]
                            embedder=EmbedderBackend.HASHING, admin_api_key=key)
        with TestClient(create_app(settings)) as client:
            kw = client.app.state.knotwork  # type: ignore[attr-defined]
            wf = EntityWorkflow(kw.runtime, settings.group)
            rng = random.Random(11)
            names = [f"{f} {last}" for f in FIRST for last in LAST]
            rng.shuffle(names)
            started = time.perf_counter()
            people = names[:args.entities]
            for i in range(0, len(people) - 2, 3):  # stored mentions: the cards' snippets
                a, b, c = people[i:i + 3]
                kw.add_episode(f"{a} met {b} and {c} about the launch plan.", group_id=settings.group)
            ids = [e.id for e in kw.runtime.graph.list_entities(settings.group)
                   if e.type is EntityType.PERSON]
            start = datetime(2026, 1, 1, tzinfo=UTC)
            items = []
            for i in range(args.items):
                attached, *others = rng.sample(ids, 3)
                items.append(ReviewItem(
                    id=f"rv_{i:05d}", group_id=settings.group, mention=f"A. Person {i}",
                    entity_type="PERSON", entity_id=attached, decision="merge_flagged",
                    score=round(rng.uniform(0.7, 1.0), 3),
                    candidates=[ReviewCandidate(entity_id=e, name="x", type="PERSON",
                                                score=0.8, name_score=0.8)
                                for e in [attached, *others]],
                    episode_ids=[f"c{i}-{k}" for k in range(rng.randint(1, 12))],
                    created_at=start + timedelta(seconds=i)))
            wf.sql.add_reviews(items)
            setup_s = time.perf_counter() - started
            times: list[float] = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                page = client.get("/admin", params={"sort": "impact", "limit": args.limit},
                                  headers={"X-Api-Key": key})
                times.append((time.perf_counter() - t0) * 1000)
                shown = page.text.split("<span id='total'>", 1)[1].split("<", 1)[0]
                assert page.status_code == 200 and int(shown) >= args.items  # + ingest's own
    warm = times[1:] or times
    result = {"bench": "review_queue", "items": args.items, "entities": args.entities,
              "page_items": args.limit, "setup_s": round(setup_s, 1),
              "first_ms": round(times[0], 1), "p50_ms": round(statistics.median(warm), 1),
              "p95_ms": round(_percentile(warm, 0.95), 1),
              "p95_over_goal_300ms": round(_percentile(warm, 0.95) / 300, 2)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
