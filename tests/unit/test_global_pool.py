"""The question-wide pool of global search: merge, shortlist, score, select (fake inputs).

Semantic similarity comes from a fake: the share of the question's topic words a sentence
has, so each test states which sentences are about the question.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from knotwork.retrieval.config import GlobalSearchConfig
from knotwork.retrieval.global_pool import (
    merge_sources,
    rank_pool,
    score_pool,
    select_points,
    shortlist,
)
from knotwork.retrieval.global_rank import Candidate, TopicFocus
from knotwork.retrieval.lexical import terms

CFG = GlobalSearchConfig()
NO_FOCUS = TopicFocus()
QUESTION = "What happened during the warehouse flood and how was stock recovered?"


def _similar_to(question: str) -> Callable[[Sequence[Candidate]], list[float]]:
    """A fake cosine: the share of the question's terms a candidate has."""
    asked = set(terms(question))

    def similarity(candidates: Sequence[Candidate]) -> list[float]:
        return [0.15 + 0.7 * len(asked & set(terms(c.text))) / len(asked) for c in candidates]

    return similarity


def _sentence(text: str, community: str, chunk: str, prior: float = 0.3,
              document: str = "") -> Candidate:
    return Candidate(text, community, [chunk], prior=prior, document=document or chunk)


ON_TOPIC = [
    "The warehouse flood on 3 May ruined the ground-floor stock of the Riverside depot.",
    "Stock was recovered from the upper racks by the night shift within two days.",
    "After the flood the warehouse keeps its stock on raised racking above the flood line.",
    "Insurance covered the flood damage to stock after the assessor visited the warehouse.",
]
OFF_TOPIC = [
    "The canteen menu now includes a vegetarian option every weekday at lunch time.",
    "Quarterly all-hands meetings are held in the main auditorium on the first Friday.",
    "The company choir rehearses on Tuesday evenings in the staff room upstairs.",
    "Parking permits are renewed each January through the facilities desk portal.",
]


def _texts(points: Sequence[Candidate]) -> list[str]:
    return [p.text for p in points]


def test_a_relevant_sentence_of_a_weakly_relevant_community_reaches_the_pool() -> None:
    """Community relevance is no part of a point's score: the best-ranked community's
    off-topic sentences do not push out the flood sentence of a community ranked last."""
    strong = [_sentence(t, "strong", f"s{i}", prior=0.35) for i, t in enumerate(OFF_TOPIC)]
    weak = [_sentence(ON_TOPIC[0], "weak", "w0", prior=0.30)]
    cfg = GlobalSearchConfig(min_pool_points=1)
    pool, _ = rank_pool(QUESTION, [[], strong, weak], _similar_to(QUESTION), cfg, NO_FOCUS)
    assert pool and pool[0].text == ON_TOPIC[0]
    assert all(p.text not in OFF_TOPIC for p in pool)  # below the relative floor


def test_one_strong_point_does_not_leave_the_pool_alone() -> None:
    """In a small corpus the best point may score far above the rest: the pool still keeps
    ``min_pool_points`` of those above ``min_point_score``."""
    best = Candidate(ON_TOPIC[0], "a", ["c1"], score=0.9)
    rest = [Candidate(t, "b", [f"c{i + 2}"], score=0.3 - i / 100) for i, t in enumerate(ON_TOPIC[1:])]
    weak = Candidate(OFF_TOPIC[0], "b", ["c9"], score=0.1)
    kept = _texts(select_points([best, *rest, weak], CFG))
    assert kept == ON_TOPIC[: CFG.min_pool_points]
    assert _texts(select_points([best, *rest], GlobalSearchConfig(min_pool_points=1))) == [best.text]


def test_merging_two_communities_does_not_halve_a_topics_points() -> None:
    """The same sentences split over two communities or merged into one give the same pool."""
    def sentences(community_of: Sequence[str]) -> list[list[Candidate]]:
        groups: dict[str, list[Candidate]] = {}
        for i, (text, community) in enumerate(zip(ON_TOPIC + OFF_TOPIC, community_of, strict=True)):
            groups.setdefault(community, []).append(_sentence(text, community, f"c{i}"))
        return [[], *groups.values()]

    split = ["a", "a", "b", "b", "a", "a", "b", "b"]
    merged = ["ab"] * 8
    pool_split, _ = rank_pool(QUESTION, sentences(split), _similar_to(QUESTION), CFG, NO_FOCUS)
    pool_merged, _ = rank_pool(QUESTION, sentences(merged), _similar_to(QUESTION), CFG, NO_FOCUS)
    assert set(_texts(pool_merged)) == set(_texts(pool_split))
    assert len(pool_merged) >= 3 and set(_texts(pool_merged)) <= set(ON_TOPIC)


