"""Coreference for the common cases, after the vote: these mentions are links, not votes.

- a lone given name ("Priya") to the full name the chunk states ("Priya Raman"), and a
  company's first word ("Northwind") to its full name ("Northwind Analytics");
- "the project" / "the team" / "the service" / "the company" to the nearest compatible
  entity before it (or, failing that, one of the preceding episodes' entities);
- he / she to the subject of the latest sentence naming a person;
- a sentence-initial "It" to the previous sentence's subject when that is a system, product,
  technology or organisation ("The Billing Service is critical. It depends on PostgreSQL."),
  and "; it" to its own sentence's first such thing ("… is based in Seoul; it used to …");
- "the CTO" to the one person the chunk gives that title ("Olufemi Adeyemi (CTO)");
- an abbreviation a name introduces in brackets ("Warehouse Integrations (WI)") to that name,
  there and wherever the chunk uses it (these mentions also make it the entity's alias).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.given_names import is_given_name
from knotwork.ingestion.extraction.types import KnownName, Mention
from knotwork.resolution.name_forms import has_non_person_word

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


def given_name_mentions(text: str, found: Sequence[Mention]) -> list[Mention]:
    """A lone given name ("Priya") where the chunk also names the full person."""
    out: list[Mention] = []
    for m in found:
        words = (m.refers_to or m.text).split()
        if m.type is not EntityType.PERSON or len(words) < 2 or m.extractor == "coref" \
                or has_non_person_word(" ".join(words)):
            continue  # "Falcon Migration" typed a person: "Falcon" is no given name of it
        for hit in re.finditer(r"\b" + re.escape(words[0]) + r"\b(?!\s+[A-Z])", text):
            out.append(Mention(hit.start(), hit.end(), hit.group(0), EntityType.PERSON, 0.75,
                               "rule", refers_to=m.refers_to or m.text))
    return out + _short_company_mentions(text, found)


# generic first words that name no company on their own ("Global Payments Ltd" ≠ "Global")
_GENERIC_FIRST = frozenset({"global", "international", "united", "national", "general", "first",
                            "new", "american", "european", "digital", "data", "cloud", "north",
                            "south", "east", "west", "central", "royal", "the"})


def _short_company_mentions(text: str, found: Sequence[Mention]) -> list[Mention]:
    """A company's first name word alone ("Northwind Analytics … Northwind is based in …")."""
    out: list[Mention] = []
    for m in found:
        words = (m.refers_to or m.text).split()
        if (m.type is not EntityType.ORGANIZATION or m.subtype is not None or len(words) < 2
                or m.extractor == "coref" or len(words[0]) < 4 or not words[0][:1].isupper()
                or words[0].lower() in _GENERIC_FIRST):
            continue
        for hit in re.finditer(r"\b" + re.escape(words[0]) + r"\b(?!\s+[A-Z])(?!['’-]\w)", text):
            if any(f.start <= hit.start() < f.end for f in found):
                continue
            out.append(Mention(hit.start(), hit.end(), hit.group(0), EntityType.ORGANIZATION, 0.7,
                               "rule", refers_to=m.refers_to or m.text))
    return out


def coref_mentions(text: str, found: Sequence[Mention], context: Sequence[KnownName]) -> list[Mention]:
    out: list[Mention] = []
    for m in _COREF_RE.finditer(text):
        if any(not (m.end() <= f.start or m.start() >= f.end) for f in found):
            continue
        want_type, want_sub = _COREF_TARGET[m.group(1).lower()]

        def fits(etype: EntityType, subtype: str | None,
                 want_type: EntityType | None = want_type, want_sub: str | None = want_sub) -> bool:
            if want_sub is not None:
                return subtype == want_sub
            return etype == want_type and subtype != "TEAM"

        target: str | None = None
        for prior in reversed([f for f in found if f.end <= m.start()]):
            if fits(prior.type, prior.subtype):
                target = prior.refers_to or prior.text
                break
        if target is None:
            target = next((ctx.name for ctx in context if fits(ctx.type, ctx.subtype)), None)
        if target is not None:
            etype = want_type or (EntityType.ORGANIZATION if want_sub == "TEAM" else EntityType.PRODUCT)
            out.append(Mention(m.start(), m.end(), m.group(0), etype, 0.6, "coref", want_sub,
                               refers_to=target))
    out += _it_mentions(text, found)
    out += title_mentions(text, found)
    out += acronym_mentions(text, found)
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


# "It is …" + adjective is mostly pleonastic ("It is unclear whether"); "It is owned by" is not
_IT_RE = re.compile(r"(?:(?:^|(?<=[.!?]\s)|(?<=\n))It|(?<=;\s)it)\b(?!\s+(?:is|was|'s|’s|seems|looks|would|might|"
                    r"may|could|should|will be|has been)\s+(?!(?:owned|led|run|maintained|used|built|"
                    r"developed|managed|hosted|based|located|backed|powered|written|part)\b))", re.MULTILINE)
_IT_TYPES = frozenset({EntityType.PRODUCT, EntityType.TECHNOLOGY, EntityType.ORGANIZATION})


