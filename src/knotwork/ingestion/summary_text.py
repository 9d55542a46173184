"""Extractive entity summaries as text: fact sentences added and withdrawn.

A summary is its fact sentences joined by spaces. A fact taken from a roster line or a
table row ("Elena Kang; Role: CTO") has no closing stop, so once joined it ran into the
next sentence: a later batch then no longer found it as one sentence and added it again
(the summary, and the entity's vector text, repeated itself), and a retired fact could not
be taken out. Each sentence is stored closed by a stop, and presence is checked on the
text, not on a sentence split that a stop inside a name ("Dr. Ruiz") would break.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

from knotwork.domain.models import Fact

SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
SUMMARY_SENTENCES = 4
SUMMARY_CHARS = 600
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def closed(sentence: str) -> str:
    """The sentence with a closing stop (unchanged when it has one)."""
    text = " ".join(sentence.split())
    return text if not text or text[-1] in ".!?…" else f"{text}."


def _whole(summary: str, sentence: str, *, own: bool = True) -> int:
    """Where ``sentence`` stands in the summary as whole sentences (-1: nowhere); ``own``: as
    a sentence of its own, not as the end of a longer one."""
    at = summary.find(sentence)
    while at >= 0:
        end = at + len(sentence)
        # stored sentences are closed, so a whole one starts the summary or follows a stop: a
        # table row's sentence also ends the same row with its heading before it ("Directory —
        # Ann; Role: CTO."), and taking the shorter out of the longer left the heading behind
        starts = at == 0 or (summary[at - 1] == " " and (not own or summary[at - 2] in ".!?…"))
        if starts and (end == len(summary) or summary[end] == " "):
            return at
        at = summary.find(sentence, at + 1)
    return -1


def summary_without(summary: str, sentences: Iterable[str]) -> str:
    """The summary less these sentences, where each stands whole (as stored: closed)."""
    out = " ".join(summary.split())
    for sentence in sentences:
        form = closed(sentence)
        while form and (at := _whole(out, form)) >= 0:
            out = " ".join(f"{out[:at]} {out[at + len(form):]}".split())
    return out


def summary_with(summary: str, sentences: Iterable[str], max_sentences: int,
                 max_chars: int) -> str:
    """The summary with these sentences appended in order, each once, up to
    ``max_sentences`` sentences and ``max_chars`` characters."""
    out = " ".join(summary.split())
    count = len([s for s in SENTENCE_END.split(out) if s])
    for sentence in sentences:
        if count >= max_sentences:
            break
        text = closed(sentence)
        if not text or _whole(out, text, own=False) >= 0:  # said already, maybe headed
            continue
        out = f"{out} {text}" if out else text
        count += 1
    return " ".join(s for s in SENTENCE_END.split(out)[:max_sentences] if s)[:max_chars]


def _current(fact: Fact) -> bool:
    return fact.invalid_at is None and fact.expired_at is None and bool(fact.episodes)


def _ranked(facts: Iterable[Fact]) -> list[Fact]:
    """Current facts in the order a chronological ingest would add them: the longest
    standing first (a later fact joins at the end, so the lead sentences an entity's vector
    encodes stay), then the most confident, then by sentence."""
    return sorted((f for f in facts if _current(f)),
                  key=lambda f: (f.valid_at or _EARLIEST, -f.confidence, f.fact))


def extractive_summary(facts: Iterable[Fact], max_sentences: int = SUMMARY_SENTENCES,
                       max_chars: int = SUMMARY_CHARS) -> str:
    """An entity's extractive summary as a function of its facts (issue 18): the sentences of
    its current evidenced facts (``_ranked``), each once."""
    return summary_with("", [f.fact for f in _ranked(facts)], max_sentences, max_chars)


def machine_written(summary: str, sentences: Iterable[str]) -> bool:
    """Whether the summary is made only of these sentences: whole ones, and at its end, as
    ``summary_with`` cuts at ``max_chars``, the start of one. A cut sentence left the summary
    looking written by a person, so after a crash's rollback and redo it was kept and added
    to rather than recomputed, and differed from a clean ingest's."""
    sentences = list(sentences)
    rest = summary_without(summary, sentences)
    return not rest or any(closed(s).startswith(rest) for s in sentences)


def resummarized(summary: str, facts: Iterable[Fact], gone: Iterable[str] = ()) -> str:
    """The summary an entity with these facts (all of them, ended ones too) should have.

    A summary made only of fact sentences (``gone``: sentences of facts just retired) is
    machine-written and recomputed: ``extractive_summary``, whatever order the facts came
    in. One with other text (written by a person or an LLM) is kept, less the sentences of
    facts that ended or went, plus current fact sentences up to the bound."""
    facts = list(facts)
    every = [*(f.fact for f in facts), *gone]
    if machine_written(summary, every):
        return extractive_summary(facts)
    ended = [f.fact for f in facts if not _current(f)]
    return summary_with(summary_without(summary, [*ended, *gone]), [f.fact for f in _ranked(facts)],
                        SUMMARY_SENTENCES, SUMMARY_CHARS)
