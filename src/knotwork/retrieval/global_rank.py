"""The pure ranking steps of global search: communities, the level, topics, lexical scores.

No stores here: semantic similarities come in precomputed, so every step is testable with
fake inputs. :mod:`knotwork.retrieval.global_search` does the reading and embedding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from knotwork.communities.report import partition
from knotwork.domain.models import Community
from knotwork.ingestion.extraction.mentions import gazetteer_mentions
from knotwork.retrieval.config import GlobalSearchConfig
from knotwork.retrieval.lexical import bm25_scores, bm25_with_context, terms

# Analyst words of corpus-wide questions and the words their evidence uses (no LLM to bridge
# "risk" and "the Billing Service was unavailable"): added to the lexical query only.
TOPIC_WORDS: Mapping[str, str] = {
    "risk": "outage incident failure failed unavailable severity sev root cause delay delayed "
            "blocker manual timeout timed deadline problem issue exceed",
    "issue": "outage incident failure failed unavailable problem bug root cause timeout",
    "problem": "outage incident failure failed unavailable issue bug root cause timeout",
    "challenge": "outage incident failure delay delayed moved blocker manual problem",
    "incident": "outage failure unavailable severity sev commander root cause postmortem",
    "decision": "decided decide approved adopt migrate chose decision",
    "change": "moved move migrate migration replaced new promotion promoted joins joined",
    "priority": "launch deadline milestone scheduled plan roadmap",
    "plan": "launch deadline milestone scheduled roadmap",
    "technology": "use uses used stack tool tooling framework library database runs built",
    "people": "leads manages engineer manager role team reports",
    "team": "team leads member maintains builds",
    "lesson": "root cause action item postmortem",
}


def expand_query(question: str) -> str:
    """The question plus the evidence words of the analyst topics it names."""
    stems = set(terms(question))
    extra = [words for topic, words in TOPIC_WORDS.items() if terms(topic)[0] in stems]
    return " ".join([question, *extra])


# topics whose evidence a named technology is (the curated gazetteer), more than any word
_TECH_TOPICS = frozenset({"technology", "tool", "stack"})
OFF_TOPIC_FACTOR = 0.5  # a key point about none of the topics the question asks about


@dataclass(frozen=True)
class TopicFocus:
    """The analyst topics a corpus-wide question asks about ("the incidents", "the main
    risks", "the technologies"), as the words their evidence uses; empty: no topic named."""

    words: frozenset[str] = frozenset()
    technology: bool = False

    def __bool__(self) -> bool:
        return bool(self.words) or self.technology

    def covers(self, text: str) -> bool:
        if self.words & set(terms(text)):
            return True
        return self.technology and bool(gazetteer_mentions(text))


# the topics that are kinds of things to list; "team", "people", "plan" name a scope instead
# ("What does the Security Team work on?" is not about teams in general)
_FOCUS_TOPICS = frozenset({"risk", "issue", "problem", "challenge", "incident", "decision",
                           "change", "lesson"})


def _names(stems: set[str], word: str) -> bool:
    """The question has the word in some form: the stemmer cuts "technologies" to
    "technolog" and leaves "technology" whole, so a shared stem of 6+ letters counts."""
    stem = terms(word)[0]
    return any(s == stem or (min(len(s), len(stem)) >= 6
                             and (s.startswith(stem) or stem.startswith(s))) for s in stems)


def _topic_terms(stems: set[str], topics: Iterable[str]) -> frozenset[str]:
    """The topic words and their evidence words, of those ``topics`` the stems name."""
    return frozenset(w for topic in topics if _names(stems, topic)
                     for w in terms(f"{topic} {TOPIC_WORDS[topic]}"))


def topic_focus(question: str) -> TopicFocus:
    stems = set(terms(question))
    technology = any(_names(stems, t) for t in _TECH_TOPICS)
    return TopicFocus(_topic_terms(stems, sorted(_FOCUS_TOPICS)), technology)


def evidence_terms(word: str) -> frozenset[str]:
    """The terms that show evidence is about an analyst topic the question names in ``word``
    ("risk": outage, delay, exceed …; "technology": a gazetteer name is checked apart);
    empty when ``word`` names no topic."""
    return _topic_terms({word}, TOPIC_WORDS)


def focus_points(candidates: Sequence[Candidate], focus: TopicFocus) -> None:
    """Key points on none of the question's topics lose ``OFF_TOPIC_FACTOR`` of their score:
    asked for the incidents of an organisation, a sentence naming the organisation ("This
    page lists the engineering staff of X") matched the question's words better than the
    outage sentences, and answered the wrong question."""
    if not focus:
        return
    for c in candidates:
        if not c.theme and not focus.covers(c.text):
            c.score = round(c.score * OFF_TOPIC_FACTOR, 6)
            c.parts["off_topic"] = OFF_TOPIC_FACTOR


@dataclass
class Candidate:
    """A possible key point: a key fact, a source sentence or a community theme; ``community_id``
    is the community it is shown under ("" for a retrieved sentence no chosen community has)."""

    text: str
    community_id: str
    chunk_ids: list[str]
    fact_id: str | None = None
    theme: bool = False
    context: str = ""  # the source's title: scored lexically, never shown
    # the id under which ingest may have stored the vector of ``text`` (Collection.SENTENCES;
    # "" when none can exist)
    vector_id: str = ""
    prior: float = 0.0  # the chunk's vector score: its own relevance to the question
    communities: tuple[str, ...] = ()  # every community it came from (a diversity signal)
    document: str = ""  # its source document (redundancy quota), "" when unknown
    lexical: float = 0.0
    specific: float = 0.0  # the names, figures and dates it adds, 0..1 (global_pool.specificity)
    semantic: float = 0.0
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)


