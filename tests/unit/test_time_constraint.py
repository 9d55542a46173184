"""The time constraint a question states (named patterns) and how candidates fit it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Fact, RelationType
from knotwork.retrieval.time_constraint import (
    TimeConstraint,
    asks_two_times,
    dates_in,
    resolve_event,
    time_constraint,
)
from knotwork.retrieval.time_fit import Candidate, answer_time, candidate, time_bonus, time_fit

NOW = datetime(2026, 6, 15, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "kind", "rule"),
    [
        ("Who led the Harbor Team in August 2024?", "dated", "dated:middle"),
        ("Which vendor ran payments as of March 2025?", "dated", "dated:end"),
        ("Who led the Harbor Team on 10.03.2025?", "dated", "dated:numeric"),
        ("Who leads the Harbor Team now?", "current", "current:now"),
        ("Who is currently in charge of the Pricing Engine?", "current", "current:currently"),
        ("Who reports to the current lead of the Harbor Team?", "current", "current:current"),
        ("Who originally built the Pricing Engine?", "past", "past:originally"),
        ("Who previously owned the Pricing Engine?", "past", "past:previously"),
        ("Which vendor did we use before the switch to Bluefin Labs?", "past", "past:before-event"),
        ("What did Mira Holt lead before?", "past", "past:before-then"),
        ("Where was Mira Holt based before that?", "past", "past:before-then"),
        ("Who held the budget before then, and why?", "past", "past:before-then"),
        ("When did the Pricing Engine actually go live?", "actual", "actual:actually"),
        (
            "Who led the Harbor Team when the checkout outage happened?",
            "event",
            "event:when-happened",
        ),
        ("Where was Ondrej Vasko based during the spring hackathon?", "event", "event:during"),
        ("Who was on call at the Pricing Engine launch?", "event", "event:at-the-event"),
        (
            "Which team owned billing on the day Bluefin Labs went live?",
            "event",
            "event:on-the-day",
        ),
    ],
)
def test_each_pattern_fires_with_its_name(question: str, kind: str, rule: str) -> None:
    found = time_constraint(question, NOW)
    assert found is not None and (found.kind, found.rule) == (kind, rule), found


def test_a_dated_question_carries_its_point_in_time() -> None:
    found = time_constraint("Who led the Harbor Team in August 2024?", NOW)
    assert found is not None and found.when is not None
    assert (found.when.year, found.when.month) == (2024, 8)
    numeric = time_constraint("Who led it on 03.02.2025?", NOW)
    assert numeric is not None and numeric.when is not None
    assert (numeric.when.month, numeric.when.day) == (2, 3)  # dots: day first


def test_no_constraint_without_time_words_or_with_two_times() -> None:
    assert time_constraint("Who leads the Harbor Team?", NOW) is None
    assert (
        time_constraint("Who led the Harbor Team in May 2024, and who leads it now?", NOW) is None
    )


def test_a_premise_date_is_not_the_question_time() -> None:
    found = time_constraint(
        "The plan targeted a launch on 1 October 2024. When did the Pricing "
        "Engine actually launch?",
        NOW,
    )
    assert found is not None and found.kind == "actual"


def test_count_and_list_questions_get_no_time_term() -> None:
    assert answer_time("How many people led the Harbor Team in 2024?", NOW) is None
    assert answer_time("Who led the Harbor Team in 2024?", NOW) is not None


def test_an_event_is_dated_by_the_evidence_that_names_it_best() -> None:
    asked = time_constraint("Who led the Harbor Team when the checkout outage happened?", NOW)
    assert asked is not None and asked.when is None
    written = datetime(2025, 3, 1, tzinfo=UTC)
    evidence = [
        ("The checkout outage on 14 February 2025 lasted two hours.", written),
        ("Harbor Team planning notes for 2 March 2025.", written),
    ]
    dated = resolve_event(asked, evidence)
    assert dated.when is not None and (dated.when.month, dated.when.day) == (2, 14)
    assert resolve_event(asked, [("Unrelated text on 2 March 2025.", written)]).when is None


def test_before_an_event_is_just_before_its_date() -> None:
    asked = time_constraint("Which vendor did we use before the switch to Bluefin Labs?", NOW)
    assert asked is not None
    dated = resolve_event(
        asked,
        [("The switch to Bluefin Labs happened on 2025-04-01.", datetime(2025, 4, 2, tzinfo=UTC))],
    )
    assert (
        dated.kind == "past"
        and dated.when is not None
        and dated.when < datetime(2025, 4, 1, tzinfo=UTC)
    )


def test_an_event_loses_the_clause_that_describes_it() -> None:
    led = time_constraint("Which tool did we use before the rewrite led by the new architect?", NOW)
    assert led is not None and (led.kind, led.event) == ("past", "the rewrite")
    which = time_constraint("Who was on call during the outage which hit the gateway?", NOW)
    assert which is not None and which.event == "the outage"
    plain = time_constraint("Which vendor did we use before the switch to Bluefin Labs?", NOW)
    assert plain is not None and plain.event == "the switch to Bluefin Labs"
    dated = resolve_event(
        led, [("The rewrite began on 3 May 2025.", datetime(2025, 5, 4, tzinfo=UTC))]
    )
    assert dated.when is not None and dated.when < datetime(2025, 5, 3, tzinfo=UTC)


def test_a_bare_before_does_not_take_a_following_event() -> None:
    found = time_constraint("Who ran the desk before the audit?", NOW)
    assert found is not None and found.rule == "past:before-event"


def test_dates_in_reads_word_iso_and_numeric_dates() -> None:
    written = datetime(2025, 1, 1, tzinfo=UTC)
    found = dates_in("Moved on 16.03.2025, planned for 2024-11-30, signed March 3, 2025.", written)
    assert [(d.month, d.day) for d in found] == [(3, 16), (11, 30), (3, 3)]


def _at(when: datetime) -> TimeConstraint:
    return TimeConstraint("dated", "dated:middle", "in …", when)


def test_a_fact_valid_then_fits_one_that_ended_or_began_later_does_not() -> None:
    aug = datetime(2024, 8, 15, tzinfo=UTC)
    older = Candidate(
        datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 10, 1, tzinfo=UTC), None, fact=True
    )
    newer = Candidate(datetime(2024, 10, 1, tzinfo=UTC), None, None, fact=True)
    assert time_fit(_at(aug), older, NOW) == 1.0
    assert time_fit(_at(aug), newer, NOW) < 0
    assert time_fit(_at(datetime(2025, 1, 1, tzinfo=UTC)), older, NOW) == -1.0


def test_current_past_and_actual_kinds() -> None:
    ended = Candidate(
        datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC), None, fact=True
    )
    holds = Candidate(datetime(2024, 1, 1, tzinfo=UTC), None, None, fact=True)
    current = TimeConstraint("current", "current:now", "now")
    past = TimeConstraint("past", "past:previously", "previously")
    assert time_fit(current, holds, NOW) > time_fit(current, ended, NOW)
    assert time_fit(past, ended, NOW) > time_fit(past, holds, NOW)
    actual = TimeConstraint("actual", "actual:actually", "actually")
    plan = candidate("The launch is planned for May.", None, NOW, 0.5)
    done = candidate("The launch happened on 3 June.", None, NOW, 0.5)
    assert time_fit(actual, done, NOW) > time_fit(actual, plan, NOW)


def test_undated_sentences_written_before_the_time_fit_better_than_later_ones() -> None:
    aug = datetime(2024, 8, 15, tzinfo=UTC)
    before = candidate(
        "Ondrej Vasko leads the Harbor Team.", None, datetime(2024, 7, 1, tzinfo=UTC), 0.0
    )
    later = candidate(
        "Marta Vasko leads the Harbor Team.", None, datetime(2025, 2, 1, tzinfo=UTC), 1.0
    )
    assert time_fit(_at(aug), before, NOW) > time_fit(_at(aug), later, NOW)


class _U:
    def __init__(self, text: str, fact: Fact | None, time: datetime | None) -> None:
        self.text, self.fact, self.time, self.bonus, self.parts = text, fact, time, 0.0, {}


def test_time_bonus_weighs_facts_by_their_interval() -> None:
    def fact(name: str, start: datetime, end: datetime | None) -> Fact:
        return Fact(
            id=name,
            group_id="g",
            source_id=name,
            target_id="team",
            type=RelationType.LEADS,
            fact=f"{name} leads the Harbor Team.",
            valid_at=start,
            invalid_at=end,
            created_at=start,
        )

    old = _U(
        "Ondrej leads.",
        fact("ondrej", datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 10, 1, tzinfo=UTC)),
        None,
    )
    new = _U("Marta leads.", fact("marta", datetime(2024, 10, 1, tzinfo=UTC), None), None)
    moved = time_bonus(_at(datetime(2024, 8, 15, tzinfo=UTC)), [old, new], 0.15, NOW)
    assert moved == 2 and old.bonus > 0 > new.bonus
    assert old.parts["time"] == 1.0
    assert time_bonus(_at(NOW), [old], 0.0, NOW) == 0


def test_actually_with_a_date_keeps_the_date_and_ranks_the_plan_down() -> None:
    asked = time_constraint(
        "The rollout plan targeted spring. Which database was the shop actually using in "
        "May 2025?",
        NOW,
    )
    assert asked is not None and asked.kind == "dated" and asked.actual
    assert "not the plan" in asked.describe()
    written = datetime(2025, 2, 1, tzinfo=UTC)
    plan = candidate("Target: the new database is planned to be live by April.", None, written, 0.5)
    ran = candidate("The shop runs on the old database.", None, written, 0.5)
    assert time_fit(asked, ran, NOW) > time_fit(asked, plan, NOW)
    plain = time_constraint("Which database was the shop using in May 2025?", NOW)
    assert plain is not None and not plain.actual
    assert time_fit(plain, plan, NOW) == time_fit(plain, ran, NOW)


def test_a_question_about_then_and_now_asks_two_times() -> None:
    assert asks_two_times("Where was Mira Holt based before July 2024, and where is she now?", NOW)
    assert asks_two_times("Who led the desk previously, and who leads it today?", NOW)
    assert not asks_two_times("Where was Mira Holt based before July 2024?", NOW)
    assert not asks_two_times("Where is Mira Holt based now?", NOW)


def test_a_stated_time_that_rules_a_sentence_out_costs_more_than_the_weight() -> None:
    aug = _at(datetime(2024, 8, 15, tzinfo=UTC))
    written = datetime(2024, 12, 1, tzinfo=UTC)
    ended = _U("Mira Holt ran the desk until 30 June 2024.", None, written)
    later = _U("Mira Holt runs the desk since 1 October 2024.", None, written)
    holds = _U("Mira Holt ran the desk from 1 May 2024 until 1 November 2024.", None, written)
    assert time_bonus(aug, [ended, later, holds], 0.1, NOW, contradiction=0.2) == 3
    assert ended.parts["time"] == -1.0 and later.parts["time"] == -1.0
    assert ended.bonus == later.bonus == -0.1 - 0.2
    assert holds.bonus == 0.1
    plain = _U("Mira Holt ran the desk until 30 June 2024.", None, written)
    time_bonus(aug, [plain], 0.1, NOW)
    assert plain.bonus == -0.1
