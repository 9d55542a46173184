"""'Which two …?': the block of exactly that many bullets or table rows under the heading that
matches the question."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Episode
from knotwork.retrieval.list_items import (
    asked_count,
    asks_plural,
    best_block,
    blocks,
    matching_rows,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def episode(eid: str, name: str, content: str) -> Episode:
    return Episode(id=eid, group_id="g", name=name, content=content, document_id=eid,
                   valid_at=T0, created_at=T0)


# a release review: a table of attempts (two rows), the two defects of the first attempt as
# bullets under their own heading, three lessons as bullets
REVIEW = episode("r", "Orbit Release Review", (
    "# Orbit Release Review\n\nThe release shipped at the second attempt.\n\n"
    "## Attempts\n\nAttempt: 1; Date: 02.03.2025; Result: Rejected; Checks passed: 10 of 12\n"
    "Attempt: 2; Date: 20.03.2025; Result: Accepted; Checks passed: 12 of 12\n\n"
    "## Attempt 1 defects\n\n- Login screen crashed on rotation.\n- Receipts showed the wrong "
    "currency.\n\nBoth were fixed in build 41.\n\n## Lessons\n\n- Test on small screens.\n"
    "- Freeze strings early.\n- Book the review slot sooner."))

# an audit page: its findings as a table under a lead-in line, and a labelled overview
AUDIT = episode("a", "Storage Audit 2025", (
    "# Storage Audit 2025\n\nAuditor: an outside firm\nScope: every bucket\n\n## Results\n\n"
    "The audit raised three findings against the retention policy:\n\n"
    "Finding area: Encryption; Problem: two buckets unencrypted; Owner: Ada\n"
    "Finding area: Retention; Problem: logs kept too long; Owner: Ben\n"
    "Finding area: Access; Problem: a stale admin key; Owner: Cy\n\nAll three are closed."))


@pytest.mark.parametrize(("question", "count"), [
    ("Which two defects did the first attempt have?", 2),
    ("What were the three findings of the audit?", 3),
    ("List the 4 steps of the rollout.", 4),
    ("Name both owners of the service.", 2),
    ("Which of the two offices is bigger?", None),
    ("When did the two teams merge?", None),
    ("How many defects did the first attempt have?", None),
    ("Who leads the audit?", None)])
def test_how_many_items_a_question_asks_for(question: str, count: int | None) -> None:
    assert asked_count(question) == count


def test_bullets_and_table_rows_form_blocks_under_their_heading() -> None:
    found = [(b.heading, b.kind, len(b.items)) for b in blocks(REVIEW)]
    assert found == [("Attempts", "row:Attempt", 2), ("Attempt 1 defects", "bullet", 2),
                     ("Lessons", "bullet", 3)]
    audit = blocks(AUDIT)  # single labelled lines are no table rows
    assert [(b.heading, len(b.items)) for b in audit] == [("Results", 3)]
    assert audit[0].lead.startswith("The audit raised three findings")


def test_the_block_whose_heading_matches_the_question_wins_over_one_of_the_same_size() -> None:
    block = best_block("Which two defects did the first attempt have?", [REVIEW])
    assert block is not None and block.heading == "Attempt 1 defects"
    assert block.items == ["Login screen crashed on rotation.", "Receipts showed the wrong currency."]


def test_a_table_matches_by_its_lead_in_line_or_first_column() -> None:
    block = best_block("Which three areas did the storage audit flag?", [REVIEW, AUDIT])
    assert block is not None and block.episode_id == "a" and len(block.items) == 3
    assert block.items[1].startswith("Finding area: Retention")


def test_no_block_without_a_number_or_of_another_size_or_without_shared_words() -> None:
    assert best_block("Which defects did the first attempt have?", [REVIEW]) is None
    assert best_block("Which four defects did the first attempt have?", [REVIEW]) is None
    # the page title's words do not count: "review" and "orbit" match every block of the page
    assert best_block("Which two things did the Orbit review cover?", [REVIEW]) is None


# a vendor register: a table whose rows carry a tier, one of them stated by the question
VENDORS = episode("v", "Vendor Programme", (
    "# Vendor Programme\n\nOwner: the platform group\n\n## Tiered vendors (register)\n\n"
    "Vendor: Northwind Hosting; Service: all compute; Tier: Essential; Exit: second region\n"
    "Vendor: Bluepeak Mail; Service: customer email; Tier: Minor; Exit: switch provider\n"
    "Vendor: Quarry Payments; Service: card acquiring; Tier: Essential; Exit: backup acquirer\n\n"
    "## Next\n\nReview the register in spring."))


@pytest.mark.parametrize(("question", "plural"), [
    ("Which vendors are rated 'Essential' in the register?", True),
    ("What are the services the platform group runs?", True),
    ("Which teams were merged last year?", True),
    ("Which company hosts the servers?", False),
    ("What does the platform group sell?", False),
    ("What is the exit plan?", False)])
def test_a_plural_which_question_asks_for_a_list(question: str, plural: bool) -> None:
    assert asks_plural(question) is plural


def test_the_rows_holding_a_value_the_question_states_are_listed() -> None:
    block = matching_rows("Which vendors are rated 'Essential' in the register?", [REVIEW, VENDORS])
    assert block is not None and block.episode_id == "v"
    assert [row.split(";")[0] for row in block.items] == ["Vendor: Northwind Hosting",
                                                          "Vendor: Quarry Payments"]


def test_no_rows_when_every_row_or_none_holds_the_value_or_the_question_is_singular() -> None:
    assert matching_rows("Which vendors are rated 'Critical' in the register?", [VENDORS]) is None
    # a value every row holds filters nothing
    everyone = episode("e", "Ops", "## Vendors\n\nVendor: A Co; Tier: Essential\n"
                       "Vendor: B Co; Tier: Essential")
    assert matching_rows("Which vendors are rated Essential?", [everyone]) is None
    assert matching_rows("Which vendor is rated 'Essential' in the register?", [VENDORS]) is None


def test_rows_holding_the_value_must_be_as_many_as_asked() -> None:
    two = "Which two vendors are rated 'Essential' in the register?"
    block = matching_rows(two, [VENDORS])
    assert block is not None and len(block.items) == 2
    assert matching_rows(two.replace("two", "three"), [VENDORS]) is None
