"""Why-questions prefer the evidence that states a cause."""

from __future__ import annotations

from dataclasses import dataclass

from knotwork.retrieval.reasons import asks_why, reason_bonus


@dataclass
class Cand:
    text: str
    bonus: float = 0.0
    display: str = ""
    context: str = ""


def test_why_questions_are_recognised() -> None:
    assert asks_why("Why was RabbitMQ replaced?")
    assert asks_why("What was the reason for the freeze?")
    assert asks_why("What was the root cause of the outage?")
    assert asks_why("What caused the outage?")
    assert not asks_why("Who replaced RabbitMQ?")
    assert not asks_why("What does the billing service use?")


def test_a_cause_about_the_subject_gains_for_why_only() -> None:
    restates = Cand("We will replace RabbitMQ with NATS.", bonus=0.1)
    cause = Cand("The decision was made because JetStream gives replayable streams.",
                 context="ADR-4 Replace RabbitMQ with NATS")
    labelled = Cand("Costs tripled after the pricing change.", display="Reason: Costs tripled after "
                    "the pricing change.", context="Vendor review RabbitMQ")
    unrelated = Cand("The picnic moved because of rain.")
    under_heading = Cand("A partition rebalance stalled the RabbitMQ consumers.",
                         context="Incident review Root cause")
    units = [restates, cause, labelled, unrelated, under_heading]
    reason_bonus("Why was RabbitMQ replaced with NATS?", units, 0.2)
    assert restates.bonus == 0.1
    assert cause.bonus == 0.2
    assert labelled.bonus == 0.2  # "Reason:" label shown before the sentence
    assert unrelated.bonus == 0.0  # a cause of something else
    assert under_heading.bonus == 0.2
    other = Cand("The decision was made because JetStream gives replayable streams.",
                 context="ADR-4 Replace RabbitMQ with NATS")
    reason_bonus("What does RabbitMQ replace?", [other], 0.2)
    assert other.bonus == 0.0
