"""Questions that ask for a kind of technology: "What database does the Billing API use?",
"Which language is the Router written in?".

Without this, such a question is answered by whatever the entity uses or says (its framework,
its team), because the wording matches any usage sentence. A kind of technology is asked
for, so the answer must name one of that kind next to the entity: the evidence is searched for
a sentence that names both (its place in the ranking moves up), and without one the question is
left unanswered. The kinds and their technologies are in the extraction lexicon.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache

from knotwork.domain.models import Entity
from knotwork.ingestion.extraction.lexicon import TECHNOLOGY_CATEGORIES

__all__ = ["asked_category", "category_first", "names_of_kind", "unsupported_category"]

_ASKS = re.compile(
    r"^\s*(?:what|which)\s+(?:(?:kind|type|sort)s?\s+of\s+)?(?P<kind>"
    + "|".join(re.escape(k) for k in sorted(TECHNOLOGY_CATEGORIES, key=len, reverse=True))
    + r")(?:e?s)?\s+(?:does|do|did|is|are|was|were|will|has|have|had)\b", re.IGNORECASE)


def asked_category(question: str) -> str | None:
    """The kind of technology the question asks for ("database"), or None."""
    m = _ASKS.match(question)
    return m.group("kind").lower() if m else None


@cache
def _kind_pattern(kind: str) -> re.Pattern[str]:
    names = sorted(TECHNOLOGY_CATEGORIES[kind], key=len, reverse=True)
    # short names ("Go", "R") only as written; longer ones in any case ("postgres")
    short = [re.escape(n) for n in names if len(n) <= 3]
    long = [re.escape(n) for n in names if len(n) > 3]
    parts = []
    if long:
        parts.append(r"(?i:" + "|".join(long) + r")")
    if short:
        parts.append("|".join(short))
    return re.compile(r"(?<![\w.#+-])(?:" + "|".join(parts) + r")(?![\w#+]|-\w)")


def names_of_kind(kind: str, text: str) -> list[str]:
    """The technologies of the kind a text names, in order."""
    return [m.group(0) for m in _kind_pattern(kind).finditer(text)]


def _about(named: Mapping[str, Entity], text: str) -> bool:
    lowered = text.lower()
    return any(re.search(r"(?<!\w)" + re.escape(n.lower()) + r"(?!\w)", lowered)
               for e in named.values() for n in (e.name, *e.aliases) if len(n) > 1)


def category_first(question: str, named: Mapping[str, Entity], texts: Sequence[str]) -> int | None:
    """The position of the first text naming both a question's entity and a technology of the
    asked kind (None: not such a question, or no such text)."""
    kind = asked_category(question)
    if kind is None or not named:
        return None
    return next((i for i, t in enumerate(texts) if names_of_kind(kind, t) and _about(named, t)),
                None)


def unsupported_category(question: str, named: Mapping[str, Entity],
                         texts: Sequence[str]) -> str | None:
    """Why the evidence does not say which technology of the asked kind the entity uses."""
    kind = asked_category(question)
    if kind is None or not named or category_first(question, named, texts) is not None:
        return None
    return f"no {kind} of {', '.join(sorted(e.name for e in named.values()))} is stated"
