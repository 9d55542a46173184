"""'Which two …?' and 'Which Xs are <value>?': the answer lists the items of one block of the
page (bullets or table rows), each cited, and the abstention decision is the one made without
the list (the real embedded stack, no LLM)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import QueryMode, RawDocument, SourceSystem
from knotwork.retrieval.config import LocalSearchConfig
from knotwork.retrieval.options import QueryOptions
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

PAGE = ("# Orbit Release Review\n\n"
        "The Orbit mobile app release shipped at the second store review attempt.\n\n"
        "## Attempts\n\n"
        "Attempt: 1; Date: 02.03.2024; Result: Rejected; Checks passed: 10 of 12\n"
        "Attempt: 2; Date: 20.03.2024; Result: Accepted; Checks passed: 12 of 12\n\n"
        "## Attempt 1 defects\n\n"
        "- The login screen crashed when the phone was rotated.\n"
        "- Receipts showed prices in the wrong currency.\n\n"
        "Both were fixed in build 41 by the mobile team.\n\n"
        "## Vendors (register)\n\n"
        "Vendor: Northwind Hosting; Service: all compute; Tier: Essential\n"
        "Vendor: Bluepeak Mail; Service: customer email; Tier: Minor\n"
        "Vendor: Quarry Payments; Service: card acquiring; Tier: Essential\n")
CASES = (("Which two defects did the first Orbit review attempt have?", ("login", "currency")),
         ("Which Orbit vendors are rated 'Essential' in the register?", ("Northwind", "Quarry")))


def test_the_items_of_one_block_are_listed_and_abstention_is_unchanged(
        make_settings: SettingsFactory) -> None:
    when = datetime(2024, 4, 2, tzinfo=UTC)
    with Knotwork(make_settings()) as kw:
        kw.ingest_documents([RawDocument(
            source_system=SourceSystem.FILE, source_id="orbit.md", title="Orbit Release Review",
            content=PAGE, created_at=when, modified_at=when)])
        options = QueryOptions(mode=QueryMode.LOCAL)
        listing = kw.engine(None, LocalSearchConfig(runner_up_share=2.0))
        plain = kw.engine(None, LocalSearchConfig(runner_up_share=2.0, list_block_sources=0))
        for question, wanted in CASES:
            listed = listing.query(question, options)
            alone = plain.query(question, options)
            assert any(t.startswith("listed 2 items") for t in listed.reasoning_trace), \
                listed.reasoning_trace
            assert all(w in listed.answer for w in wanted), listed.answer
            assert "Bluepeak" not in listed.answer and "Attempt: 2" not in listed.answer
            assert listed.citations and len(listed.citations) >= 1
            assert not any(t.startswith("listed") for t in alone.reasoning_trace)
            assert [t for t in listed.reasoning_trace if "P(correct)" in t] == \
                [t for t in alone.reasoning_trace if "P(correct)" in t]