def test_near_duplicates_are_dropped_and_one_document_has_a_quota() -> None:
    first = _sentence("The warehouse flood on 3 May ruined the ground-floor stock.", "a", "c1")
    again = _sentence("On 3 May the warehouse flood ruined the ground-floor stock.", "b", "c2")
    other = _sentence("Stock was recovered from the upper racks within two days.", "a", "c3")
    for c, score in ((first, 0.8), (again, 0.79), (other, 0.6)):
        c.score = score
    assert _texts(select_points([first, again, other], CFG)) == [first.text, other.text]
    one_doc = [Candidate(text, "a", [f"c{i}"], document="report", score=0.9 - i / 100)
               for i, text in enumerate([*ON_TOPIC, *OFF_TOPIC])]
    kept = select_points(one_doc, CFG)
    assert len(kept) == CFG.points_per_document
    assert _texts(kept) == _texts(one_doc[: CFG.points_per_document])  # the best of them


def test_a_near_tie_goes_to_a_community_not_yet_heard() -> None:
    a1 = Candidate("The flood closed the Riverside depot for nine days in May.", "a", ["c1"],
                   communities=("a",), score=0.70)
    a2 = Candidate("Riverside stock losses were valued at 40,000 euros overall.", "a", ["c2"],
                   communities=("a",), score=0.69)
    b1 = Candidate("Harbour depot took over deliveries while Riverside was shut.", "b", ["c3"],
                   communities=("b",), score=0.685)
    ranked = _texts(select_points([a1, a2, b1], CFG))
    assert ranked == [a1.text, b1.text, a2.text]
    # a clear lead is not overridden by diversity
    b1.score = 0.5
    assert _texts(select_points([a1, a2, b1], CFG))[:2] == [a1.text, a2.text]


def test_nothing_relevant_enough_abstains() -> None:
    weak = Candidate("A sentence about nothing in particular at all here.", "a", ["c"], score=0.1)
    assert select_points([weak], CFG) == []
    assert select_points([], CFG) == []


def test_merge_keeps_each_text_once_with_every_community_and_the_best_chunk_score() -> None:
    retrieved = _sentence(ON_TOPIC[1], "", "c7", prior=0.6)
    cited = _sentence("  stock was RECOVERED from the upper racks by the night shift within two days. ",
                      "a", "c7", prior=0.2)
    fact = Candidate(ON_TOPIC[1], "b", ["c7"], fact_id="f1")
    merged = merge_sources([[retrieved], [cited], [fact]])
    assert len(merged) == 1
    only = merged[0]
    assert only.communities == ("a", "b") and only.community_id == "a"
    assert only.prior == 0.6 and only.fact_id == "f1"
    assert retrieved.communities == ()  # the inputs are not changed


def test_shortlist_ranks_the_whole_pool_and_caps_one_chunk() -> None:
    cfg = GlobalSearchConfig(max_candidates=4, shortlist_per_source=2)
    long_page = [_sentence(t, "a", "page", prior=0.5) for t in ON_TOPIC]
    other = [_sentence(OFF_TOPIC[0], "b", "other", prior=0.1),
             _sentence("Too short here.", "b", "other", prior=0.9)]
    theme = Candidate("Flood: warehouse, stock, recovery.", "a", ["page"], theme=True)
    short = shortlist(QUESTION, [*long_page, *other, theme], cfg)
    assert sum(c.chunk_ids == ["page"] and not c.theme for c in short) == 2
    assert "Too short here." not in _texts(short)  # fewer than min_point_terms words
    assert short[-1] is theme  # a theme the question does not ask for goes last
    assert shortlist(QUESTION, [theme, *other], cfg, themes=True)[0] is theme


def test_a_point_is_scored_by_its_own_chunk_not_its_community() -> None:
    cfg = CFG
    near = _sentence(ON_TOPIC[2], "a", "c1", prior=0.6)
    far = _sentence(ON_TOPIC[2] + " ", "b", "c2", prior=0.1)
    for c in (near, far):
        c.lexical = 0.5
    score_pool([near, far], [0.5, 0.5], cfg)
    assert abs(near.score - far.score - cfg.weight_chunk * 0.5) < 1e-6
    assert set(near.parts) == {"semantic", "lexical", "chunk", "specific", "bonus"}
    assert all(a.score >= b.score for a, b in itertools.pairwise([near, far]))


def test_a_point_naming_what_happened_outranks_a_vague_one_equally_similar() -> None:
    vague = _sentence("The flood was a difficult time for everyone working in the warehouse.",
                      "a", "c1")
    specific = _sentence("On 3 May the Riverside warehouse lost 1,200 pallets to the flood.",
                         "a", "c2")
    short = shortlist(QUESTION, [vague, specific], CFG)
    assert {c.text for c in short} == {vague.text, specific.text}
    assert specific.specific > vague.specific == 0.0
    for c in short:
        c.lexical = 0.5
    score_pool(short, [0.5, 0.5], CFG)
    assert specific.score > vague.score
