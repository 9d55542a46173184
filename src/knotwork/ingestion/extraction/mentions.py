"""Entity mentions in a chunk: spaCy NER + rules + gazetteers + known names + speakers + coref.

Candidates from every source are merged by priority, so a precise rule span ("Billing
Service") wins over a sloppy statistical one ("the Billing Service") where they overlap.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.lexicon import (
    COMPANY_SUFFIXES,
    FIRST_NAMES,
    PROJECT_WORDS,
    STOP_NAMES,
    SYSTEM_WORDS,
    TEAM_WORDS,
    TECHNOLOGIES,
)
from knotwork.ingestion.extraction.speakers import SpeakerTurn, first_person_spans, speaker_turns
from knotwork.ingestion.extraction.types import Mention
from knotwork.resolution.normalize import clean_display_name, normalize_name

_PRIORITY = {"speaker": 6, "rule": 5, "gazetteer": 5, "known": 4, "spacy": 3, "coref": 2}

_SPACY_TYPES: Mapping[str, EntityType] = {
    "PERSON": EntityType.PERSON,
    "ORG": EntityType.ORGANIZATION,
    "GPE": EntityType.LOCATION,
    "LOC": EntityType.LOCATION,
    "FAC": EntityType.LOCATION,
    "PRODUCT": EntityType.PRODUCT,
    "EVENT": EntityType.EVENT,
    "WORK_OF_ART": EntityType.CONCEPT,
    "LAW": EntityType.CONCEPT,
}

# technology names that are also ordinary words: only the multi-word gazetteer keeps them
_AMBIGUOUS_TECH = {"Go", "Ray", "Chef", "Express", "Spring", "Segment", "Temporal", "Vault",
                   "Beam", "Delta", "Aurora", "Puppet", "Swift", "Rust", "Lambda", "Windows",
                   "Slack", "Confluence", "Notion", "REST", "Argo", "Iceberg", "Store"}
_TECH_RE = re.compile(
    r"(?<![\w.])(?:"
    + "|".join(re.escape(t) for t in sorted(TECHNOLOGIES - _AMBIGUOUS_TECH, key=len, reverse=True))
    + r")(?![\w+#])"
)
_CAP = r"[A-Z][\w&'’-]*"
_LEAD_STOP = r"(?!(?:The|A|An|Our|Their|This|That|These|Each|Every|Any|Some|New|Old)\b)"
_PROJECT_RE = re.compile(
    r"\b(?:" + "|".join(sorted(PROJECT_WORDS)) + r")\s+(?:[A-Z][\w-]*|[0-9][\w-]*)"
    r"(?:\s+(?!(?:" + "|".join(sorted(PROJECT_WORDS | TEAM_WORDS | SYSTEM_WORDS)) + r")\b)[A-Z0-9][\w-]*)?"
)
_PROJECT_SUFFIX_RE = re.compile(r"\b(?:the|our|their)\s+(" + _CAP + r")\s+(?:project|initiative)\b")
_TEAM_RE = re.compile(
    r"\b" + _LEAD_STOP + r"((?:" + _CAP + r"\s+){1,3}(?:" + "|".join(sorted(TEAM_WORDS)) + r"))\b"
)
_SYSTEM_RE = re.compile(
    r"\b" + _LEAD_STOP + r"((?:" + _CAP + r"\s+){1,3}(?:" + "|".join(sorted(SYSTEM_WORDS)) + r"))\b"
)
_COMPANY_RE = re.compile(
    r"\b" + _LEAD_STOP + r"((?:" + _CAP + r"\s+){1,3}(?:"
    + "|".join(re.escape(s) for s in sorted(COMPANY_SUFFIXES)) + r"))(?![\w])"
)
_PERSON_RE = re.compile(r"\b([A-Z][a-z]+)\s+((?:[A-Z]\.\s+)?(?:O'|Mc|Mac)?[A-Z][a-zA-Z'’-]+)\b")
_COREF_RE = re.compile(
    r"\b(?:the|this|that|our|their|your)\s+(project|initiative|program|programme|team|squad|"
    r"company|organization|organisation|firm|org|service|system|platform|product)\b"
    r"(?!\s+(?:manager|managers|owner|owners|lead|leads|leader|leadership|management|member|"
    r"members|engineer|engineers|designer|designers|director|team)\b)",
    re.IGNORECASE,
)
_PRONOUN_RE = re.compile(r"\b(he|she|He|She)\b")
_COREF_TARGET: Mapping[str, tuple[EntityType | None, str | None]] = {
    "project": (None, "PROJECT"), "initiative": (None, "PROJECT"), "program": (None, "PROJECT"),
    "programme": (None, "PROJECT"), "team": (None, "TEAM"), "squad": (None, "TEAM"),
    "company": (EntityType.ORGANIZATION, None), "organization": (EntityType.ORGANIZATION, None),
    "organisation": (EntityType.ORGANIZATION, None), "firm": (EntityType.ORGANIZATION, None),
    "org": (EntityType.ORGANIZATION, None), "service": (None, "SYSTEM"),
    "system": (None, "SYSTEM"), "platform": (None, "SYSTEM"), "product": (EntityType.PRODUCT, None),
}


@dataclass(frozen=True, slots=True)
class KnownName:
    """An entity already in the graph, matched by name in new text."""

    name: str
    type: EntityType
    subtype: str | None


_CODE = re.compile(r"^[A-Z][A-Z0-9]{1,9}-\d+$")
_CODE_IN_TEXT = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b")


def rule_type(text: str) -> tuple[EntityType, str | None] | None:
    """The type a name's shape implies, if any (gazetteers and suffix words)."""
    words = text.split()
    if not words:
        return None
    if text in TECHNOLOGIES:
        return EntityType.TECHNOLOGY, None
    if words[0] in PROJECT_WORDS and len(words) > 1:
        return EntityType.PRODUCT, "PROJECT"
    if len(words) > 1 and words[-1] in TEAM_WORDS:
        return EntityType.ORGANIZATION, "TEAM"
    if len(words) > 1 and words[-1].rstrip(".") in {s.rstrip(".") for s in COMPANY_SUFFIXES}:
        return EntityType.ORGANIZATION, None
    if len(words) > 1 and words[-1] in SYSTEM_WORDS:
        return EntityType.PRODUCT, "SYSTEM"
    if _CODE.match(text):
        return EntityType.CONCEPT, "IDENTIFIER"  # DEC-007, INC-2041, JIRA-12
    if 2 <= len(words) <= 3 and words[0].lower() in FIRST_NAMES and words[-1][:1].isupper():
        return EntityType.PERSON, None
    return None


