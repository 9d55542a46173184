"""Speaker prefixes ("Alice Chen(user): …", "Bob Smith: …") and first-person pronouns."""

from __future__ import annotations

import re
from dataclasses import dataclass

from knotwork.ingestion.extraction.given_names import is_given_name


def _words(text: str) -> list[str]:
    return text.split()

_SPEAKER = re.compile(
    r"^[ \t]*(?:\[[^\]\n]{1,40}\][ \t]*)?"
    r"(?P<name>[A-Z][\w'’.-]*(?:[ \t]+[A-Z][\w'’.-]*){0,3})"
    r"[ \t]*(?:\((?P<role>[^)\n]{1,30})\))?[ \t]*:[ \t]+",
    re.MULTILINE,
)
_FIRST_PERSON = re.compile(r"\b(I|me|Me|my|My|mine|Mine|myself|Myself|we|We|us|our|Our)\b")


# words that make a "Heading: text" line a label rather than a speaker prefix
_NOT_NAME_WORDS = frozenset(
    _words("""items item steps step notes note points point questions question summary agenda
    decision decisions action actions update updates status owner owners date time deadline
    goal goals risk risks issue issues impact timeline context background problem solution
    resolution outcome outcomes result results details detail description overview scope
    next open done todo blocker blockers reminder fyi warning info tip important edit
    q a re subject tl;dr tldr total cost budget version release priority""")
)


@dataclass(frozen=True, slots=True)
class SpeakerTurn:
    name: str
    name_start: int
    name_end: int
    body_start: int
    body_end: int


def speaker_turns(text: str) -> list[SpeakerTurn]:
    """Each line that starts with a speaker prefix opens a turn running to the next one."""
    turns: list[SpeakerTurn] = []
    roles: list[bool] = []
    matches = list(_SPEAKER.finditer(text))
    for i, m in enumerate(matches):
        name = m.group("name")
        if any(word.lower().strip(".") in _NOT_NAME_WORDS for word in name.split()):
            continue
        if name.isupper() or any(ch.isdigit() for ch in name):
            continue  # "ID: …", "Q3: …" are labels
        if name.lower() in {"note", "notes", "update", "fyi", "todo", "decision", "summary",
                            "action", "status", "q", "a", "re", "subject", "date", "owner", "name",
                            "role", "team", "title", "email", "department", "location", "manager",
                            "lead", "project", "when", "where", "attendees", "participants",
                            "goal", "goals", "outcome", "context", "problem", "impact",
                            "resolution", "timeline", "background", "next steps", "risk",
                            "risks", "description", "reporter", "assignee", "priority", "tags",
                            "warning", "tip", "info", "important"}:
            continue
        if any(len(word) > 1 and word.isupper() for word in name.split()):
            continue  # "VP Data: …", "SRE Notes: …" are labels
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        turns.append(SpeakerTurn(name, m.start("name"), m.end("name"), m.end(), end))
        roles.append(m.group("role") is not None)
    # a one-word prefix ("Deciders:", "Purpose:") is a page label unless it is a known given
    # name, carries a role ("Kofi (SRE):"), or the chunk is a chat (several turns, one of them
    # clearly a person's name)
    named = any(len(t.name.split()) >= 2 or is_given_name(t.name) for t in turns)
    chat = named and len(turns) >= 2
    return [t for t, role in zip(turns, roles, strict=True)
            if " " in t.name or role or chat or is_given_name(t.name)]


def first_person_spans(text: str, turn: SpeakerTurn) -> list[tuple[int, int, str]]:
    body = text[turn.body_start : turn.body_end]
    return [
        (turn.body_start + m.start(), turn.body_start + m.end(), m.group(0))
        for m in _FIRST_PERSON.finditer(body)
    ]
