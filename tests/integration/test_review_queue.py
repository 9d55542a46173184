"""The review queue at scale: filters, counts, sorting, pages that cover every item once, and
bulk decisions of a filtered set (each audited with its actor)."""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from knotwork.domain.models import EntityType
from knotwork.resolution.models import ReviewCandidate, ReviewItem
from knotwork.resolution.workflow import EntityWorkflow
from knotwork.services.api.app import create_app
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration]
KEY = "queue-admin-" + secrets.token_hex(4)
ADMIN = {"X-Api-Key": KEY}
ITEMS = 120


@pytest.fixture(scope="module")
def queue(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[dict[str, Any]]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("queue") / "data",  # type: ignore[call-arg]
                        group=f"q_{secrets.token_hex(3)}", falkordb_url=falkordb_url,
                        embedder=EmbedderBackend.HASHING, admin_api_key=KEY)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        kw = client.app.state.knotwork  # type: ignore[attr-defined]
        wf = EntityWorkflow(kw.runtime, settings.group)
        person = wf.create("Hanna Keller", EntityType.PERSON, {}, None).entity_id
        org = wf.create("Keller Logistics", EntityType.ORGANIZATION, {}, None).entity_id
        rng = random.Random(7)
        start = datetime(2026, 1, 1, tzinfo=UTC)
        items = []
        for i in range(ITEMS):
            etype = "PERSON" if i % 3 else "ORGANIZATION"
            items.append(ReviewItem(
                id=f"rv_{i:04d}", group_id=settings.group, mention=f"H. Keller {i}",
                entity_type=etype, entity_id=person if etype == "PERSON" else org,
                decision=rng.choice(["merge_flagged", "new"]), score=round(rng.uniform(0.5, 1), 3),
                candidates=[ReviewCandidate(entity_id=person if etype == "PERSON" else org,
                                            name="Hanna Keller", type=etype, score=0.9,
                                            name_score=0.9)],
                episode_ids=[f"chunk-{i}-{k}" for k in range(rng.randint(1, 9))],
                created_at=start + timedelta(minutes=i)))
        wf.sql.add_reviews(items)
        yield {"client": client, "items": {i.id: i for i in items}, "group": settings.group}


def _page(client: TestClient, **params: object) -> dict[str, Any]:
    response = client.get("/v1/review", params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_pages_cover_every_item_once_with_the_filter_applied(queue: dict[str, Any]) -> None:
    client, items = queue["client"], queue["items"]
    people = {i for i, item in items.items() if item.entity_type == "PERSON"}
    seen: list[str] = []
    offset = 0
    while True:
        body = _page(client, type="PERSON", offset=offset, limit=25)
        assert body["total"] == len(people)
        seen += [item["id"] for item in body["items"]]
        if offset + 25 >= body["total"]:
            break
        offset += 25
    assert sorted(seen) == sorted(people)  # every one, once
    assert _page(client)["counts"] == {"pending": ITEMS}


def test_sorts_and_score_band(queue: dict[str, Any]) -> None:
    client, items = queue["client"], queue["items"]
    by_impact = [i["id"] for i in _page(client, sort="impact", limit=500)["items"]]
    impacts = [len(items[i].episode_ids) for i in by_impact]
    assert impacts == sorted(impacts, reverse=True) and len(by_impact) == ITEMS
    by_score = [i["score"] for i in _page(client, sort="score", limit=500)["items"]]
    assert by_score == sorted(by_score)
    band = _page(client, min_score=0.9, max_score=1.0, limit=500)
    assert band["total"] == sum(1 for i in items.values() if i.score >= 0.9)
    assert all(i["score"] >= 0.9 for i in band["items"])
    flagged = _page(client, decision="new", q="keller 1", limit=500)
    expected = {i.id for i in items.values() if i.decision == "new" and "keller 1" in i.mention.lower()}
    assert {i["id"] for i in flagged["items"]} == expected


def test_the_page_shows_counts_a_pager_and_the_mention_marked(queue: dict[str, Any]) -> None:
    client = queue["client"]
    page = client.get("/admin", params={"type": "ORGANIZATION", "band": "high", "limit": 5},
                      headers=ADMIN)
    assert page.status_code == 200, page.text
    organisations = _page(client, type="ORGANIZATION", min_score=0.9, max_score=1.0)["total"]
    assert f"<span id='total'>{organisations}</span>" in page.text
    assert page.text.count("<section class='review'") == min(5, organisations)
    assert ("rel='next'" in page.text) == (organisations > 5)
    assert "pending: " in page.text and "Approve all" in page.text


def test_bulk_reject_of_a_filtered_set(queue: dict[str, Any]) -> None:
    client, items = queue["client"], queue["items"]
    chosen = {i.id for i in items.values() if i.entity_type == "ORGANIZATION" and i.score < 0.7}
    done = client.post("/v1/review/bulk", params={"type": "ORGANIZATION", "max_score": 0.699},
                       json={"action": "approve"}, headers=ADMIN)
    assert done.status_code == 200, done.text
    body = done.json()
    assert set(body["decided"]) == chosen and body["remaining"] == 0 and not body["failed"]
    for review_id in chosen:
        item = client.get(f"/v1/review/{review_id}", headers=ADMIN).json()
        assert item["status"] == "approved" and item["decided_by"] == "admin_api_key"
    untouched = _page(client, status="pending", limit=500)["total"]
    assert untouched == ITEMS - len(chosen)
    bad = client.post("/v1/review/bulk", json={"action": "delete"}, headers=ADMIN)
    assert bad.status_code == 422
