"""Composing the global answer: dense, distinct key points first, within a word budget."""

from __future__ import annotations

from knotwork.retrieval.global_compose import compose, specifics
from knotwork.retrieval.global_rank import Candidate


def _point(text: str, score: float) -> Candidate:
    return Candidate(text=text, community_id="c1", chunk_ids=["ch"], score=score)


def test_specifics_are_names_and_figures_but_not_the_opening_word() -> None:
    found = specifics("The audit by Halden Bank on 12.03.2024 found 2 issues in RFC-0007.")
    assert {"halden", "bank", "12.03.2024", "2", "rfc-0007"} <= found
    assert "the" not in found and "audit" not in found


def test_a_speaker_prefix_is_no_specific_of_its_own() -> None:
    assert "mira" not in specifics("Mira: the rollout starts Monday")


def test_a_dense_point_goes_before_a_slightly_more_relevant_vague_one() -> None:
    vague = _point("The rollout of the new payments page went well overall and everyone was "
                   "pleased with how the work was organised across the teams.", 0.60)
    dense = _point("Kite v2 went live on 04.11.2024 for Orla Foods after two failed audits.", 0.55)
    chosen = compose([vague, dense], "How did the rollout go?", budget_words=120, max_points=5)
    assert chosen[0] is dense


def test_a_point_repeating_only_what_was_said_is_left_out() -> None:
    first = _point("Kite v2 went live on 04.11.2024 for Orla Foods.", 0.9)
    again = _point("On 04.11.2024 Kite v2 went live, for Orla Foods.", 0.8)
    other = _point("Wren Bank signed the Kite contract in March 2023.", 0.5)
    chosen = compose([first, again, other], "Describe Kite.", budget_words=120, max_points=5)
    assert again not in chosen and first in chosen and other in chosen


def test_the_budget_stops_adding_points() -> None:
    pool = [_point(f"Team {chr(65 + i)} moved to Office {i} in 20{10 + i} with Lead {i}.", 1 - i / 20)
            for i in range(10)]
    chosen = compose(pool, "How did the teams change?", budget_words=25, max_points=10)
    assert 2 <= len(chosen) <= 3


def test_the_questions_own_names_count_less_than_new_ones() -> None:
    echo = _point("Project Kite is the Kite project of Kite Team.", 0.6)
    new = _point("Omar Diallo and Lena Berg took over in May.", 0.6)
    chosen = compose([echo, new], "Summarise Project Kite.", budget_words=120, max_points=1)
    assert chosen == [new]

