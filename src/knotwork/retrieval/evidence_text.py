"""The source sentences of an episode as local search scores them, and the text it embeds.

Local search ranks the sentences of candidate episodes by their cosine to the question; the
vector of a sentence reads ``"<sentence> (<title heading speaker>)"`` (:func:`scored_text`).
Ingestion computes those same strings once per episode (:func:`evidence_texts`) and stores
their vectors (``Collection.SENTENCES``, ids from :func:`sentence_vector_id`, which include
the owning episode), so a query reads them by id instead of embedding them (issue 23).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Episode
from knotwork.domain.ports import Collection, VectorPoint
from knotwork.retrieval.sentences import as_sentence, split_sentences, strip_markup
from knotwork.retrieval.vector_cache import embed_cached

if TYPE_CHECKING:
    from knotwork.runtime import Runtime

_SPEAKER = re.compile(r"^([A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,3})\s*(?:\([^)]{1,30}\))?:\s+(?=\S)")
MIN_CHARS = 8  # shorter sentences are no evidence
GLOBAL_MIN_CHARS = 12  # global search's candidate sentences: at least this long, shown as is

_FOLLOW_UP = re.compile(
    r"^(?:(?:The|This|That|These|Those|Its|Their|His|Her)\s+[a-z]|(?:It|He|She|They)\s"
    r"|[A-Z][a-z]+ed\s+by\b"  # "Decided by Hannah", "Proposed by Elif"
    r"|[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,2}\s+(?:is|was|are|were|will|has|had|[a-z]+s)\s"
    r"(?:[a-z]+ing\s+|now\s+|also\s+)?(?:the|this|that|it|them)\b)")  # "Jo Park is building the …"
_FOLLOW_UP_MAX_WORDS = 14


@dataclass(frozen=True)
class Sentence:
    """One sentence of an episode: ``text`` is scored, ``shown`` is what an answer shows."""

    raw: str
    shown: str
    text: str
    context: str  # episode name, heading, speaker: scored, never shown
    heading: bool


def sentences(episode: Episode) -> Iterator[Sentence]:
    """The episode's sentences of at least :data:`MIN_CHARS` characters, with their context."""
    heading = ""
    for raw in split_sentences(episode.content):
        shown = strip_markup(raw)
        speaker = _SPEAKER.match(shown)
        text = shown[speaker.end():].strip() if speaker else shown
        if raw.startswith("#"):
            heading = text
        if len(text) < MIN_CHARS:
            continue
        context = f"{episode.name} {heading if heading != text else ''}"
        if speaker:
            context += f" {speaker.group(1)}"
        yield Sentence(raw, shown, text, context, raw.startswith("#"))


def continues(sentence: str) -> bool:
    """A short sentence that refers back to the one before it (a pronoun, "the migration",
    a "Decided by …" fragment): the two are a unit an answer may need both halves of."""
    return len(sentence.split()) <= _FOLLOW_UP_MAX_WORDS and bool(_FOLLOW_UP.match(sentence))


def pair_text(previous: str, text: str) -> str:
    return f"{previous} {text}"


def pair_display(previous_display: str, shown: str) -> str:
    return f"{as_sentence(previous_display)} {shown}"


def scored_text(text: str, context: str) -> str:
    """What the vector of a candidate sentence encodes."""
    return f"{text} ({context.strip()})" if context.strip() else text


@dataclass(frozen=True)
class EvidenceSpan:
    """One text local search embeds (``scored``) and the episode text it covers: from the
    start of ``first`` to the end of ``last`` (one sentence: both are its text)."""

    scored: str
    first: str
    last: str


def evidence_spans(episode: Episode) -> list[EvidenceSpan]:
    """Every text local search embeds for this episode's sentences and follow-up pairs when
    no date filter drops a sentence (then a pair may differ: it is embedded at query time),
    and each sentence as global search scores it (bare, as shown)."""
    out: dict[str, EvidenceSpan] = {}
    previous: Sentence | None = None
    for s in sentences(episode):
        scored = scored_text(s.text, s.context)
        out.setdefault(scored, EvidenceSpan(scored, s.text, s.text))
        if not s.heading and len(s.shown) >= GLOBAL_MIN_CHARS:  # global search: the bare sentence
            out.setdefault(s.shown, EvidenceSpan(s.shown, s.text, s.text))
        if previous is not None and continues(s.text):
            scored = scored_text(pair_text(previous.text, s.text), s.context)
            out.setdefault(scored, EvidenceSpan(scored, previous.text, s.text))
        previous = None if s.heading else s
    return list(out.values())


def evidence_texts(episode: Episode) -> list[str]:
    """The scored texts of :func:`evidence_spans`."""
    return [span.scored for span in evidence_spans(episode)]


def sentence_vector_id(episode_id: str, text: str) -> str:
    """The vector id of one scored text of one episode (withdrawing the episode finds it)."""
    return stable_id(episode_id, "sentence", text)


def sentence_point(episode: Episode, text: str, vector: list[float]) -> VectorPoint:
    return VectorPoint(id=sentence_vector_id(episode.id, text), vector=vector,
                       group_id=episode.group_id,
                       payload={"episode_id": episode.id, "document_id": episode.document_id})


def episode_sentence_ids(episode: Episode) -> list[str]:
    return [sentence_vector_id(episode.id, t) for t in evidence_texts(episode)]


def stored_or_embedded(rt: Runtime, group_id: str, texts: Sequence[str], ids: Sequence[str]
                       ) -> list[Sequence[float]]:
    """The vector of each text: the one stored at ingest under its id (``ids[i]``, "" for
    none; read only with ``Settings.evidence_vectors`` on), else embedded (memoised)."""
    wanted = list(dict.fromkeys(i for i in ids if i)) if rt.settings.evidence_vectors else []
    stored = rt.vectors.vectors_of(Collection.SENTENCES, group_id, wanted) if wanted else {}
    missing = [t for t, i in zip(texts, ids, strict=True) if i not in stored]
    embedded = dict(zip(missing, embed_cached(rt.embedder, missing), strict=True))
    return [stored[i] if i in stored else embedded[t] for t, i in zip(texts, ids, strict=True)]