def _code_free(text: str) -> bool:
    return _CODE.match(text) is None


def _plausible(text: str) -> bool:
    cleaned = clean_display_name(text)
    if len(cleaned) < 2 or "\n" in text or len(cleaned.split()) > 6:
        return False
    if not any(c.isupper() for c in cleaned) or cleaned.lower() in STOP_NAMES:
        return False
    return not cleaned.replace(" ", "").isdigit()


def _spacy_mentions(doc: object) -> list[Mention]:
    out: list[Mention] = []
    full_text: str = doc.text  # type: ignore[attr-defined]  # spaCy rebuilds it on each access
    for ent in doc.ents:  # type: ignore[attr-defined]
        etype = _SPACY_TYPES.get(ent.label_)
        if etype is None or not _plausible(ent.text):
            continue
        start, end = ent.start_char, ent.end_char
        # drop a leading article the model included
        lead = re.match(r"(?i)(the|a|an)\s+", ent.text)
        if lead:
            start += lead.end()
        text = full_text[start:end]
        text = re.sub(r"(?:'s|’s)$", "", text)
        end = start + len(text)
        subtype = None
        implied = rule_type(text)
        if implied is not None:
            etype, subtype = implied
        elif (" " not in text and text.lower() in FIRST_NAMES
              and etype not in (EntityType.LOCATION, EntityType.PERSON)):
            etype = EntityType.PERSON
        out.append(Mention(start, end, text, etype, 0.7, "spacy", subtype))
    return out


def _regex_mentions(text: str) -> list[Mention]:
    out: list[Mention] = []
    for m in _TECH_RE.finditer(text):
        out.append(Mention(m.start(), m.end(), m.group(0), EntityType.TECHNOLOGY, 0.9, "gazetteer"))
    for m in _PROJECT_RE.finditer(text):
        out.append(Mention(m.start(), m.end(), m.group(0), EntityType.PRODUCT, 0.9, "rule", "PROJECT"))
    for m in _PROJECT_SUFFIX_RE.finditer(text):
        name = f"Project {m.group(1)}"
        out.append(Mention(m.start(1), m.end(0), m.group(0)[m.start(1) - m.start(0):],
                           EntityType.PRODUCT, 0.85, "rule", "PROJECT", refers_to=name))
    for regex, etype, subtype in (
        (_TEAM_RE, EntityType.ORGANIZATION, "TEAM"),
        (_SYSTEM_RE, EntityType.PRODUCT, "SYSTEM"),
        (_COMPANY_RE, EntityType.ORGANIZATION, None),
    ):
        for m in regex.finditer(text):
            if _plausible(m.group(1)):
                out.append(Mention(m.start(1), m.end(1), m.group(1), etype, 0.85, "rule", subtype))
    for m in _CODE_IN_TEXT.finditer(text):
        out.append(Mention(m.start(), m.end(), m.group(0), EntityType.CONCEPT, 0.9, "rule", "IDENTIFIER"))
    for m in _PERSON_RE.finditer(text):
        first, last = m.group(1), m.group(2)
        if first.lower() in FIRST_NAMES and last not in TEAM_WORDS | SYSTEM_WORDS | PROJECT_WORDS:
            out.append(Mention(m.start(), m.end(), m.group(0), EntityType.PERSON, 0.85, "rule"))
    return out


