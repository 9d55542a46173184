"""An answer that names a team by its letters ("The FDT owns Fraudhound") says whom it means:
the first use of an entity's all-capitals alias is followed by its name in brackets, when the
answer does not name it otherwise ("The FDT (Fraud Detection) owns Fraudhound")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from knotwork.domain.models import Entity, Fact

__all__ = ["spell_out_acronyms"]

_LETTERS = re.compile(r"(?<![\w&])[A-Z][A-Z0-9&]{1,5}(?![\w&])")


def spell_out_acronyms(answer: str, known: Iterable[Entity], facts: Sequence[Fact],
                       lookup: Callable[[Sequence[str]], list[Entity]]) -> str:
    """``known``: entities at hand (the question's); ``facts``: the answer's facts, whose ends
    are looked up with ``lookup`` only when the answer has a word in capitals at all."""
    words = set(_LETTERS.findall(answer))
    if not words:
        return answer
    pool = {e.id: e for e in known}
    missing = [i for f in facts for i in (f.source_id, f.target_id) if i not in pool]
    if missing:
        pool.update((e.id, e) for e in lookup(list(dict.fromkeys(missing))))
    lowered = answer.lower()
    for entity in pool.values():
        name = entity.name
        if name.lower() in lowered or len(name) <= 6 or name.isupper():
            continue
        for alias in entity.aliases:
            if alias in words and _initials_fit(alias, name):
                answer = re.sub(r"(?<![\w&])" + re.escape(alias) + r"(?![\w&])",
                                f"{alias} ({name})", answer, count=1)
                words.discard(alias)
                break
    return answer


def _initials_fit(letters: str, name: str) -> bool:
    """"FDT" for "Fraud Detection", "AE" for "Analytics Engineering": the letters begin with
    the name's first initial (the alias itself came from the text's own brackets)."""
    return name[:1].upper() == letters[:1]