def _it_mentions(text: str, found: Sequence[Mention]) -> list[Mention]:
    out: list[Mention] = []
    for m in _IT_RE.finditer(text):
        before = text[: m.start()].rstrip()
        sentence_start = max(before.rfind(". ", 0, len(before) - 1), before.rfind("\n")) + 1
        if m.group(0) == "it":  # "the Edge Team is based in Seoul; it used to sit in …"
            subject = next((f for f in found if sentence_start <= f.start < m.start()
                            and f.type in _IT_TYPES), None)
        else:
            subject = next((f for f in found if sentence_start <= f.start < m.start()), None)
            if subject is not None and len(text[sentence_start:subject.start].split()) > 2:
                continue  # not the previous sentence's subject
        if subject is None or subject.type not in _IT_TYPES or subject.extractor == "speaker":
            continue
        out.append(Mention(m.start(), m.end(), m.group(0), subject.type, 0.55, "coref", subject.subtype,
                           refers_to=subject.refers_to or subject.text))
    return out


_TITLE = r"(?:CEO|CTO|CFO|COO|CIO|CISO|CPO|CMO|CRO|CSO|VP|SVP|EVP)"
# the person a title is given to: "Olufemi Adeyemi (CTO)", "Dana Wu, our CTO,", "CTO Dana Wu"
_TITLE_AFTER = re.compile(r"^\s*(?:\(\s*|,\s*(?:the\s+|our\s+|their\s+)?)(" + _TITLE + r")\b")
_TITLE_BEFORE = re.compile(r"\b(" + _TITLE + r")\s*$")
_THE_TITLE = re.compile(r"\b(?:the|our|their|your)\s+(" + _TITLE + r")\b(?!\s+(?:of|for)\b)")


def title_mentions(text: str, found: Sequence[Mention]) -> list[Mention]:
    """"the CTO" where the chunk gives that title to exactly one person."""
    holders: dict[str, set[str]] = {}
    giving: list[int] = []  # where a title is given ("Karin Vogt, the CISO at …"): no link
    for f in found:
        if f.type is not EntityType.PERSON or f.extractor == "coref":
            continue
        after = _TITLE_AFTER.match(text[f.end : f.end + 30])
        before = _TITLE_BEFORE.search(text[max(0, f.start - 12) : f.start])
        for hit in (after, before):
            if hit is not None:
                holders.setdefault(hit.group(1).upper(), set()).add(f.refers_to or f.text)
        if after is not None:
            giving.append(f.end + after.start(1))
    out: list[Mention] = []
    for m in _THE_TITLE.finditer(text):
        people = holders.get(m.group(1).upper(), set())
        if len(people) != 1 or m.start(1) in giving \
                or any(not (m.end() <= f.start or m.start() >= f.end) for f in found):
            continue
        out.append(Mention(m.start(), m.end(), m.group(0), EntityType.PERSON, 0.6, "coref",
                           refers_to=next(iter(people))))
    return out


_IN_BRACKETS = re.compile(r"^[ \t]*\([ \t]*([A-Z][A-Za-z0-9&]{1,7})[ \t]*\)")
# a person's initials are no name of theirs; "Warehouse Integrations (WI)" typed a person by
# spaCy is let through and the abbreviation's votes retype it
_ACRONYM_TYPES = frozenset({EntityType.ORGANIZATION, EntityType.PRODUCT, EntityType.TECHNOLOGY,
                            EntityType.CONCEPT, EntityType.EVENT, EntityType.PERSON})


def _abbreviates(short: str, name: str) -> bool:
    """"WI" for "Warehouse Integrations", "RO" for "RouteOptimizer", "SRE" for "Site
    Reliability Engineering": its letters are the name's word initials or its capitals."""
    letters = "".join(c for c in short.upper() if c.isalpha())
    words = [w for w in re.split(r"[\s/-]+", name) if w and w.lower() not in {"of", "and", "the", "&", "for"}]
    initials = "".join(w[0].upper() for w in words if w[0].isalpha())
    capitals = "".join(c for c in name if c.isupper())
    return len(letters) >= 2 and letters in (initials, capitals)


def acronym_mentions(text: str, found: Sequence[Mention]) -> list[Mention]:
    out: list[Mention] = []
    for f in found:
        name = f.refers_to or f.text
        if f.type not in _ACRONYM_TYPES or f.extractor == "coref" or (
                f.type is EntityType.PERSON and is_given_name(name.split()[0])):
            continue
        bracket = _IN_BRACKETS.match(text[f.end : f.end + 14])
        if bracket is None or not _abbreviates(bracket.group(1), name):
            continue
        short = bracket.group(1)
        etype = EntityType.ORGANIZATION if f.type is EntityType.PERSON else f.type
        for hit in re.finditer(r"(?<![\w-])" + re.escape(short) + r"(?![\w-])", text):
            # over another extractor's span of the same letters (spaCy's "WI"): wins the merge
            out.append(Mention(hit.start(), hit.end(), short, etype, 0.9, "acronym", f.subtype,
                               refers_to=name))
    return out