def community_text(community: Community) -> str:
    """What BM25 sees of a community: title, topics and summary."""
    return f"{community.name} {' '.join(community.key_topics)} {community.summary}"


def score_communities(question: str, communities: Sequence[Community],
                      vector_scores: Mapping[str, float], cfg: GlobalSearchConfig
                      ) -> dict[str, float]:
    """Community id -> relevance: the vector score (0 when not among the hits) and BM25."""
    texts = [community_text(c) for c in communities]
    lexical = [max(a, b) for a, b in zip(bm25_scores(question, texts),
                                         bm25_scores(expand_query(question), texts), strict=True)]
    return {c.id: round(cfg.weight_community_vector * max(0.0, vector_scores.get(c.id, 0.0))
                        + cfg.weight_community_lexical * lex, 6)
            for c, lex in zip(communities, lexical, strict=True)}


def level_fit(relevance: Mapping[str, float], members: Sequence[Community], top: int) -> float:
    best = sorted((relevance.get(c.id, 0.0) for c in members), reverse=True)[: max(1, top)]
    return sum(best) / len(best) if best else 0.0


def choose_level(communities: Sequence[Community], relevance: Mapping[str, float],
                 cfg: GlobalSearchConfig) -> tuple[int, dict[int, float]]:
    """The level whose partition's best communities fit the question best (ties: the finer).

    Returns the level and every level's fit (for the trace).
    """
    levels = sorted({c.level for c in communities})
    fits = {lvl: round(level_fit(relevance, partition(communities, lvl), cfg.level_fit_top), 6)
            for lvl in levels}
    if not fits:
        return 0, fits
    best = max(fits.values())
    return min(lvl for lvl, fit in fits.items() if fit >= best - 1e-9), fits


def top_communities(members: Sequence[Community], relevance: Mapping[str, float], top_k: int,
                    min_score: float) -> list[tuple[Community, float]]:
    ranked = sorted(members, key=lambda c: (-relevance.get(c.id, 0.0), -c.entity_count, c.id))
    return [(c, relevance.get(c.id, 0.0)) for c in ranked[:top_k]
            if relevance.get(c.id, 0.0) >= min_score]


def lexical_scores(question: str, candidates: Sequence[Candidate]) -> list[float]:
    """BM25 of each candidate (its source title helping), for the question as asked or with
    its topic words (:func:`expand_query`), whichever scores higher."""
    queries = list(dict.fromkeys([question, expand_query(question)]))
    best = [0.0] * len(candidates)
    for query in queries:
        lexical, in_context = bm25_with_context(query, [c.text for c in candidates],
                                                [c.context for c in candidates])
        best = [max(b, lex, 0.6 * ctx + 0.4 * lex)
                for b, lex, ctx in zip(best, lexical, in_context, strict=True)]
    return best


def overlap(a: str, b: str) -> float:
    ta, tb = set(terms(a)), set(terms(b))
    return len(ta & tb) / (len(ta | tb) or 1)
