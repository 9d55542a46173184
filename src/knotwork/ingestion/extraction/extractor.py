"""Chunk-level extraction: mentions → local entities → relations with their sentences."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.mentions import KnownName, find_mentions
from knotwork.ingestion.extraction.relations import relations_in_sentence
from knotwork.ingestion.extraction.types import ChunkExtraction, LocalEntity, LocalRelation, Mention
from knotwork.resolution.normalize import clean_display_name, normalize_name

_WEIGHT = {"speaker": 3.0, "rule": 2.5, "gazetteer": 3.0, "known": 2.0, "spacy": 1.0, "coref": 0.5}
_CONTRACTIONS = {"'m": " is", "’m": " is", "'ve": " has", "’ve": " has", "'ll": " will",
                 "’ll": " will", "'d": " would", "’d": " would"}
_MARKUP = re.compile(r"^(?:[-*#>•]+\s*|\[[ xX]?\]\s*)+")
_PREFIX = re.compile(r"^\s*(?:\[[^\]\n]{1,40}\]\s*)?[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,3}\s*(?:\([^)\n]{1,30}\))?\s*:\s+")


class RuleBasedExtractor:
    """spaCy NER + rules + coreference + dependency-free relation patterns. No LLM."""

    name = "rules"

    def __init__(self, nlp: Any | None) -> None:
        self._nlp = nlp

    def extract(
        self,
        texts: Sequence[str],
        known: Mapping[str, KnownName],
        context: Sequence[KnownName] = (),
    ) -> list[ChunkExtraction]:
        docs: list[Any | None]
        if self._nlp is not None:
            docs = list(self._nlp.pipe(texts, batch_size=16))
        else:
            docs = [None] * len(texts)
        return [self._one(text, doc, known, context) for text, doc in zip(texts, docs, strict=True)]

    def names_in(self, text: str) -> list[str]:
        """Proper names a short text (a question) states: people, projects, teams, systems."""
        doc = self._nlp(text) if self._nlp is not None else None
        out: list[str] = []
        for m in find_mentions(text, doc, {}, ()):
            words = m.text.split()
            strong = m.extractor in ("rule", "gazetteer") or (
                m.extractor == "spacy" and len(words) >= 2 and m.type is EntityType.PERSON)
            if strong and m.refers_to is None:
                out.append(clean_display_name(m.text))
        return out

    def _one(
        self, text: str, doc: Any | None, known: Mapping[str, KnownName], context: Sequence[KnownName]
    ) -> ChunkExtraction:
        mentions = find_mentions(text, doc, known, context)
        entities, index_of = _cluster(mentions)
        relations: list[LocalRelation] = []
        for start, end in _sentences(text, doc):
            inside = [m for m in mentions if m.start >= start and m.end <= end
                      and not (m.extractor == "speaker" and m.refers_to is None)]
            if len(inside) < 2:
                continue
            sentence_facts: set[tuple[int, int, str]] = set()
            for hit in relations_in_sentence(text, inside):
                s, t = index_of[id(hit.source)], index_of[id(hit.target)]
                if s == t or (s, t, hit.type) in sentence_facts:
                    continue
                sentence_facts.add((s, t, hit.type))
                fact = _fact_text(text, start, end, mentions)
                relations.append(LocalRelation(s, t, hit.type, fact, hit.confidence, start, end))
        speaker = next((m.text for m in mentions if m.extractor == "speaker" and m.refers_to is None), None)
        return ChunkExtraction(entities, _drop_weaker_duplicates(relations), speaker)


def _sentences(text: str, doc: Any | None) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    raw = [(s.start_char, s.end_char) for s in doc.sents] if doc is not None else [
        (m.start(), m.end()) for m in re.finditer(r"[^.!?\n]+[.!?]?", text)
    ]
    for start, end in raw:
        pos = start
        for piece in text[start:end].split("\n"):
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                spans.append((pos + lead, pos + len(piece.rstrip())))
            pos += len(piece) + 1
    return spans


def _cluster(mentions: list[Mention]) -> tuple[list[LocalEntity], dict[int, int]]:
    """Group mentions into local entities by (resolved) normalised name."""
    full_people: dict[str, str] = {}
    for m in mentions:
        name = clean_display_name(m.refers_to or m.text)
        if m.type is EntityType.PERSON and len(name.split()) >= 2:
            full_people.setdefault(normalize_name(name).split()[0], name)
    groups: dict[str, list[Mention]] = defaultdict(list)
    display: dict[str, str] = {}
    for m in mentions:
        name = clean_display_name(m.refers_to or m.text)
        key = normalize_name(name)
        if m.type is EntityType.PERSON and " " not in key and key in full_people:
            name = full_people[key]
            key = normalize_name(name)
        if not key:
            continue
        groups[key].append(m)
        if key not in display or (m.refers_to is None and m.extractor != "coref" and len(name) > len(display[key])):
            display[key] = name
    entities: list[LocalEntity] = []
    index_of: dict[int, int] = {}
    for key, ms in groups.items():
        votes: dict[tuple[EntityType, str | None], float] = defaultdict(float)
        for m in ms:
            votes[(m.type, m.subtype)] += _WEIGHT[m.extractor] * m.confidence
        (etype, subtype), _ = max(votes.items(), key=lambda kv: kv[1])
        aliases = {clean_display_name(m.text) for m in ms if m.refers_to is None and m.extractor != "coref"}
        aliases.discard(display[key])
        ent = LocalEntity(display[key], key, etype, subtype, max(m.confidence for m in ms), ms, aliases)
        for m in ms:
            index_of[id(m)] = len(entities)
        entities.append(ent)
    return entities, index_of


def _fact_text(text: str, start: int, end: int, mentions: list[Mention]) -> str:
    """The sentence, with pronouns and 'the project' replaced by the names they refer to."""
    out: list[str] = []
    pos = start
    for m in mentions:
        if m.start < start or m.end > end or m.refers_to is None:
            continue
        if m.extractor == "speaker" and m.text.lower() in {"we", "us", "our"}:
            continue
        if m.extractor == "known" or (m.extractor == "rule" and m.refers_to):
            continue
        out.append(text[pos : m.start])
        word = m.text.lower()
        replacement = m.refers_to + ("'s" if word in {"my", "mine"} else "")
        out.append(replacement)
        pos = m.end
        for contraction, expansion in _CONTRACTIONS.items():
            if text.startswith(contraction, pos):
                out.append(expansion)
                pos += len(contraction)
                break
        else:
            if word == "i":
                verb = re.match(r" (am|have|was|[a-z]+)\b", text[pos:end])
                if verb:
                    out.append(" " + _third_person(verb.group(1)))
                    pos += verb.end()
    out.append(text[pos:end])
    sentence = re.sub(r"\s+", " ", "".join(out)).strip()
    sentence = _PREFIX.sub("", sentence, count=1)
    sentence = _MARKUP.sub("", sentence)
    return sentence[:1].upper() + sentence[1:] if sentence else sentence


_NO_S = {"can", "will", "would", "should", "could", "must", "might", "may", "did", "had",
         "was", "also", "just", "really", "currently", "still", "now", "never", "always",
         "recently", "then", "think", "guess", "believe"}


_IRREGULAR_PAST = frozenset(
    """built wrote led made ran took gave began became brought bought sent spent met left set
    put read said told thought found got held kept knew lost paid saw sold stood understood won
    drove chose grew flew threw drew broke spoke woke rose fell felt heard hit cut let shut quit
    taught caught fought sought shipped joined moved owned""".split()
)


def _third_person(verb: str) -> str:
    """'I work' → 'X works', 'I am' → 'X is' (so a fact reads in the third person)."""
    irregular = {"am": "is", "have": "has", "do": "does", "go": "goes"}
    if verb in irregular:
        return irregular[verb]
    if verb in _NO_S or verb in _IRREGULAR_PAST or verb.endswith(("ed", "s")):
        return verb
    if verb.endswith(("sh", "ch", "x", "o")):
        return verb + "es"
    return verb + "s"


def _drop_weaker_duplicates(relations: list[LocalRelation]) -> list[LocalRelation]:
    """A typed relation between two entities makes RELATED_TO between them redundant."""
    typed = {(r.source, r.target) for r in relations if r.type != "RELATED_TO"}
    typed |= {(t, s) for s, t in typed}
    return [r for r in relations if r.type != "RELATED_TO" or (r.source, r.target) not in typed]
