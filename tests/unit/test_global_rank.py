"""Global search ranking (communities, level, topics) and DRIFT coverage, on fake inputs."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import Community, Entity, EntityType
from knotwork.retrieval.config import GlobalSearchConfig
from knotwork.retrieval.drift import coverage, follow_ups, question_terms, relevant, uncovered_words
from knotwork.retrieval.global_rank import (
    Candidate,
    choose_level,
    expand_query,
    focus_points,
    score_communities,
    top_communities,
    topic_focus,
)

NOW = datetime(2025, 3, 20, tzinfo=UTC)
CFG = GlobalSearchConfig()


def _community(cid: str, level: int, name: str, summary: str = "", parent: str | None = None,
               children: tuple[str, ...] = (), size: int = 3) -> Community:
    return Community(id=cid, group_id="g", level=level, name=name, summary=summary,
                     parent_id=parent, child_ids=list(children), entity_count=size,
                     created_at=NOW, updated_at=NOW)


HIERARCHY = [
    _community("root", 1, "Engineering", "All engineering teams and systems.",
               children=("billing", "atlas"), size=6),
    _community("billing", 0, "Billing Service & Platform Team",
               "The Platform Team maintains the Billing Service. Outage postmortem.", "root"),
    _community("atlas", 0, "Project Atlas & Atlas Team",
               "Project Atlas is a telemetry platform built by the Atlas Team.", "root"),
]


def test_communities_rank_by_vector_and_lexical_relevance() -> None:
    relevance = score_communities("Who maintains the Billing Service?", HIERARCHY,
                                  {"atlas": 0.3, "billing": 0.3, "root": 0.2}, CFG)
    assert relevance["billing"] > relevance["atlas"]  # same vector score, BM25 decides
    # without lexical overlap the vector score decides
    vector_only = score_communities("xyzzy", HIERARCHY, {"atlas": 0.5, "billing": 0.1}, CFG)
    assert vector_only["atlas"] > vector_only["billing"] > vector_only["root"] == 0.0
    ranked = top_communities(HIERARCHY[1:], relevance, top_k=1, min_score=0.0)
    assert [c.id for c, _ in ranked] == ["billing"]
    assert top_communities(HIERARCHY, {"atlas": 0.01}, top_k=5, min_score=0.05) == []


def test_the_level_whose_partition_fits_best_is_chosen_ties_go_finer() -> None:
    level, fits = choose_level(HIERARCHY, {"root": 0.9, "billing": 0.2, "atlas": 0.1}, CFG)
    assert level == 1 and fits[1] > fits[0]
    level, _ = choose_level(HIERARCHY, {"root": 0.3, "billing": 0.8, "atlas": 0.6}, CFG)
    assert level == 0
    level, fits = choose_level(HIERARCHY, {}, CFG)
    assert level == 0 and fits == {0: 0.0, 1: 0.0}


def test_topic_words_bridge_analyst_questions_and_evidence() -> None:
    expanded = expand_query("What are the main risks?")
    assert "outage" in expanded and expanded.startswith("What are the main risks?")
    assert expand_query("Who leads Atlas?") == "Who leads Atlas?"


def _entity(name: str) -> Entity:
    return Entity(id=name.lower().replace(" ", "-"), group_id="g", name=name,
                  canonical_name=name.lower(), type=EntityType.PRODUCT, created_at=NOW,
                  updated_at=NOW)


def test_coverage_counts_question_terms_and_topic_evidence() -> None:
    stems = question_terms("What are the main risks of the Atlas launch?")
    assert "main" not in " ".join(stems) and len(stems) == 3  # risk, atla(s), launch
    assert coverage(stems, []) == 0.0
    assert coverage(stems, ["The Atlas launch moved to June 10."]) == round(2 / 3, 4)
    # "risk" is covered by risk evidence (an outage), not only by the word itself
    assert coverage(stems, ["The Atlas launch moved.", "The Billing Service outage."]) == 1.0
    assert coverage([], ["anything"]) == 1.0
    assert uncovered_words("What are the main risks of the Atlas launch?",
                           ["The Atlas launch moved."]) == ["risks"]


def test_follow_ups_ask_the_parts_first_then_primer_entities_with_what_is_missing() -> None:
    question = "What are the risks of the Atlas launch?"
    ups = follow_ups(question, ["When is the Atlas launch?"],
                     [_entity("Project Atlas"), _entity("Billing Service")],
                     ["The Atlas launch moved to June 10."], asked=set(), limit=4)
    assert [u.query for u in ups] == ["When is the Atlas launch?", "Project Atlas risks",
                                      "Billing Service risks"]
    assert ups[0].subject == "" and ups[1].subject == "Project Atlas"
    asked = {u.query.lower() for u in ups}
    assert follow_ups(question, ["When is the Atlas launch?"], [_entity("Project Atlas")],
                      ["The Atlas launch moved to June 10."], asked, limit=4) == []


def test_a_follow_up_finding_must_cover_more_than_its_own_subject() -> None:
    stems = question_terms("What are the risks of the Atlas launch?")
    found = ["Project Atlas is a telemetry platform.", "The Atlas launch moved to June 10."]
    assert relevant(found, stems, subject="Project Atlas") == [found[1]]
    assert relevant(found, stems) == found


def _scored(text: str, score: float, theme: bool = False) -> Candidate:
    return Candidate(text, "c", ["e"], theme=theme, score=score)


def test_points_on_none_of_the_asked_topics_lose_to_the_ones_on_it() -> None:
    """Asked for the incidents, a sentence that only names the organisation (the question's
    other words) no longer outranks the outage sentences."""
    meta = _scored("This page lists the engineering staff of Northwind Robotics.", 0.64)
    outage = _scored("On February 11 the Billing Service was unavailable for 47 minutes.", 0.40)
    commander = _scored("Sofia Lindqvist was the incident commander.", 0.36)
    theme = _scored("Platform Team: billing, on-call.", 0.30, theme=True)
    points = [meta, outage, commander, theme]
    focus_points(points, topic_focus("Summarize the incidents Northwind engineering had."))
    ranked = [p.text for p in sorted(points, key=lambda p: -p.score)]
    assert ranked[:2] == [outage.text, commander.text]
    assert theme.score == 0.30  # a community's theme is kept as scored


def test_technology_questions_keep_points_naming_a_technology() -> None:
    points = [_scored("Architecture and tooling decisions for Northwind engineering.", 0.67),
              _scored("Project Atlas uses Apache Kafka for telemetry ingestion.", 0.34)]
    focus = topic_focus("What are the main technologies used across Northwind engineering?")
    assert focus.technology  # "technologies" names the topic although it stems differently
    focus_points(points, focus)
    assert max(points, key=lambda p: p.score).text.startswith("Project Atlas uses")


def test_questions_naming_no_listable_topic_are_left_alone() -> None:
    for question in ("What is Project Atlas about?", "What does the Security Team work on?",
                     "Give an overview of the Billing Service."):
        assert not topic_focus(question)
    points = [_scored("The Atlas Team builds Project Atlas.", 0.88)]
    focus_points(points, topic_focus("What is Project Atlas about?"))
    assert points[0].score == 0.88
