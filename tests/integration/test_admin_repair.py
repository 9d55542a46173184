"""Entity repair in headless Chromium: "merge into" moves the mention's fact and the answer
follows; a wrongly merged person is split from their entity page, stays split through
re-ingest, and the split is undone with a click. Assertions on the DOM and on the graph."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from knotwork.domain.ids import stable_id
from knotwork.domain.timeutil import utcnow
from knotwork.resolution.models import ReviewItem
from knotwork.resolution.workflow import EntityWorkflow
from tests.integration.test_admin_ui import KEY, _reload_after, _shot, browser, server  # noqa: F401

pytestmark = [pytest.mark.integration]

TEXTS = [
    "Ondrej Vasko leads the Harbor Team.",
    "Ondrej Vasko maintains the Ledger Service.",
    "Marta Vasko owns the Pricing Engine.",
    "Marta Vasko wrote the Pricing Engine runbook.",
]


def _sign_in(driver: Any, url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(f"{url}/admin")
    driver.find_element(By.ID, "admin-key").send_keys(KEY + Keys.ENTER)
    WebDriverWait(driver, 30).until(lambda d: "Review queue" in d.title)


def _seed(kw: Any) -> tuple[str, EntityWorkflow, dict[str, str]]:
    group = f"repair_{secrets.token_hex(3)}"
    for i, text in enumerate(TEXTS):
        kw.add_episode(text, group_id=group, source="text",
                       reference_time=datetime(2026, 1, 1 + i, tzinfo=UTC))
    wf = EntityWorkflow(kw.runtime, group)
    ids = {e.name: e.id for e in kw.runtime.graph.list_entities(group)}
    return group, wf, ids


def _facts_of(kw: Any, group: str, entity_id: str) -> list[str]:
    return [f.fact for f in kw.runtime.graph.list_facts(group)
            if entity_id in (f.source_id, f.target_id)]


def test_split_a_wrongly_merged_person_then_undo(server: dict[str, Any], browser: Any,  # noqa: F811
                                                 tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    url, kw = server["url"], server["kw"]
    group, wf, ids = _seed(kw)
    ondrej, marta = ids["Ondrej Vasko"], ids["Marta Vasko"]
    wf.merge(ondrej, [marta], actor="resolution")  # the mistake to repair
    assert any("Pricing Engine" in f for f in _facts_of(kw, group, ondrej))

    _sign_in(browser, url)
    browser.get(f"{url}/admin/entities/{ondrej}?group_id={group}")
    boxes = browser.find_elements(By.CSS_SELECTOR, "input.pick")
    assert {b.get_attribute("data-form") for b in boxes} == {"Ondrej Vasko", "Marta Vasko"}
    for box in boxes:
        if box.get_attribute("data-form") == "Marta Vasko":
            box.click()
    _shot(browser, tmp_path, "split-selected")
    _reload_after(browser, browser.find_element(By.ID, "split").click)

    people = {e.name: e for e in kw.runtime.graph.list_entities(group)}
    split = people["Marta Vasko"]
    assert split.id != ondrej and "Marta Vasko" not in people["Ondrej Vasko"].aliases
    assert sum("Pricing Engine" in f for f in _facts_of(kw, group, split.id)) == 2
    assert not any("Marta" in f for f in _facts_of(kw, group, ondrej))
    forms = {b.get_attribute("data-form")
             for b in browser.find_elements(By.CSS_SELECTOR, "input.pick")}
    assert forms == {"Ondrej Vasko"}
    assert browser.find_elements(By.CSS_SELECTOR, "tr.entity-action button[data-action=undo]")
    answer = kw.query("Who owns the Pricing Engine?", group_id=group).answer
    assert "Marta Vasko" in answer, answer

    # re-ingesting the same page does not merge them again
    kw.add_episode(TEXTS[2], group_id=group, source="text",
                   reference_time=datetime(2026, 1, 3, tzinfo=UTC))
    assert len(kw.runtime.graph.get_entities(group, [ondrej, split.id])) == 2
    assert not any("Marta" in f for f in _facts_of(kw, group, ondrej))

    # undo with a click: the mentions and facts go back where they were
    browser.get(f"{url}/admin/entities/{ondrej}?group_id={group}")
    _reload_after(browser, browser.find_element(
        By.CSS_SELECTOR, "tr.entity-action button[data-action=undo]").click)
    assert "undone" in browser.find_element(By.CSS_SELECTOR, "tr.entity-action").text
    assert kw.runtime.graph.get_entities(group, [split.id]) == []
    assert any("Pricing Engine" in f for f in _facts_of(kw, group, ondrej))
    actions = [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".audit-action")]
    assert actions[:2] == ["entity.undo", "entity.split"]


def test_merge_into_moves_the_fact_and_the_decision_can_be_undone(
        server: dict[str, Any], browser: Any) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    url, kw = server["url"], server["kw"]
    group, wf, ids = _seed(kw)
    ondrej, marta = ids["Ondrej Vasko"], ids["Marta Vasko"]
    # resolution attached one "Marta Vasko" mention to the wrong person and flagged it
    wf.merge(ondrej, [marta], actor="resolution")
    row = next(r for r in wf.mentions(ondrej) if r.text == "Marta Vasko")
    other = wf.create("Marta Vaskova", wf.view(ondrej).entity.type, {}).entity_id
    item = ReviewItem(id=stable_id(group, "review", row.id), group_id=group, mention=row.text,
                      entity_type="PERSON", entity_id=ondrej, decision="merge_flagged", score=0.9,
                      episode_ids=[row.chunk_id], created_at=utcnow())
    wf.sql.add_reviews([item])

    _sign_in(browser, url)
    browser.get(f"{url}/admin?group_id={group}")
    browser.find_element(By.ID, f"target-{item.id}").send_keys(other)
    _reload_after(browser, browser.find_element(
        By.CSS_SELECTOR, f"button[data-action=merge-into][data-review='{item.id}']").click)
    moved = [f for f in _facts_of(kw, group, other)]
    assert len(moved) == 1 and "Pricing Engine" in moved[0]
    trail = [a.action for a in wf.audit_trail(other)]
    assert trail[0] == "entity.merge_into"

    browser.get(f"{url}/admin?group_id={group}&status=all")
    _reload_after(browser, browser.find_element(
        By.CSS_SELECTOR, f"section[data-review-id='{item.id}'] button[data-action=undo]").click)
    assert browser.find_element(
        By.CSS_SELECTOR, f"section[data-review-id='{item.id}'] .review-status").text == "pending"
    assert _facts_of(kw, group, other) == []
