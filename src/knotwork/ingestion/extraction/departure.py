"""Events that end an entity's standing facts: a person leaving, an office closing.

"Mara Quint has decided to leave Fennel Labs", "Tomorrow is my last day at Fennel", "Otto
Brisk (left 31.05.2024)", "We are closing the Dunmore office on 30.06.": the sentence names
one entity and the day it stops (its people facts, the facts located in the office). The
event is read here, per sentence, with no LLM; what it ends is decided graph-wide
(``ingestion.endings``), so facts stated before or after the event in any order end alike.

The trigger phrases are data (:data:`END_RULES`, each with a name and its hit rate: events
that were true / events it fired, over every chunk of one development corpus with the names of
its graph known; the other corpus was not re-measured, its graph shows the departure and the
handovers it states ended). Phrases measured and left out: "farewell X" (1 of 2 was a team move, not a departure),
"X leaves for …" (a trip), "on leave" (parental leave ends nothing for good).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.temporal import date_near
from knotwork.ingestion.extraction.types import LocalEntity, Mention

DEPARTURE = "departure"  # a person leaves their employer
CLOSURE = "closure"  # an office (a place) closes


@dataclass(frozen=True, slots=True)
class EndRule:
    """A trigger phrase and where its entity stands: ``before`` (the subject: "Mara left
    Fennel"), ``owner`` (a possessive right before it: "Mara's last day", "my last day", "his
    last day"), ``after`` (the object: "closing the Dunmore office")."""

    name: str
    kind: str
    trigger: re.Pattern[str]
    subject: str
    hit_rate: str  # measured on the development corpora: true / fired


def _rule(name: str, kind: str, trigger: str, subject: str, hit_rate: str) -> EndRule:
    return EndRule(name, kind, re.compile(trigger, re.IGNORECASE), subject, hit_rate)


_ORG = "\x00ORG\x00"  # stands for an organisation mention (not a team) right after the trigger
END_RULES: tuple[EndRule, ...] = (
    # "has decided to leave Fennel Labs", "left Fennel just before the holidays", "quit us"
    _rule("leaves_employer", DEPARTURE,
          r"\b(?:leav(?:e|es|ing)|left|quits?|quitting|depart(?:s|ed|ing)?|resign(?:s|ed|ing)?\s+from)"
          r"\s+(?:us\b|the\s+company\b|" + _ORG + r")", "before", "2/2"),
    # "Otto Brisk left.", "Otto Brisk (left 31.05.2024)", "Otto has left"
    _rule("left_bare", DEPARTURE,
          r"^[\s,]*(?:(?:who\s+)?(?:has|had)\s+)?\(?\s*left\b(?=\s*(?:[.;,)]|$|(?:on\s+|in\s+)?\d))",
          "mention", "2/2"),
    # "Mara's last day", "my last working day", "His last day will be 30 September"
    _rule("last_day", DEPARTURE,
          r"\blast\s+(?:working\s+|official\s+|day\s+at\s+work\b)?(?:day)?\b(?<=day)"
          r"(?!\s+(?:of|for|to|before|in|until|on\s+the)\b)", "owner", "2/2"),
    # "resigned", "is retiring", "is no longer with us"
    _rule("resigned", DEPARTURE,
          r"^[\s,]*(?:(?:has|had|is|was|will)\s+)?(?:resign(?:s|ed|ing)|retir(?:es|ed|ing))\b"
          r"|^[\s,]*(?:is|are)\s+no\s+longer\s+with\s+(?:us\b|the\s+company\b|" + _ORG + r")",
          "mention", "0/0"),
    # "We are closing the Dunmore office", "the Dunmore office closed on 30 June",
    # "Dunmore closed;" (a timeline line)
    _rule("office_closes", CLOSURE,
          r"\b(?:clos(?:e|es|ed|ing)|shut(?:s|ting)?(?:\s+down)?)\s+(?:the\s+|our\s+|its\s+)?$",
          "office_after", "0/0"),
    _rule("office_closed", CLOSURE,
          r"^\s+(?:office|offices|site|hub)\s+(?:(?:is|was|will\s+be|has|had)\s+)?(?:clos(?:es|ed|ing)|shut(?:s)?"
          r"(?:\s+down)?|(?:will|to)\s+close)\b|^\s+(?:closed|closes)(?=\s*(?:[.;,)]|$|(?:on|in)\s))",
          "mention", "3/3"),
)

_SENTENCE = re.compile(r"[^\n]+?(?:(?<=[a-z0-9)\]][.!?])(?=\s+[A-Z\"“])|$)", re.MULTILINE)
_POSSESSIVE = re.compile(r"^(?:'s|’s|')\s*$")
_PRONOUN_OWNER = re.compile(r"\b(?:his|her|their)\s*$", re.IGNORECASE)
_OFFICE_AFTER = re.compile(r"^\s+(?:office|offices|site|hub|studio)\b", re.IGNORECASE)
_FIRST_PERSON = frozenset({"i", "my", "me", "i'm", "i’m"})
_SUBJECT_GAP = 90  # characters between the subject and a "before" trigger
# what may stand between the subject and its verb: auxiliaries and a few adverbs, a relative
# clause ("Mara, who ran the Ledger team, left …"), or a table row's label ("Mara — Status: Leaves …")
_SUBJECT_TO_VERB = re.compile(
    r"^\s*(?:,\s*(?:who|which)\b[^,;]*,\s*|\([^)]*\)\s*)?"
    r"(?:(?:has|had|have|is|was|will|would|just|finally|also|officially|now|sadly|decided|going|"
    r"plans?|wants?|to|not|already|soon)\s+)*$|^[^;]{0,80}:\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class EndEvent:
    entity: int  # index into the chunk's entities
    kind: str
    at: datetime
    stated: bool  # the sentence gives the date (else the document's time)
    rule: str


def _mentions(entities: Sequence[LocalEntity]) -> list[tuple[Mention, int]]:
    return sorted(((m, i) for i, e in enumerate(entities) for m in e.mentions),
                  key=lambda mi: mi[0].start)


def _is_employer(entity: LocalEntity) -> bool:
    return entity.type is EntityType.ORGANIZATION and entity.subtype != "TEAM"


def _with_orgs(sentence: str, offset: int, mentions: list[tuple[Mention, int]],
               entities: Sequence[LocalEntity]) -> str:
    """The sentence with each employer-like organisation mention replaced by a placeholder
    of the same length's start (so offsets keep)."""
    out = sentence
    for m, i in reversed(mentions):
        if offset <= m.start and m.end <= offset + len(sentence) and _is_employer(entities[i]):
            s, e = m.start - offset, m.end - offset
            out = out[:s] + _ORG + " " * max(0, (e - s) - len(_ORG)) + out[e:]
    return out


def end_events(text: str, entities: Sequence[LocalEntity], reference: datetime,
               speaker: str | None = None) -> list[EndEvent]:
    """The departures and office closures the chunk's sentences state."""
    mentions = _mentions(entities)
    people = [(m, i) for m, i in mentions if entities[i].type is EntityType.PERSON]
    places = [(m, i) for m, i in mentions if entities[i].type is EntityType.LOCATION]
    speaker_index = next((i for i, e in enumerate(entities) if speaker and e.name == speaker
                          and e.type is EntityType.PERSON), None)
    out: list[EndEvent] = []
    for sent in _SENTENCE.finditer(text):
        s0, sentence = sent.start(), sent.group(0)
        if not sentence.strip():
            continue
        marked = _with_orgs(sentence, s0, mentions, entities)
        for rule in END_RULES:
            if rule.subject == "office_after":
                hits = _office_objects(rule, text, s0, sentence, places)
            elif rule.subject == "mention":
                hits = _right_after(rule, text, marked, s0, people if rule.kind == DEPARTURE else places)
            else:
                hits = [(m.start() + s0, _holder(rule, text, s0 + m.start(), s0, people,
                                                 speaker_index))
                        for m in rule.trigger.finditer(marked)]
            for position, who in hits:
                if who is None:
                    continue
                at = date_near(sentence, position - s0, reference, skip_starts=True)
                out.append(EndEvent(who, rule.kind, at or reference, at is not None, rule.name))
    return out


def _right_after(rule: EndRule, text: str, marked: str, s0: int,
                 holders: list[tuple[Mention, int]]) -> list[tuple[int, int | None]]:
    """Triggers anchored right after a mention ("Otto left.", "Dunmore closed")."""
    out: list[tuple[int, int | None]] = []
    for m, i in holders:
        if not (s0 <= m.start and m.end <= s0 + len(marked)):
            continue
        rest = marked[m.end - s0:]
        if rule.trigger.match(rest):
            out.append((m.end, i))
    return out


def _office_objects(rule: EndRule, text: str, s0: int, sentence: str,
                    places: list[tuple[Mention, int]]) -> list[tuple[int, int | None]]:
    """"closing the Dunmore office": the place right after the verb, followed by "office"."""
    out: list[tuple[int, int | None]] = []
    for m, i in places:
        if not (s0 <= m.start and m.end <= s0 + len(sentence)):
            continue
        before = text[max(s0, m.start - 40):m.start]
        if rule.trigger.search(before) and _OFFICE_AFTER.match(text[m.end:m.end + 20]):
            out.append((m.start, i))
    return out


def _holder(rule: EndRule, text: str, position: int, s0: int,
            people: list[tuple[Mention, int]], speaker: int | None) -> int | None:
    """The person a trigger at ``position`` is about."""
    before = [(m, i) for m, i in people if m.end <= position]
    if rule.subject == "owner":
        if before:
            m, i = before[-1]
            gap = text[m.end:position]
            if (m.text.lower() in _FIRST_PERSON and not gap.strip()) or _POSSESSIVE.match(gap):
                return i
        if _PRONOUN_OWNER.search(text[max(s0, position - 8):position]):
            near = [(m, i) for m, i in before if position - m.end < 400
                    and m.text.lower() not in _FIRST_PERSON]
            return near[-1][1] if near else None
        opening = text[s0:position]
        if speaker is not None and (re.search(r"\bmy\s*$", opening, re.IGNORECASE)
                                    or not opening.strip()):
            return speaker  # "my last day", a message opening with "Last day today."
        # "30 June will be Mara's last day at Fennel": handled above; "the last day" of a
        # thing is no one's
        return None
    in_sentence = [(m, i) for m, i in before if m.start >= s0 and position - m.end <= _SUBJECT_GAP]
    if not in_sentence:
        return None
    m, i = in_sentence[-1]
    if not _SUBJECT_TO_VERB.match(text[m.end:position]):
        return None  # the verb is another subject's ("Mara said the job left …")
    return i


__all__ = ["CLOSURE", "DEPARTURE", "END_RULES", "EndEvent", "EndRule", "end_events"]
