"""Open questions are answered by an account; the wording rules and the question-verb rule."""

from __future__ import annotations

import pytest

from knotwork.retrieval.open_questions import open_question, without_question_verb


@pytest.mark.parametrize(("question", "rule"), [
    ("Describe the billing team's move to the new ledger.", "imperative-account"),
    ("Please summarise the warehouse rollout.", "imperative-account"),
    ("Walk me through the outage of the login service.", "imperative-account"),
    ("How did the support rota change last year?", "how-process"),
    ("How does the nightly export work?", "how-process"),
    ("Why did the studio drop its old engine?", "why"),
    ("What happened during the payroll outage?", "what-happened"),
    ("What has the finance team done to prepare for the audit?", "what-was-done"),
    ("What role does the courier partner play?", "what-role"),
])
def test_an_account_question_is_open(question: str, rule: str) -> None:
    assert open_question(question) == rule


@pytest.mark.parametrize("question", [
    "Who leads the billing team?",
    "When did the warehouse rollout finish?",
    "How many people work in the Oslo office?",
    "How much does the courier partner charge per parcel?",
    "How long did the outage last?",
    "What database does the export service use?",
    "Which team owns the login service?",
    "What did the finance team do with the old invoices?",
])
def test_a_question_for_one_value_is_not_open(question: str) -> None:
    assert open_question(question) is None


def test_an_opening_imperative_is_not_part_of_a_name() -> None:
    q = "Describe Brightwater's payment rollout."
    assert without_question_verb("Describe Brightwater's", q) == "Brightwater's"
    assert without_question_verb("Summarise the Osprey Project", "Summarise the Osprey Project.") \
        == "Osprey Project"
    # only at the question's start: a name that holds such a word elsewhere stays whole
    assert without_question_verb("Show Control", "Who runs Show Control?") == "Show Control"
    assert without_question_verb("Lena Ward", "Describe what Lena Ward did.") == "Lena Ward"
    assert without_question_verb("Describe", "Describe it.") == ""

