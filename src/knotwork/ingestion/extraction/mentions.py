"""Candidate entity mentions of one chunk, one function per source (the ensemble's voters).

Sources: spaCy NER (label mapped to the taxonomy), rules (project / team / system / company
shapes, ticket ids, given-name + surname), the technology gazetteer, the Slack user table
(handles and user ids), names already in the graph, speaker prefixes and capitalised
proper-noun runs. ``ensemble.vote`` decides which candidates become mentions; coreference
(``coref``) links pronouns and "the project" afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.given_names import is_given_name
from knotwork.ingestion.extraction.label_mentions import label_mentions
from knotwork.ingestion.extraction.lexicon import (
    COMPANY_SUFFIXES,
    FUNCTION_WORDS,
    PROJECT_WORDS,
    STOP_NAMES,
    SYSTEM_WORDS,
    TEAM_WORDS,
    TECHNOLOGIES,
)
from knotwork.ingestion.extraction.speakers import SpeakerTurn, first_person_spans
from knotwork.ingestion.extraction.types import KnownName, Mention
from knotwork.resolution.normalize import clean_display_name, normalize_name

__all__ = ["KnownName", "find_mentions", "rule_type"]

# span precision of each source: where candidates overlap, the higher one gives the span
PRIORITY = {"speaker": 6, "user": 6, "acronym": 5.5, "rule": 5, "gazetteer": 5, "known": 4, "llm": 3.5,
            "gliner": 3.2, "spacy": 3, "coref": 2, "caps": 1.5, "shape": 1}
# spaCy has no calibrated scores: a prior per label (how often the small model is right)
_SPACY_CONFIDENCE: Mapping[str, float] = {"PERSON": 0.75, "GPE": 0.75, "ORG": 0.65, "LOC": 0.7,
                                          "FAC": 0.6, "PRODUCT": 0.55, "EVENT": 0.6,
                                          "WORK_OF_ART": 0.5, "LAW": 0.5}

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
_LEAD_STOP = (r"(?!(?:The|A|An|Our|Their|This|That|These|Each|Every|Any|Some|New|Old|About|Welcome|"
               r"Introducing|Meet|Re|Fwd|Why|How|What|When|Where|Who|Which)\b)")
_PROJECT_RE = re.compile(
    r"\b(?:" + "|".join(sorted(PROJECT_WORDS)) + r")[ \t]+(?:[A-Z][\w-]*|[0-9][\w-]*)"
    r"(?:[ \t]+(?!(?:" + "|".join(sorted(PROJECT_WORDS | TEAM_WORDS | SYSTEM_WORDS)) + r")\b)[A-Z0-9][\w-]*)?"
)
_PROJECT_SUFFIX_RE = re.compile(r"\b(?:the|our|their)\s+(" + _CAP + r")[ \t]+(?:project|initiative)\b")
_TEAM_RE = re.compile(
    r"\b" + _LEAD_STOP + r"((?:" + _CAP + r"[ \t]+){1,3}(?:" + "|".join(sorted(TEAM_WORDS)) + r"))\b"
)
_SYSTEM_RE = re.compile(  # not when the name goes on: "Data Platform Tools" is no "Data Platform"
    r"\b" + _LEAD_STOP + r"((?:" + _CAP + r"[ \t]+){1,3}(?:" + "|".join(sorted(SYSTEM_WORDS)) + r"))\b"
    r"(?![ \t]+(?!(?:" + "|".join(sorted(TEAM_WORDS)) + r")\b)[A-Z][a-z])"
)
# the last word of a person's job title ("Staff Engineer", "Product Designer")
JOB_ROLE_WORDS = ("Manager", "Engineer", "Developer", "Director", "Lead", "Officer", "Designer",
                  "Architect", "Analyst", "Scientist", "Intern", "Consultant", "Recruiter",
                  "Administrator", "Owner", "Specialist", "Coordinator", "Researcher",
                  "Accountant", "Technician", "Strategist", "Tester", "Writer")
_COMPANY_RE = re.compile(
    r"\b" + _LEAD_STOP + r"((?:" + _CAP + r"[ \t]+){1,3}(?:"
    + "|".join(re.escape(s) for s in sorted(COMPANY_SUFFIXES)) + r"))(?![\w])"
    # "Senior Software Engineer" is a job title, not a company called "Senior Software"
    + r"(?![ \t]+(?:" + "|".join(JOB_ROLE_WORDS) + r")\b)"
)
_LOWER = r"(?:[a-z]|[^\W\d_A-Z])"  # a lower-case letter, accented ones too ("Tomás Núñez")
# (a compound given name is one: "Anne-Marie Roy")
_PERSON_RE = re.compile(r"(?<![\w-])([A-Z]" + _LOWER + r"+(?:-[A-Z]" + _LOWER + r"+)?)[ \t]+((?:[A-Z]\.[ \t]+)?(?:O'|Mc|Mac)?[A-Z]"
                        r"(?:[a-zA-Z'’-]|[^\W\d_])+)\b")

# a sentence defining its subject: "Payoutd is the payout scheduler", "Quillmark Payments is a
# card acquiring company": the head noun types the name whatever NER guessed (a person, a place)
_DEFINED_RE = re.compile(
    r"(?:^|(?<=[.!?:]\s)|(?<=\n))[ \t]*(?:The[ \t]+)?(" + _LEAD_STOP
    + r"[A-Z][\w&'’.-]*(?:[ \t]+[A-Z][\w&'’.-]*){0,3})(?:[ \t]+\([A-Z][\w&]{1,9}\))?[ \t]+"
    r"(?:is|was|has[ \t]+been|remains)[ \t]+(?:a|an|the|our|their)[ \t]+(?:[a-z][\w-]*,?[ \t]+){0,5}?"
    r"(?P<head>company|startup|firm|bank|fintech|insurer|lender|retailer|manufacturer|consultancy|"
    r"agency|vendor|supplier|service|microservice|engine|gateway|dashboard|scheduler|system|"
    r"platform|tool|app|application|pipeline|api|library|portal|bot|scanner|proxy|sdk|registry|"
    r"monolith|backend|frontend)\b", re.MULTILINE)
_ORG_HEADS = frozenset({"company", "startup", "firm", "bank", "fintech", "insurer", "lender",
                        "retailer", "manufacturer", "consultancy", "agency", "vendor", "supplier"})
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
    if 2 <= len(words) <= 3 and is_given_name(words[0]) and words[-1][:1].isupper():
        return EntityType.PERSON, None
    return None


def _plausible(text: str) -> bool:
    cleaned = clean_display_name(text)
    if len(cleaned) < 2 or "\n" in text or len(cleaned.split()) > 6:
        return False
    if not any(c.isupper() for c in cleaned) or cleaned.lower() in STOP_NAMES:
        return False
    return not cleaned.replace(" ", "").isdigit()


# a name ending in a kind of document is the document's title: "Rotterdam Beta Report",
# "Payments Team Charter", "Q3 Platform Roadmap"
_DOCUMENT_KIND = re.compile(
    r"\s(?:Report|Reports|Notes|Minutes|Retro|Retrospective|Post-?mortem|Summary|Proposal|"
    r"Runbook|Playbook|Handbook|Roadmap|Spec|Specification|Digest|Newsletter|Memo|Agenda|"
    r"Checklist|Template|FAQ|Recap|Charter|Readme|README|Guidelines|Onboarding Guide)$")
_NOT_A_DOCUMENT = (EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION)


def spacy_mentions(doc: object) -> list[Mention]:
    """spaCy's entities mapped to the taxonomy: the statistical model's vote, nothing more."""
    out: list[Mention] = []
    full_text: str = doc.text  # type: ignore[attr-defined]  # spaCy rebuilds it on each access
    for ent in doc.ents:  # type: ignore[attr-defined]
        etype = _SPACY_TYPES.get(ent.label_)
        if etype is None or not _plausible(ent.text):
            continue
        start, end = ent.start_char, ent.end_char
        # a leading article the model included, or a heading's "About" / "Welcome to"
        lead = re.match(r"(?i)(?:(?:the|a|an|about|welcome\s+to|meet|introducing)\s+)+", ent.text)
        if lead:
            start += lead.end()
        text = re.sub(r"(?:'s|’s)$", "", full_text[start:end])
        if "(" in text:  # "RouteOptimizer (RO)": the name, not its parenthesis
            text = text[: text.index("(")].rstrip()
            if not _plausible(text):
                continue
        if etype in _NOT_A_DOCUMENT and _DOCUMENT_KIND.search(text):
            continue  # "Rotterdam Beta Report" (a page title) is no person, company or place
        out.append(Mention(start, start + len(text), text, etype,
                           _SPACY_CONFIDENCE.get(ent.label_, 0.6), "spacy"))
    return out


def gazetteer_mentions(text: str) -> list[Mention]:
    """Technologies of the curated list (ambiguous words only inside multi-word names)."""
    return [Mention(m.start(), m.end(), m.group(0), EntityType.TECHNOLOGY, 0.95, "gazetteer")
            for m in _TECH_RE.finditer(text)]


# "the Payments Core team": a lower-case team word after a determiner and capitalised words
_TEAM_LOWER_RE = re.compile(  # also at a line or table cell start ("Team: Payments team")
    r"(?:\b(?:[Tt]he|[Oo]ur|[Tt]heir|[Yy]our|a|[Mm]y)\s+|(?:^|(?<=[:;|(]))[ \t]*)("
    + _LEAD_STOP + r"(?:" + _CAP + r"[ \t]+){1,3}"
    r"(?:team|squad|guild|tribe|chapter|department|division|group|crew))\b"
    r"(?!:)", re.MULTILINE)  # "Owning team: Messaging" is a label, not a team's name
# "the Orion ingestion service", "our Billing service": capitalised words, at most two
# lower-case descriptors, then a lower-case system word, after a determiner
_SYSTEM_LOWER_RE = re.compile(
    r"\b(?:[Tt]he|[Oo]ur|[Tt]heir|[Yy]our|[Mm]y|[Ii]ts)\s+("
    + _LEAD_STOP + r"(?:" + _CAP + r"[ \t]+){1,3}"
    r"(?:(?!(?:and|or|of|to|for|in|on|with|the|a|an|is|was|are|were|will|has|had|team|squad|"
    r"group)\b)[a-z][a-z-]+[ \t]+){0,2}"
    r"(?:service|microservice|platform|api|pipeline|gateway|portal|app|dashboard|cluster|"
    r"database|engine|library|sdk|bot|registry|console|system|framework|warehouse|proxy))\b")
_POSSESSIVE = re.compile(r"['’]s\s")  # "Ana's team" is Ana's, not a team named so


def _names_a_technology(name: str) -> bool:
    capitalised = " ".join(w for w in name.split() if w[:1].isupper())
    return capitalised in TECHNOLOGIES or any(w in TECHNOLOGIES for w in capitalised.split())


# a name with a person's title in brackets: "Olufemi Adeyemi (CTO)", "Ana Lima (Staff Engineer)":
# the title types the name whatever its origin (spaCy took "Olufemi Adeyemi" for a place)
# what a bracket after a person's name holds when it gives their title
JOB_TITLE = (r"(?:C[A-Z]O|CISO|S?VP\b[^)\n]{0,30}|(?:[A-Z][a-z]+[ \t]+){0,3}(?:"
             + "|".join(JOB_ROLE_WORDS) + r")\b[^)\n]{0,30}|Head[ \t]+of[^)\n]{1,30})")
_TITLED_PERSON_RE = re.compile(
    r"(?<![\w-])([A-Z][a-z][\w'’-]*(?:[ \t]+(?:de|van|von|da|del|di|le|la|bin)?[ \t]*"
    r"[A-Z][a-z][\w'’-]*){1,2})[ \t]*\(" + JOB_TITLE + r"\)")

# (shape, type, subtype, confidence, names it rejects)
_SHAPED: tuple[tuple[re.Pattern[str], EntityType, str | None, float,
                     Callable[[str], bool] | None], ...] = (
    (_TEAM_RE, EntityType.ORGANIZATION, "TEAM", 0.92, None),
    (_TEAM_LOWER_RE, EntityType.ORGANIZATION, "TEAM", 0.92, None),
    (_SYSTEM_RE, EntityType.PRODUCT, "SYSTEM", 0.88, None),
    (_SYSTEM_LOWER_RE, EntityType.PRODUCT, "SYSTEM", 0.88, _names_a_technology),  # "the Kafka cluster"
    (_COMPANY_RE, EntityType.ORGANIZATION, None, 0.9, None),
)


def _one_line(m: Mention) -> Mention | None:
    """A name never spans a line break ("# Project Borealis" / "Farid: …" are two lines): the
    part before the break, when it is still a name of its kind."""
    if "\n" not in m.text:
        return m
    head = m.text.split("\n", 1)[0].rstrip()
    words = head.split()
    if not words or (m.type is EntityType.PERSON and len(words) < 2) or \
            (m.subtype == "PROJECT" and len(words) < 2 and m.refers_to is None):
        return None
    return Mention(m.start, m.start + len(head), head, m.type, m.confidence, m.extractor,
                   m.subtype, m.refers_to, m.votes)


def rule_mentions(text: str) -> list[Mention]:
    """Name shapes statistical NER misses or mistypes in enterprise text."""
    return [k for k in map(_one_line, _rule_mentions(text)) if k is not None]


def _rule_mentions(text: str) -> list[Mention]:
    out: list[Mention] = []
    for m in _PROJECT_RE.finditer(text):
        out.append(Mention(m.start(), m.end(), m.group(0), EntityType.PRODUCT, 0.95, "rule", "PROJECT"))
    for m in _PROJECT_SUFFIX_RE.finditer(text):
        out.append(Mention(m.start(1), m.end(0), m.group(0)[m.start(1) - m.start(0):],
                           EntityType.PRODUCT, 0.9, "rule", "PROJECT", refers_to=f"Project {m.group(1)}"))
    for regex, etype, subtype, confidence, rejects in _SHAPED:
        for m in regex.finditer(text):
            if rejects is not None and rejects(m.group(1)):
                continue
            if _plausible(m.group(1)) and not (subtype == "TEAM" and _POSSESSIVE.search(m.group(1))):
                out.append(Mention(m.start(1), m.end(1), m.group(1), etype, confidence, "rule", subtype))
    for m in _DEFINED_RE.finditer(text):
        name, words = m.group(1), m.group(1).split()
        if name in TECHNOLOGIES or (len(words) <= 3 and is_given_name(words[0])) or \
                words[-1] in TEAM_WORDS or not _plausible(name):
            continue
        org = m.group("head") in _ORG_HEADS
        out.append(Mention(m.start(1), m.end(1), name, EntityType.ORGANIZATION if org
                           else EntityType.PRODUCT, 0.9, "rule", None if org else "SYSTEM"))
    for m in _CODE_IN_TEXT.finditer(text):
        out.append(Mention(m.start(), m.end(), m.group(0), EntityType.CONCEPT, 0.95, "rule", "IDENTIFIER"))
    out.extend(m for m in label_mentions(text) if _plausible(m.text))
    for m in _TITLED_PERSON_RE.finditer(text):
        if _plausible(m.group(1)) and m.group(1).split()[-1] not in TEAM_WORDS | SYSTEM_WORDS:
            out.append(Mention(m.start(1), m.end(1), m.group(1), EntityType.PERSON, 0.9, "rule"))
    for m in _PERSON_RE.finditer(text):
        first, last = m.group(1), m.group(2)
        if is_given_name(first) and last not in TEAM_WORDS | SYSTEM_WORDS | PROJECT_WORDS:
            out.append(Mention(m.start(), m.end(), m.group(0), EntityType.PERSON, 0.88, "rule"))
    return out


_HANDLE_RE = re.compile(r"(?<![\w@])@([A-Za-z][\w.-]{0,40}[A-Za-z0-9])|\b(U[A-Z0-9]{8,10})\b")


def user_mentions(text: str, users: Mapping[str, str], known: Mapping[str, KnownName]) -> list[Mention]:
    """Slack handles and user ids, mapped to people through the user table or the graph.

    ``@priya.raman`` / ``@praman`` / ``U024BE7LH``: the table (handle or id -> real name) first;
    else a known person whose normalised name is the handle's words.
    """
    out: list[Mention] = []
    lowered_users = {k.lower().lstrip("@"): v for k, v in users.items()}
    for m in _HANDLE_RE.finditer(text):
        handle = (m.group(1) or m.group(2) or "").lower()
        name = lowered_users.get(handle)
        if name is None and m.group(1):
            hit = known.get(" ".join(re.split(r"[._-]+", handle)))
            if hit is not None and hit.type is EntityType.PERSON:
                name = hit.name
        if name is not None:
            out.append(Mention(m.start(), m.end(), m.group(0), EntityType.PERSON, 0.97, "user",
                               refers_to=name))
    return out


_WORD_RE = re.compile(r"[A-Za-z0-9][\w.+#&'’-]*")
_TRAILING = ".,;:!?"


# words after a team's bare name that show it is the team: "the Routing lead", "Payments folks"
_TEAM_ROLE = frozenset({"lead", "leads", "manager", "team", "squad", "folks", "members", "on-call",
                        "oncall", "channel", "standup", "roadmap", "backlog", "engineers"})


def known_mentions(text: str, known: Mapping[str, KnownName]) -> list[Mention]:
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
            if hit is None and i + n < len(words) \
                    and words[i + n].group(0).lower().rstrip(".,;:!?") in _TEAM_ROLE:
                # "Routing lead", "Routing folks": a known team named without its team word
                # (the ``team:`` key resolution gives every organisation)
                hit = known.get(f"team:{normalize_name(span)}")
            if hit is not None and span.lower() not in STOP_NAMES:
                # "… manages Dev Shah." names "Dev Shah": the sentence's full stop is not part
                # of the name (a known "Acme Inc." keeps its own)
                end = last.end()
                while text[end - 1] in _TRAILING and not hit.name.endswith(text[end - 1]):
                    end -= 1
                out.append(Mention(first.start(), end, text[first.start():end], hit.type, 0.93,
                                   "known", hit.subtype, refers_to=hit.name))
                break
    return out


def speaker_mentions(text: str, turns: Sequence[SpeakerTurn]) -> list[Mention]:
    """Speaker prefixes ("Alice Chen(user): …") name a person."""
    return [Mention(t.name_start, t.name_end, t.name, EntityType.PERSON, 0.97, "speaker")
            for t in turns]


def first_person_mentions(text: str, turns: Sequence[SpeakerTurn]) -> list[Mention]:
    """I / my / we in a speaker's turn refer to the speaker (links, not votes)."""
    return [Mention(start, end, word, EntityType.PERSON, 0.9, "speaker", refers_to=turn.name)
            for turn in turns for start, end, word in first_person_spans(text, turn)]


