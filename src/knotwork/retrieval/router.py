"""AUTO mode: which query mode a question needs (rule-based, no LLM).

- entity-specific ("Who leads Project Atlas?", multi-hop chains too) → local;
- corpus-wide ("main risks", "overall", "across", "summarize", "what are the themes", or a
  broad topic while naming no entity) → global;
- multi-part (several questions, clauses joined by "and", or "X and Y" of two known
  entities) → DRIFT, whose follow-ups are the parts (:func:`split_parts`).

Pure: the caller says which known entity names the question contains.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from knotwork.domain.models import QueryMode
from knotwork.retrieval.chain_plan import plan as chain_plan

_WH = r"(?:who|whom|whose|what|when|where|which|why|how)"
_AUX = r"(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)"
_THEMES = (r"(?:risks?|themes?|topics?|issues?|problems?|challenges?|concerns?|trends?|"
           r"priorities|lessons|patterns?|takeaways?|highlights?|decisions|incidents|changes)")
SUMMARY_CUE = "asks for a summary"
_CORPUS_CUES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), why) for p, why in (
        # one modifier, or two joined ("the major technical and staffing changes")
        (r"\b(?:main|key|major|biggest|top|overall|common|recurring|general|important)\s+"
         r"(?:\w+\s+)?(?:(?:and|or)\s+\w+\s+)?" + _THEMES + r"\b", "asks for the main themes"),
        (r"\bwhat\s+(?:are|were)\s+(?:the\s+)?(?:\w+\s+)?(?:themes?|topics?)\b",
         "asks for the themes"),
        (r"\boverall\b", "says 'overall'"),
        (r"\bacross\b", "says 'across'"),
        (r"\bsummari[sz](?:e|es|ed|ing|ation)\b|\bsummary\b", SUMMARY_CUE),
        (r"\boverview\b|\bbig(?:ger)? picture\b|\bhigh[- ]level\b|\bin general\b",
         "asks for an overview"),
    ))
ACCOUNT_CUE = "asks for an account"
# questions asking for an account of something (its course, its parts, what came of it): an
# overview composed from many pages, even when the question names the thing. Written from the
# development questions of both corpora (so not a held-out figure): 19 of their 20 account
# questions match, 0 of their 130 other questions.
ACCOUNT_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\bsummari[sz]e\b|\bdescribe\b|\bhistory\b", "a summary or description"),
    (r"\bhow\s+(?:did|has|have)\s+.{0,60}?\b(?:change|changed|evolve|evolved|develop|developed"
     + r"|respond|responded|go)\b", "how something changed or went"),
    (r"\bwhat\s+(?:happened|changed|slipped)\b", "what happened or changed"),
    (r"\bhow\s+(?:do|does)\s+.{0,60}?\b(?:handle|work|manage)\b", "how something is done"),
    (r"\bwhat\s+roles?\s+(?:do|does|did)\b", "the roles of several things"),
    (r"\bwhat\s+lessons?\b|\bwhat\s+did\s+.{0,60}?\bteach\b", "the lessons"),
    (r"\bwhy\s+and\s+how\b", "why and how"),
    (r"\bwhat\s+(?:has|have)\s+\S+(?:\s+\S+)?\s+done\b", "what was done"),
    (r"\bmilestones\b", "the milestones"),
)
_ACCOUNT = tuple((re.compile(p, re.IGNORECASE), why) for p, why in ACCOUNT_PATTERNS)


def account_cue(question: str) -> str | None:
    """What kind of account the question asks for, or None."""
    return next((why for pattern, why in _ACCOUNT if pattern.search(question)), None)


# a broad topic: a plural (or collective) noun the question asks about
_BROAD_TOPIC = re.compile(
    r"^\s*(?:what|which|list|name)\s+(?:(?:are|were|have been|kinds? of|types? of|all)\s+)?"
    r"(?:the\s+|all\s+(?:the\s+)?|our\s+)?(?:\w+\s+)?(?P<noun>[a-z]{3,}(?<!ss)s)\b",
    re.IGNORECASE)
_BROAD_WORDS = re.compile(r"\b(?:list\s+(?:all|every)|all\s+the|everything|in\s+total)\b"
                          + r"|\b" + _THEMES + r"\b", re.IGNORECASE)
_NOT_TOPICS = frozenset({"does", "is", "was", "has", "this", "its", "his", "hers", "yours",
                         "ours", "theirs", "always", "sometimes", "perhaps", "whereas"})
_SENTENCE_QUESTIONS = re.compile(r"(?<=\?)\s+(?=\S)")
_CLAUSE_AND = re.compile(r"(?:,\s*|\s+)(?:and|and also|also|;)\s+(?=(?:" + _WH + r"|" + _AUX
                         + r")\b)|\s*;\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Route:
    mode: QueryMode
    reason: str
    parts: tuple[str, ...] = ()  # the sub-questions of a multi-part question


def corpus_cue(question: str) -> str | None:
    """Why the question is corpus-wide by its wording, or None."""
    for pattern, why in _CORPUS_CUES:
        if pattern.search(question):
            return why
    return None


def asks_for_themes(question: str) -> bool:
    return bool(re.search(r"\b(?:themes?|topics?|areas?|summari[sz]e|overview)\b", question,
                          re.IGNORECASE))


def broad_topic(question: str) -> str | None:
    """The broad topic (a plural noun) a question asks about, or None."""
    m = _BROAD_TOPIC.search(question)
    if m and m.group("noun").lower() not in _NOT_TOPICS:
        return m.group("noun").lower()
    words = _BROAD_WORDS.search(question)
    return words.group(0).lower() if words else None


def _close(text: str) -> str:
    text = text.strip(" ,;")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith("?") else text.rstrip(".!") + "?"


def _names_in(text: str, names: Sequence[str]) -> list[str]:
    low = text.lower()
    return [n for n in names if re.search(r"(?<!\w)" + re.escape(n.lower()) + r"(?!\w)", low)]


def _with_subject(part: str, subject: str | None, names: Sequence[str]) -> str:
    """'When is the launch?' after 'Who leads Project Atlas': '... launch (Project Atlas)?'."""
    if subject is None or _names_in(part, names):
        return part
    return part[:-1] + f" ({subject})?" if part.endswith("?") else f"{part} ({subject})"


def _entity_conjunction(question: str, names: Sequence[str]) -> list[str]:
    """'Who leads Project Atlas and the Platform Team?' → one question per entity."""
    ordered = sorted(names, key=len, reverse=True)
    alternatives = "|".join(re.escape(n) for n in ordered)
    if not alternatives:
        return []
    pattern = re.compile(r"(?<!\w)(?P<a>" + alternatives + r")(?!\w)"
                         r"(?P<glue>\s*,?\s+and\s+(?:the\s+|a\s+|an\s+)?)"
                         r"(?P<b>" + alternatives + r")(?!\w)", re.IGNORECASE)
    m = pattern.search(question)
    if m is None or m.group("a").lower() == m.group("b").lower():
        return []
    head, tail = question[: m.start()], question[m.end():]
    return [_close(f"{head}{m.group('a')}{tail}"), _close(f"{head}{m.group('b')}{tail}")]


def split_parts(question: str, names: Sequence[str] = ()) -> list[str]:
    """The sub-questions of a multi-part question; [] when it is one question."""
    parts: list[str] = []
    for sentence in _SENTENCE_QUESTIONS.split(question.strip()):
        pieces = [p for p in _CLAUSE_AND.split(sentence) if p and p.strip(" ,;?")]
        parts.extend(_close(p) for p in pieces)
    parts = [p for p in parts if len(p.split()) >= 2]
    if len(parts) > 1:
        subject = next((n for n in _names_in(parts[0], names)), None)
        return [parts[0]] + [_with_subject(p, subject, names) for p in parts[1:]]
    return _entity_conjunction(question, names)


def route(question: str, known_names: Sequence[str] = (),
          unknown_names: Sequence[str] = ()) -> Route:
    """``known_names``: the words of the question naming known entities (as written);
    ``unknown_names``: proper names it states that the graph does not know."""
    q = question.strip()
    chained = chain_plan(q)
    if chained is not None and chained.shape != "conjunction-anaphor":
        return Route(QueryMode.LOCAL, "a chain of relations: multi-hop over local search")
    account = account_cue(q)
    if account and not unknown_names:
        return Route(QueryMode.GLOBAL, f"{ACCOUNT_CUE}: {account}")
    parts = split_parts(q, known_names)
    if len(parts) > 1:
        return Route(QueryMode.DRIFT, f"multi-part question ({len(parts)} parts)", tuple(parts))
    cue = corpus_cue(q)
    if cue == SUMMARY_CUE and known_names:
        # "Summarise the X migration": an account of a named thing, from its own evidence
        return Route(QueryMode.LOCAL, "a summary of " + ", ".join(dict.fromkeys(known_names)))
    if cue and chained is not None:
        # "Which X won best overall, and who made it?": a chain, its cue word no corpus question
        return Route(QueryMode.DRIFT, f"a chain joined by 'and' (cue {cue!r} set aside)")
    if cue:
        return Route(QueryMode.GLOBAL, f"corpus-wide: {cue}")
    if not known_names and not unknown_names:
        topic = broad_topic(q)
        if topic:
            return Route(QueryMode.GLOBAL, f"names no entity, asks about {topic!r}")
    if known_names:
        return Route(QueryMode.LOCAL, "entity-specific: " + ", ".join(dict.fromkeys(known_names)))
    return Route(QueryMode.LOCAL, "a specific question")
