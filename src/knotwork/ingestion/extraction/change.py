"""The old side of a change sentence: which mention names what stopped holding.

"Tariq moves from the Fraud Team to the Search Team", "the Risk Team left the Enterprise
Division for …", "Amir is the lead, replacing Katarina", "(previously the Integrations Team)",
"it used to sit in Melbourne", "We ended the Lumenwatch contract on …", "Rafael handed the
squad over to Yara": a fact linking that mention held *until* the sentence's date, not from
it. Pure text rules over the words right before (or after) the mention, no LLM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from knotwork.ingestion.extraction.types import LocalEntity, LocalRelation

_DET = r"(?:\s+(?:the|our|its|their|his|her|a|an))?"
# words right before a mention that make it the old holder on their own
_OLD_BEFORE = re.compile(
    r"(?:\blast\s+(?:working\s+)?day\s+(?:at|with)|\b(?:left|leave|leaves|leaving|quit|quits|exited|exits|ended|ends|ending|dropped|drops|retired|"
    r"retires|decommissioned|sunset|sunsetted|off|replacing|replaces|"
    r"replaced|succeeding|succeeds|succeeded|instead\s+of|rather\s+than|until\s+then,?|"
    r"before\s*:|(?:previously|formerly)(?:\s+(?:under|in|on|at|with|part\s+of))?|used\s+to(?:\s+[a-z]+){0,2}(?:\s+(?:in|on|at|with|for|under))?)" + _DET + r"\s*"
    r"|\bbefore\s+that,?\s+(?:[\w'’-]+\s+){0,4}(?:was|were)\s+(?:on|in|part\s+of|under|at|with)"
    + _DET + r"\s*)$",
    re.IGNORECASE)
# "from" is the old side only when the sentence moves something: "moves from the X to the Y",
# also with the role it held there: "moved from leading the X team to …"
_FROM_BEFORE = re.compile(r"\bfrom(?:\s+[a-z]+ing)?" + _DET + r"\s*$", re.IGNORECASE)
_MOVE = re.compile(r"\b(?:mov(?:e|es|ed|ing)|transferr?(?:s|ed|ing)?|switch(?:es|ed|ing)?|"
                   r"relocat(?:e|es|ed|ing)|migrat(?:e|es|ed|ing)|join(?:s|ed|ing)?|came|comes|coming|hand(?:s|ed|ing)?|"
                   r"took|takes?|taking|taken)\b", re.IGNORECASE)
# "moves data from Kafka to Snowflake": a flow, not a change of home
_FLOW = re.compile(r"\s+(?:the\s+|its\s+|our\s+)?(?:data|traffic|events?|messages?|records?|files?|logs?|"
                   r"metrics|requests?|payloads?|rows|batches|jobs?)\b", re.IGNORECASE)
# the old holder as the subject: "Rafael handed the squad over to Yara", "Ana led it until then"
_OLD_AFTER = re.compile(
    r"^\s*(?:handed|hands|handing|passed|passes)\b"
    r"|^\s*(?:[\w'’-]+\s+){0,4}?until\s+then\b"
    r"|^\s*(?:is|was)\s+no\s+longer\b",
    re.IGNORECASE)
_WINDOW = 80  # characters looked at on either side of the mention


def names_old_holder(before: str, after: str) -> bool:
    """Does the mention between ``before`` and ``after`` (its sentence's text on either side)
    name what the sentence says stopped holding?"""
    before, after = before[-_WINDOW:], after[:_WINDOW]
    if _OLD_BEFORE.search(before) or _OLD_AFTER.search(after):
        return True
    move = _MOVE.search(before)
    return bool(_FROM_BEFORE.search(before)) and move is not None \
        and not _FLOW.match(before[move.end():])


def relation_ended(text: str, rel: LocalRelation, entities: Sequence[LocalEntity]) -> bool:
    """Does the relation's sentence (``text`` is the chunk) name one of its ends as the old
    holder of a change? The two ends' nearest mentions inside the sentence are looked at."""
    def inside(index: int) -> list[tuple[int, int]]:
        return [(m.start, m.end) for m in entities[index].mentions
                if rel.start <= m.start and m.end <= rel.end]

    sources, targets = inside(rel.source), inside(rel.target)
    if not sources or not targets:
        return False
    a, b = min(((s, t) for s in sources for t in targets),
               key=lambda st: abs(st[0][0] - st[1][0]))
    return any(names_old_holder(text[rel.start:start], text[end:rel.end]) for start, end in (a, b))


__all__ = ["names_old_holder", "relation_ended"]
