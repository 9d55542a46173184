"""Names that a page's layout gives away, where statistical NER sees no sentence.

Enterprise pages state who and what in labelled lines and table cells ("Owning team:
Messaging", "Manager: Femi Adebayo", "Location: Berlin") and name their subject in the
heading ("Notifications Hub" over "Owner:" / "Stack:" lines). The value of a label is typed
by the label; a Title Case heading over system labels is the system the page describes.
"""

from __future__ import annotations

import re

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.given_names import is_given_name
from knotwork.ingestion.extraction.lexicon import (
    PROJECT_WORDS,
    STOP_NAMES,
    SYSTEM_WORDS,
    TEAM_WORDS,
    TECHNOLOGIES,
)
from knotwork.ingestion.extraction.types import Mention

__all__ = ["label_mentions"]

_NAME = r"[A-Z][\w.'’-]*"
_LABEL_START = r"(?:^|(?<=[;|(]))[ \t]*(?:[-*•][ \t]*)?"
_VALUE_END = r"[ \t]*(?=$|[;|),/]|[ \t]\()"

# "Location: Berlin", "Office: São Paulo; Team: …"
_PLACE = re.compile(
    _LABEL_START + r"(?i:location|office|city|based in|home office|site|country|hq|headquarters|"
    r"work location)[ \t]*:[ \t]*(" + _NAME + r"(?:[ -](?:" + _NAME + r"|de|do|da|del|la|le|am|"
    r"upon|on|sur)){0,3})" + _VALUE_END, re.MULTILINE)
# "Owning team: Messaging": the label says a team, whatever the value's shape
_TEAM = re.compile(
    _LABEL_START + r"(?i:owning team|owner team|team|squad|responsible team|maintaining team|"
    r"support team|department)[ \t]*:[ \t]*(" + _NAME + r"(?:[ \t]+" + _NAME + r"){0,3})"
    + _VALUE_END, re.MULTILINE)
# "Owner: Messaging": a team only when the value is one word (a person has two)
_OWNER_WORD = re.compile(
    _LABEL_START + r"(?i:owner|owners|owned by|maintained by|maintainers?|supported by)[ \t]*:"
    r"[ \t]*(" + _NAME + r")" + _VALUE_END, re.MULTILINE)
# "Manager: Femi Adebayo", "Maintainers: Sara Lindgren, Ahmed El-Sayed"
_PERSON_LABEL = re.compile(
    _LABEL_START + r"(?i:(?:engineering |line |product |project |program |delivery )?manager|em|pm|"
    r"(?:tech(?:nical)? |team |project |engineering )?lead|owner|owners|dri|sponsor|contact|"
    r"author|authors|assignee|reporter|maintainers?|on-?call|ic|incident commander|reports to|"
    r"director|head|vp|cto|ceo|cfo|coo|attendees|participants|presenters?|reviewers?|approvers?)"
    r"[ \t]*:[ \t]*", re.MULTILINE)
# a full stop after a word of two letters or more ("Huang.", not the initial "J.")
_SENTENCE_END = re.compile(r"(?<=[^\W\d_]{2})\.(?=\s|$)")
_PERSON_NAME = re.compile(r"(" + _NAME + r"(?:[ \t]+(?:van|von|de|da|del|der|den|le|la|di|bin|al)"
                          r")*(?:[ \t]+" + _NAME + r"){1,2})")

# a page about one system: a Title Case heading over "Owner:" / "Stack:" lines
_SYSTEM_LABEL_LINE = re.compile(
    r"^[ \t]*(?:[-*•][ \t]*)?(?i:owners?|owning team|owner team|owned by|maintainers?|"
    r"maintained by|maintaining team|(?:tech(?:nology)? )?stack|dependencies|depends on|upstream|"
    r"downstream|consumers|repository|repo|runbook|on-?call|sla|slo|languages?|built with|"
    r"runs on|hosting|deployed (?:on|to))[ \t]*:", re.MULTILINE)
_HEADING = re.compile(r"[ \t]*(?:#{1,6}[ \t]+)?(" + _NAME
                      + r"(?:[ \t]+(?:[A-Z0-9][\w&'’.-]*|of|and|for|&)){0,4})[ \t]*")
_GENERIC_HEADS = frozenset({
    "overview", "notes", "runbook", "guide", "charter", "review", "plan", "update", "summary",
    "retro", "retrospective", "postmortem", "post-mortem", "minutes", "faq", "onboarding",
    "handbook", "policy", "process", "roadmap", "status", "report", "agenda", "design",
    "proposal", "rfc", "decision", "decisions", "log", "checklist", "readme", "index", "home",
    "page", "documentation", "docs", "architecture", "introduction", "intro", "meeting", "sync",
    "standup", "kickoff",
})


def _person_like(name: str) -> bool:
    words = name.split()
    return 2 <= len(words) <= 4 and words[-1] not in TEAM_WORDS | SYSTEM_WORDS | PROJECT_WORDS \
        and not any(w in TECHNOLOGIES for w in words) and name not in STOP_NAMES


def _people(text: str) -> list[Mention]:
    out = []
    for label in _PERSON_LABEL.finditer(text):
        pos = label.end()
        line_end = len(text) if (nl := text.find("\n", pos)) < 0 else nl
        while pos < line_end:
            match = _PERSON_NAME.match(text, pos, line_end)
            name = match.group(1) if match is not None else ""
            stop = _SENTENCE_END.search(name)
            if stop is not None:  # "Owner: Mei Huang. The app …": the name ends with its sentence
                name = name[: stop.start()]
            if match is None or not _person_like(name):
                break
            out.append(Mention(match.start(1), match.start(1) + len(name), name, EntityType.PERSON,
                               0.91, "rule"))
            if stop is not None:
                break
            aside = re.match(r"[ \t]*\([^()\n]*\)", text[match.end():line_end])  # "(CFO)"
            rest = text[match.end() + (aside.end() if aside else 0):line_end]
            glue = re.match(r"[ \t]*(?:,|&|\band\b|\+)[ \t]*", rest)
            if glue is None:
                break
            pos = line_end - len(rest) + glue.end()
    return out


def _heading_system(text: str) -> list[Mention]:
    lead = len(text) - len(text.lstrip())
    end = text.find("\n", lead)
    end = len(text) if end < 0 else end
    match = _HEADING.fullmatch(text, lead, end)
    if match is None or not _SYSTEM_LABEL_LINE.search(text, end):
        return []
    name = match.group(1)
    words = name.split()
    if words[-1].lower() in _GENERIC_HEADS or words[0] in PROJECT_WORDS \
            or words[-1] in TEAM_WORDS or name in STOP_NAMES or name in TECHNOLOGIES \
            or (len(words) > 1 and is_given_name(words[0])):
        return []
    return [Mention(m.start(), m.end(), name, EntityType.PRODUCT, 0.92, "rule", "SYSTEM")
            for m in re.finditer(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text)]


def label_mentions(text: str) -> list[Mention]:
    """Places, teams and people named as label values, and the system a page is about."""
    out = [Mention(m.start(1), m.end(1), m.group(1), EntityType.LOCATION, 0.92, "rule")
           for m in _PLACE.finditer(text) if m.group(1) not in TECHNOLOGIES]
    for regex in (_TEAM, _OWNER_WORD):
        for m in regex.finditer(text):
            name = m.group(1)
            if is_given_name(name.split()[0]) or name in TECHNOLOGIES or name in STOP_NAMES:
                continue
            out.append(Mention(m.start(1), m.end(1), name, EntityType.ORGANIZATION, 0.91,
                               "rule", "TEAM"))
    return out + _people(text) + _heading_system(text)
