"""The old side of a change sentence (``extraction/change.py``): which mention stopped holding."""

from __future__ import annotations

import pytest

from knotwork.ingestion.extraction.change import names_old_holder

MOVE = "Effective July 26, 2024, Tariq Tran moves from the Fraud API Team to the Quality Team."
LEFT = "The Risk Team left the Enterprise Division for the Trust Division on July 3, 2023."
BEFORE = "As of Oct 12 2023, Nadia Rivera is part of the Pricing Team; before that, Nadia Rivera was on the Growth Team."
ENDED = "Vendor news: We ended the Lumenwatch contract for observability on Oct 13 2023; Signalpeak takes over."
REPLACING = "Starting May 19 2024, Amir Russo is the lead of Project Rigel, replacing Katarina Colombo."
PARENS = "Starting 2023-11-26, Claire Kobayashi works on the Observability Team (previously the Integrations Team)."
USED_TO = "As of May 21, 2024, the Edge Team is based in Seoul; it used to sit in Melbourne."
HANDED = "Rafael Mendes hands the Billing Squad over to Yara Nassar; Rafael now leads the Mobile Guild."
UNTIL_THEN = "As of March 2024, Ana leads the Search team; Bo Chen led it until then."
UNDER = "From 2024, the Data Division includes the Risk Team, previously under the Trust Division."
ROLE = "On 3 March Mira Holt moved from running the Ledger Team to the new audit role."


@pytest.mark.parametrize(
    ("sentence", "mention", "old"),
    [
        (MOVE, "Fraud API Team", True), (MOVE, "Quality Team", False), (MOVE, "Tariq Tran", False),
        (LEFT, "Enterprise Division", True), (LEFT, "Trust Division", False), (LEFT, "Risk Team", False),
        (BEFORE, "Growth Team", True), (BEFORE, "Pricing Team", False),
        (ENDED, "Lumenwatch", True), (ENDED, "Signalpeak", False),
        (REPLACING, "Katarina Colombo", True), (REPLACING, "Amir Russo", False),
        (PARENS, "Integrations Team", True), (PARENS, "Observability Team", False),
        (USED_TO, "Melbourne", True), (USED_TO, "Seoul", False),
        (HANDED, "Rafael Mendes", True), (HANDED, "Yara Nassar", False),
        (UNTIL_THEN, "Bo Chen", True), (UNTIL_THEN, "Ana", False),
        (UNDER, "Trust Division", True), (UNDER, "Data Division", False),
        (ROLE, "Ledger Team", True), (ROLE, "Mira Holt", False),
        ("Fresh from leading the Ledger Team, Lena reviews the plan.", "Ledger Team", False),
        # no change stated: "from" without a move, a plain statement, a dated end
        ("Priya from the Payments Team can help with this.", "Payments Team", False),
        ("Our observability vendor is Lumenwatch.", "Lumenwatch", False),
        ("Omar joins from the Fraud Team as of May 1.", "Fraud Team", True),
        ("The Ingest Service is moving data from Kafka to Snowflake.", "Kafka", False),
        # "migrations" is a noun here: nothing moves
        ("Schema migrations need two reviewers from the Tools Team.", "Tools Team", False),
    ],
)
def test_the_old_holder_of_a_change_sentence(sentence: str, mention: str, old: bool) -> None:
    at = sentence.index(mention)
    assert names_old_holder(sentence[:at], sentence[at + len(mention):]) is old


def test_a_sighting_that_says_the_fact_ended_ends_the_open_one() -> None:
    from datetime import UTC, datetime

    from knotwork.domain.models import Fact, RelationType
    from knotwork.ingestion.facts import merge_into

    feb, jul = datetime(2023, 2, 18, tzinfo=UTC), datetime(2024, 7, 26, tzinfo=UTC)
    table = Fact(id="f", group_id="g", source_id="tariq", target_id="fraud", type=RelationType.MEMBER_OF,
                 fact="Name: Tariq Tran; Team: Fraud Team", episodes=["e1"], valid_at=feb, created_at=jul)
    moved = table.model_copy(update={"fact": MOVE, "episodes": ["e2"], "valid_at": None, "invalid_at": jul})
    merged = merge_into(table, moved)
    assert (merged.valid_at, merged.invalid_at, merged.episodes) == (feb, jul, ["e1", "e2"])
    # the other order: the ended sighting first, the older statement keeps the end
    merged = merge_into(moved, table)
    assert (merged.valid_at, merged.invalid_at) == (feb, jul)
