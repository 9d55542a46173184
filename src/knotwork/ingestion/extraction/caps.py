"""Lone capitalised words inside sentences: invented product names NER leaves untagged.

"Paymaster relies on Intake", "Sleuth scores every claim": enterprise systems get made-up
one-word names the statistical model has never seen. A capitalised word inside a sentence
(not its first word, not part of a run of capitalised words, not a given name or a function
word) is such a name more often than not; so is the same word opening another sentence of
the chunk, or opening one as the subject of a verb ("Paymaster pays out …"). This is a weak vote of the product type: the capitalisation vote must agree, and
any typed extractor's word wins.
"""

from __future__ import annotations

import re

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.given_names import is_given_name
from knotwork.ingestion.extraction.lexicon import FUNCTION_WORDS, STOP_NAMES, TECHNOLOGIES
from knotwork.ingestion.extraction.types import Mention

__all__ = ["caps_mentions"]

_WORD = re.compile(r"[A-Za-z][\w'’-]*")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_CONFIDENCE = 0.5
_NUMBERED = re.compile(r"[ \t]+#?\d")
# a sentence's subject acting: "Paymaster pays out …", "Sleuth scores …", "Intake is …"
_ACTS = re.compile(r"[ \t]+(?:is|was|has|(?!(?:is|was|has|does|this|thus|its|his|"
                   r"hers|yes|less|unless|always|perhaps|across|plus|us)\b)[a-z]{2,}[^s\W]s)\b")
# a function of the company named bare ("with help from Legal", "ask Storage"): a team
_DEPARTMENTS = frozenset(
    ["legal", "compliance", "security", "storage", "platform", "finance", "marketing", "sales", "engineering", "operations", "support", "design", "data", "infrastructure", "product", "people", "procurement", "growth", "billing", "payments", "research", "analytics", "networking", "facilities", "recruiting", "talent", "accounting", "treasury", "risk", "audit", "privacy", "quality", "reliability", "mobile", "frontend", "backend", "devops"])
# titles and roles, not names ("Head of …", "Director")
_NOT_NAMES = frozenset(["nobody", "everybody", "somebody", "anybody", "someone", "anyone",
                        "everyone", "noone", "nothing", "everything", "something", "anything"])
_TITLES = frozenset(
    ["head", "director", "manager", "lead", "chief", "senior", "staff", "principal", "junior", "intern", "officer", "president", "founder", "engineer", "architect", "analyst", "consultant", "contractor"])


def _title_case(line: str) -> bool:
    words = _WORD.findall(line)
    return len(words) >= 3 and sum(w[0].isupper() for w in words) * 5 >= len(words) * 3


def _candidate(word: str) -> bool:
    return (word[:1].isupper() and not word.isupper() and len(word) >= 4 and word.isalpha()
            and word.lower() not in FUNCTION_WORDS and word.lower() not in STOP_NAMES
            and word.lower() not in _TITLES and word.lower() not in _NOT_NAMES
            and word not in TECHNOLOGIES and not is_given_name(word))


# an inner capital makes a word a name ("DockSync", "PayoutHub", "TechCorp") wherever it stands;
# not a surname ("McAllister", "DeLuca") and not a known technology (the gazetteer types those)
_CAMEL = re.compile(r"(?<![\w@#/.-])(?!(?:Mc|Mac|De|Di|Da|La|Le|Van|Von|O')[A-Z])"
                    r"[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+(?![\w@/-]|\.\w)")
_COMPANY_ENDS = ("Corp", "Labs", "Inc", "Soft", "Tech", "Systems", "Works", "Group", "Bank",
                 "Capital", "Ventures", "Partners", "Media", "Health", "Pay")
_RUN = re.compile(r"\b[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*)+")


def caps_mentions(text: str) -> list[Mention]:
    # a word of a longer name in the chunk ("Brightwater" of "Brightwater Analytics Inc") is
    # that name's short form: coreference links it, no vote of its own
    in_runs = {w for run in _RUN.finditer(text) for w in run.group(0).split()}
    inner: dict[str, list[tuple[int, int]]] = {}
    openers: list[tuple[str, int, int]] = []
    for line in re.finditer(r"[^\n]+", text):
        body = line.group(0)
        if body.lstrip().startswith(("#", "|")) or _title_case(body) or (
                len(body.split()) <= 3 and not body.rstrip().endswith((".", "!", "?"))):
            continue  # a heading or a title ("Action items"): no sentence to read a name in
        for sent in _SENTENCE.finditer(body):
            words = list(_WORD.finditer(sent.group(0)))
            for k, w in enumerate(words):
                word = w.group(0)
                if not _candidate(word) or word in in_runs:
                    continue
                before = sent.group(0)[:w.start()]
                if re.search(r"[:(\-–—•*]\s*$", before):
                    continue  # a label's value or a list item's first word
                if _NUMBERED.match(sent.group(0), w.end()):
                    continue  # "Phase 2", "Wave 2": the word is half of a numbered name
                near = words[k - 1:k] + words[k + 1:k + 2]
                if any(n.group(0)[:1].isupper() for n in near):
                    continue  # a run of names ("Rhys Morgan"): other extractors type those
                start = line.start() + sent.start() + w.start()
                if k == 0:
                    openers.append((word, start, start + len(word)))
                else:
                    inner.setdefault(word, []).append((start, start + len(word)))
    camel = [m for m in _CAMEL.finditer(text) if m.group(0) not in TECHNOLOGIES]
    out = [_camel(m.group(0), m.start(), m.end()) for m in camel]
    taken = {m.start() for m in camel}
    inner = {w: [(s, e) for s, e in spans if s not in taken] for w, spans in inner.items()}
    openers = [(w, s, e) for w, s, e in openers if s not in taken]
    out += [_mention(w, s, e) for w, spans in inner.items() for s, e in spans]
    out += [_mention(w, s, e) for w, s, e in openers
            if w in inner or _ACTS.match(text, e)]
    return sorted(out, key=lambda m: m.start)


def _camel(word: str, start: int, end: int) -> Mention:
    if word.endswith(_COMPANY_ENDS):
        return Mention(start, end, word, EntityType.ORGANIZATION, 0.8, "caps")
    return Mention(start, end, word, EntityType.PRODUCT, 0.8, "caps")


def _mention(word: str, start: int, end: int) -> Mention:
    if word.lower() in _DEPARTMENTS:
        return Mention(start, end, word, EntityType.ORGANIZATION, _CONFIDENCE, "caps", "TEAM")
    return Mention(start, end, word, EntityType.PRODUCT, _CONFIDENCE, "caps")
