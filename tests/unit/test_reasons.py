"""Why-questions prefer the evidence that states a cause."""

from __future__ import annotations

from dataclasses import dataclass

from knotwork.retrieval.reasons import asks_why, duration_bonus, reason_bonus, reason_first


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
    assert restates.bonus == 0.0  # restating the change explains nothing: it loses half
    assert cause.bonus == 0.2
    assert labelled.bonus == 0.2  # "Reason:" label shown before the sentence
    assert unrelated.bonus == 0.0  # a cause of something else
    assert under_heading.bonus == 0.2
    other = Cand("The decision was made because JetStream gives replayable streams.",
                 context="ADR-4 Replace RabbitMQ with NATS")
    reason_bonus("What does RabbitMQ replace?", [other], 0.2)
    assert other.bonus == 0.0


def test_a_duration_answers_how_long() -> None:
    lasted = Cand("Checkout was down for 2 hours 10 minutes.")
    when = Cand("Checkout went down on 3 May.")
    duration_bonus("How long did the Checkout outage last?", [lasted, when], 0.2)
    assert (lasted.bonus, when.bonus) == (0.2, 0.0)
    duration_bonus("How long ago did Checkout go down?", [lasted], 0.2)
    assert lasted.bonus == 0.2


def test_a_close_second_that_states_the_cause_goes_first() -> None:
    ranked = [("Ledgerly moves to Postgres in Q4.", "Ledgerly", 0.8),
              ("The CFO approved it.", "Ledgerly", 0.78),
              ("The reason is licence cost.", "Ledgerly", 0.72), ("Because of rain.", "", 0.3)]
    assert reason_first("Why is Ledgerly moving to Postgres?", ranked) == 2
    assert reason_first("When is Ledgerly moving to Postgres?", ranked) is None
    assert reason_first("Why is Ledgerly moving?", [ranked[0], ranked[3]]) is None  # too weak
    # a sentence under a "Why" heading gives the cause without saying "because"
    under_why = [ranked[0], ("Two schedulers were left running.", "Review of the double run Why", 0.75)]
    assert reason_first("Why did the batch run twice?", under_why) == 1