# the end of ``text[:start]`` when a sentence opens at ``start``: the text's or a line's
# start (after a bullet or heading mark), a stop, or a label / speaker colon
_SENTENCE_START = re.compile(r"(?:^|\n)[ \t]*(?:[-*•>#]+[ \t]*)?$|[.!?:][ \t]+$")
# a capitalised word shaped like a common noun ("Ownership", "Migration", "Onboarding"), which
# only its place at a sentence's start capitalised; invented names ("Zorblax") are not
_COMMON_NOUN = re.compile(r"[A-Z][a-z]{2,}(?:ship|tion|sion|ment|ness|ity|ance|ence|ing|ism|ure|"
                          r"ery|ary)s?$")
_CAP_RUN_RE = re.compile(r"(?<![\w@#/.-])[A-Z][\w&'’.+-]*(?:[ \t]+(?:of[ \t]+|&[ \t]+)?[A-Z][\w&'’.+-]*)*")


def shape_mentions(text: str) -> list[Mention]:
    """Capitalised word runs (leading function words dropped): a weak, untyped vote.

    It corroborates a span other extractors type; alone it never passes the vote.
    """
    out: list[Mention] = []
    for m in _CAP_RUN_RE.finditer(text):
        words = list(re.finditer(r"\S+", m.group(0)))
        while words and words[0].group(0).lower().strip(".'’") in FUNCTION_WORDS:
            words.pop(0)
        while words and words[-1].group(0).lower() in {"of", "&"}:
            words.pop()
        if not words:
            continue
        start, end = m.start() + words[0].start(), m.start() + words[-1].end()
        span = text[start:end].rstrip(".'’")
        if len(span) < 2 or not _plausible(span):
            continue
        if len(words) == 1 and _COMMON_NOUN.match(span) and _SENTENCE_START.search(text, 0, start):
            continue  # "Ownership of …" opens a sentence: capitalised by position, not a name
        out.append(Mention(start, start + len(span), span, EntityType.CONCEPT, 0.5, "shape"))
    return out


def find_mentions(
    text: str,
    doc: object | None,
    known: Mapping[str, KnownName],
    context: Sequence[KnownName] = (),
    extra: Sequence[Mention] = (),
) -> list[Mention]:
    """All entity mentions of one chunk after the ensemble vote and coreference, in order.

    ``extra``: candidates of further extractors (GLiNER, the LLM) for this chunk.
    """
    from knotwork.ingestion.extraction.ensemble import ensemble_mentions

    return ensemble_mentions(text, doc, known, context, extra=extra)
