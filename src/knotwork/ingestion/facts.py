"""Fact bookkeeping (pure): dedup against existing facts, contradiction of functional facts.

Without an LLM, a newer fact ends an older one when the relation is functional (a person
works at one company, has one manager; a company has one headquarters), or when its sentence
states a change ("took over", "is now led by", "moved to", "replaced") and the relation has
one holder per target (leads, manages, owns, maintains) or one per source (member of, located in).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from knotwork.domain.evidence import (
    aligned_confidences,
    aligned_valid_at,
    earliest,
    evidence_confidence,
)
from knotwork.domain.ids import stable_id
from knotwork.domain.models import Fact, RelationType

# A person works at one company and reports to one manager; a company has one headquarters.
# (A project may have several leads at once: a tech lead, a product owner…, so LEADS is not.)
FUNCTIONAL_BY_SOURCE = frozenset({RelationType.WORKS_AT, RelationType.REPORTS_TO,
                                  RelationType.HEADQUARTERED_IN})
FUNCTIONAL_BY_TARGET: frozenset[RelationType] = frozenset()

# With explicit change language in the newer fact's sentence ("took over", "is now led by",
# "moved to", "replaced"), these become functional too: the new holder ends the old one.
CHANGE_BY_TARGET = frozenset({RelationType.LEADS, RelationType.MANAGES, RelationType.OWNS,
                              RelationType.MAINTAINS})
CHANGE_BY_SOURCE = frozenset({RelationType.MEMBER_OF, RelationType.LOCATED_IN})
CHANGE_LANGUAGE = re.compile(
    r"\b(?:took|takes|taking|take|taken)\s+over\b|\b(?:is|are)\s+now\b|\bnow\s+(?:led|run|headed|"
    r"managed|owned|maintained|leads|runs|heads|manages|owns|maintains|reports|works|based|"
    r"lives|sits|part)\b|\breplac(?:e|es|ed|ing)\b|\bsucceed(?:s|ed|ing)?\b|"
    r"\bhand(?:s|ed|ing)?\s+(?:it\s+|\w+\s+)?over\b|\bmov(?:e|es|ed|ing)\s+(?:\w+\s+){0,3}to\b|"
    r"\btransferr(?:ed|ing)\s+to\b|\brelocat\w+\b|\bno\s+longer\b|"
    r"\b(?:mov(?:e|es|ed|ing)|transferr?(?:s|ed|ing)?|switch(?:es|ed|ing)?)\s+from\b|"
    r"\bnew\s+(?:lead|owner|manager|head|home)\b|\bfrom\s+(?:today|now\s+on)\b|"
    r"\bstep(?:s|ped)?\s+(?:down|in)\b|\btakes?\s+the\s+helm\b|\binstead\s+of\b|"
    r"\b(?:becomes|became|becoming)\s+(?:the\s+)?(?:new\s+)?(?:[\w/&-]+\s+){0,3}?(?:lead|leader|head|"
    r"owner|manager|director|producer|chair)\b",
    re.IGNORECASE)


# A person joining or switching to a team leaves the old one ("joined the Payments team",
# "switched to Search", "is now on Billing"); said of a holder ("joined as lead") it is no
# hand-over, so this only counts for relations with one holder per source.
SOURCE_CHANGE_LANGUAGE = re.compile(
    r"\b(?:re)?join(?:s|ed|ing)\b|\bswitch(?:es|ed|ing)?\s+(?:\w+\s+){0,2}(?:to|into)\b|"
    r"\b(?:is|are|am)\s+now\s+(?:on|in|with|part\s+of)\b|\bnew\s+(?:team|squad|group)\b",
    re.IGNORECASE)


def states_change(sentence: str) -> bool:
    """Does the sentence say something changed hands (not just another holder)?"""
    return CHANGE_LANGUAGE.search(sentence) is not None


def states_source_change(sentence: str) -> bool:
    """Does the sentence say its subject changed (team, place), e.g. "Ana joined Search"?"""
    return states_change(sentence) or SOURCE_CHANGE_LANGUAGE.search(sentence) is not None


def fact_key(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def fact_id(group_id: str, source: str, target: str, rtype: RelationType, text: str) -> str:
    if rtype is RelationType.RELATED_TO:
        return stable_id(group_id, "fact", source, target, rtype, fact_key(text))
    return stable_id(group_id, "fact", source, target, rtype)


def same_fact(a: Fact, b: Fact) -> bool:
    if (a.source_id, a.target_id, a.type) != (b.source_id, b.target_id, b.type):
        return False
    return a.type is not RelationType.RELATED_TO or fact_key(a.fact) == fact_key(b.fact)


def merge_into(existing: Fact, new: Fact) -> Fact:
    """The same fact seen again: append its episodes, keep the earliest validity; a sighting
    that says it ended ("moves from the Fraud Team") ends an open one. The confidence is the
    one the combined evidence gives (an episode seen twice counts once, at its best).

    A stored fact whose evidence was all withdrawn (its document edited or re-added) is
    defined by the new sighting, as in a fresh ingest: its sentence, validity and method; it
    keeps its id and ``created_at``, and an end a newer fact gave it (``expired_at`` set)."""
    if not existing.episodes:
        superseded = existing.expired_at is not None
        return new.model_copy(update={
            "id": existing.id, "created_at": existing.created_at,
            "invalid_at": existing.invalid_at if superseded else new.invalid_at,
            "expired_at": existing.expired_at if superseded else new.expired_at,
            "invalidated_by": existing.invalidated_by if superseded else new.invalidated_by})
    support = dict(zip(existing.episodes, aligned_confidences(
        existing.confidence, existing.episodes, existing.episode_confidences), strict=True))
    starts = dict(zip(existing.episodes, aligned_valid_at(
        existing.valid_at, existing.episodes, existing.episode_valid_at), strict=True))
    for episode, confidence, start in zip(new.episodes, aligned_confidences(
            new.confidence, new.episodes, new.episode_confidences), aligned_valid_at(
            new.valid_at, new.episodes, new.episode_valid_at), strict=True):
        support[episode] = max(confidence, support.get(episode, confidence))
        starts[episode] = earliest([starts.get(episode), start])
    episodes = list(support)
    valid_at = earliest(list(starts.values()))
    invalid_at = existing.invalid_at
    if invalid_at is None and new.invalid_at is not None and (
            valid_at is None or new.invalid_at > valid_at):
        invalid_at = new.invalid_at
    per_episode = list(support.values())
    return existing.model_copy(update={
        "episodes": episodes,
        "episode_confidences": per_episode,
        "episode_valid_at": list(starts.values()),
        "valid_at": valid_at,
        "invalid_at": invalid_at,
        "confidence": evidence_confidence(per_episode, max(existing.confidence, new.confidence)),
    })


def contradictions(new: Fact, existing: Iterable[Fact], now: datetime,
                   same_kind: Callable[[str, str], bool] | None = None) -> list[Fact]:
    """Older valid facts a new functional fact supersedes, with invalid_at set.

    ``same_kind(a, b)``: are entities a and b the same kind of holder (a person, a team …)?
    A change stated in words only replaces a holder of the same kind ("Sofia takes over the
    on-call for the Billing Service" ends Daniel's on-call, not the Payments Team's ownership);
    without it, no change-language contradiction is drawn.
    """
    out: list[Fact] = []
    if new.invalid_at is not None:
        return out  # a fact that has already ended supersedes nothing
    functional_source = new.type in FUNCTIONAL_BY_SOURCE or (
        new.type in CHANGE_BY_SOURCE and states_source_change(new.fact))
    functional_target = new.type in FUNCTIONAL_BY_TARGET or (
        new.type in CHANGE_BY_TARGET and states_change(new.fact))
    if not (functional_source or functional_target):
        return out  # neither one holder per source nor per target: nothing is superseded
    new_episodes = set(new.episodes)
    for old in existing:
        if old.type is not new.type or old.invalid_at is not None or old.id == new.id:
            continue
        if not new_episodes.isdisjoint(old.episodes) and (
                new.type in FUNCTIONAL_BY_SOURCE or new_episodes.issuperset(old.episodes)):
            # "headquartered in Austin, Texas": one statement, not a change (a hand-over
            # sentence that also names the old holder still ends a fact stated before it)
            continue
        by_source = functional_source and old.source_id == new.source_id \
            and old.target_id != new.target_id
        by_target = functional_target and old.target_id == new.target_id \
            and old.source_id != new.source_id
        if by_source and new.type not in FUNCTIONAL_BY_SOURCE:
            by_source = same_kind is not None and same_kind(old.target_id, new.target_id)
        if by_target and new.type not in FUNCTIONAL_BY_TARGET:
            by_target = same_kind is not None and same_kind(old.source_id, new.source_id)
        if not (by_source or by_target):
            continue
        if old.valid_at is not None and new.valid_at is not None and old.valid_at > new.valid_at:
            continue  # the "new" fact is older news: it does not end the newer one
        out.append(old.model_copy(update={"invalid_at": new.valid_at or now, "expired_at": now,
                                          "invalidated_by": new.id}))
    return out


def unique_by_id(facts: Sequence[Fact]) -> list[Fact]:
    return list({f.id: f for f in facts}.values())