_WORD_RE = re.compile(r"[A-Za-z0-9][\w.+#&'’-]*")


def _known_mentions(text: str, known: Mapping[str, KnownName]) -> list[Mention]:
    """Names of entities already in the graph, found as 1-4 word sequences."""
    if not known:
        return []
    words = list(_WORD_RE.finditer(text))
    out: list[Mention] = []
    for i, first in enumerate(words):
        if not first.group(0)[0].isupper():
            continue
        for n in range(4, 0, -1):
            if i + n > len(words):
                continue
            last = words[i + n - 1]
            span = text[first.start() : last.end()]
            if "\n" in span or (n == 1 and len(span) < 3):
                continue
            hit = known.get(normalize_name(span))
            if hit is not None and span.lower() not in STOP_NAMES:
                out.append(Mention(first.start(), last.end(), span, hit.type, 0.8, "known",
                                   hit.subtype, refers_to=hit.name))
                break
    return out


def _merge(candidates: list[Mention]) -> list[Mention]:
    ranked = sorted(candidates, key=lambda m: (-_PRIORITY[m.extractor], -(m.end - m.start), m.start))
    taken: list[Mention] = []
    for cand in ranked:
        if all(cand.end <= t.start or cand.start >= t.end for t in taken):
            taken.append(cand)
    return sorted(taken, key=lambda m: m.start)


def _speaker_mentions(text: str, turns: Sequence[SpeakerTurn]) -> list[Mention]:
    out: list[Mention] = []
    for turn in turns:
        out.append(Mention(turn.name_start, turn.name_end, turn.name, EntityType.PERSON, 0.95,
                           "speaker"))
        for start, end, word in first_person_spans(text, turn):
            out.append(Mention(start, end, word, EntityType.PERSON, 0.9, "speaker",
                               refers_to=turn.name))
    return out


def _coref_mentions(
    text: str, found: list[Mention], context: Sequence[KnownName]
) -> list[Mention]:
    out: list[Mention] = []
    for m in _COREF_RE.finditer(text):
        if any(not (m.end() <= f.start or m.start() >= f.end) for f in found):
            continue
        want_type, want_sub = _COREF_TARGET[m.group(1).lower()]

        def fits(etype: EntityType, subtype: str | None) -> bool:
            if want_sub is not None:
                return subtype == want_sub
            return etype == want_type and subtype != "TEAM"

        target: str | None = None
        for prior in reversed([f for f in found if f.end <= m.start()]):
            if fits(prior.type, prior.subtype):
                target = prior.refers_to or prior.text
                break
        if target is None:
            for ctx in context:
                if fits(ctx.type, ctx.subtype):
                    target = ctx.name
                    break
        if target is not None:
            etype = want_type or (EntityType.ORGANIZATION if want_sub == "TEAM" else EntityType.PRODUCT)
            out.append(Mention(m.start(), m.end(), m.group(0), etype, 0.6, "coref", want_sub,
                               refers_to=target))
    for m in _PRONOUN_RE.finditer(text):
        window = [f for f in found if f.end <= m.start() and m.start() - f.end < 300]
        people = [f for f in window if f.type is EntityType.PERSON and f.extractor != "speaker"]
        if people:
            # the subject of the latest sentence naming a person: its first person mention
            boundary = max(text.rfind(". ", 0, people[-1].start), text.rfind("\n", 0, people[-1].start))
            ref = next(p for p in people if p.start > boundary)
            out.append(Mention(m.start(), m.end(), m.group(0), EntityType.PERSON, 0.55, "coref",
                               refers_to=ref.refers_to or ref.text))
    return out


def _given_name_mentions(text: str, found: list[Mention]) -> list[Mention]:
    """A lone given name ("Priya") where the chunk also names the full person."""
    out: list[Mention] = []
    for m in found:
        words = (m.refers_to or m.text).split()
        if m.type is not EntityType.PERSON or len(words) < 2 or m.extractor == "coref":
            continue
        for hit in re.finditer(r"\b" + re.escape(words[0]) + r"\b(?!\s+[A-Z])", text):
            out.append(Mention(hit.start(), hit.end(), hit.group(0), EntityType.PERSON, 0.75,
                               "rule", refers_to=m.refers_to or m.text))
    return out


def find_mentions(
    text: str,
    doc: object | None,
    known: Mapping[str, KnownName],
    context: Sequence[KnownName] = (),
) -> list[Mention]:
    """All entity mentions of one chunk, non-overlapping, in text order."""
    turns = speaker_turns(text)
    candidates = _speaker_mentions(text, turns) + _regex_mentions(text)
    candidates += _known_mentions(text, known)
    if doc is not None:
        candidates += _spacy_mentions(doc)
    merged = _merge(candidates)
    merged = _merge(merged + _given_name_mentions(text, merged))
    merged += _coref_mentions(text, merged, context)
    return sorted(_merge(merged), key=lambda m: m.start)
