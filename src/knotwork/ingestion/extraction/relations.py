"""Rule-based relation extraction between entity mentions of one sentence.

The text between two mentions (other mentions replaced by a placeholder) is matched
against trigger patterns for the relation taxonomy. Passive forms ("led by") reverse
the direction. Entities listed with "and"/"," share the relation of the list's head.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.given_names import is_given_name
from knotwork.ingestion.extraction.types import Mention

R = RelationType
_E = "\u2063"  # placeholder for an intervening mention


@dataclass(frozen=True, slots=True)
class Pattern:
    type: RelationType
    regex: re.Pattern[str]
    reverse: bool = False
    source_types: frozenset[EntityType] | None = None
    target_types: frozenset[EntityType] | None = None
    target_subtypes: frozenset[str | None] | None = None
    weak_place: bool = False  # the wording says the target is a place, whatever NER guessed
    after: re.Pattern[str] | None = None  # what must follow the right mention ("… relationship")
    name: str = ""  # named in bench/relation_patterns.py; unnamed ones are numbered per type


def _p(rel: RelationType, pattern: str, reverse: bool = False, src: set[EntityType] | None = None,
       tgt: set[EntityType] | None = None, tgt_sub: set[str | None] | None = None,
       weak_place: bool = False, after: str | None = None, name: str = "") -> Pattern:
    return Pattern(rel, re.compile(pattern), reverse,
                   frozenset(src) if src else None, frozenset(tgt) if tgt else None,
                   frozenset(tgt_sub) if tgt_sub is not None else None, weak_place,
                   re.compile(after) if after else None, name)


def _named(patterns: tuple[Pattern, ...]) -> tuple[Pattern, ...]:
    """Every pattern with a name: an unnamed one is its type and rank ("leads.3")."""
    seen: dict[RelationType, int] = {}
    out = []
    for p in patterns:
        seen[p.type] = seen.get(p.type, 0) + 1
        out.append(p if p.name else replace(p, name=f"{p.type.value.lower()}.{seen[p.type]}"))
    return tuple(out)


P, O, L = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION
_NOT_TEAM: set[str | None] = {None}

# Order matters: passive and specific forms before general ones.
_THING = {EntityType.PRODUCT, EntityType.TECHNOLOGY}
# a team's verbs for a system it keeps running: "the Billing team builds and runs Ledgerly"
_KEEPS = r"(?:runs?|running|operat(?:e|es|ed|ing)|maintain(?:s|ed|ing)?|support(?:s|ed|ing)?)"

# a move away from something, the verb right before "from" (a flow of data is no move:
# "moves events from the broker to the lake"): a home or a unit moved from, a dependency switched from
_NO_FLOW = (r"(?!\s+(?:the\s+|its\s+|our\s+|their\s+)?(?:data|traffic|events?|messages?|records?|"
            r"files?|logs?|metrics|requests?|payloads?|rows|batches|jobs?)\b)")
_FROM_END = r"(?:\s+(?!from\b)[\w'’-]+){0,4}\s+from(?:\s+the)?\s*$"
_MOVED_FROM = (r"\b(?:mov(?:e|es|ed|ing)|relocat(?:e|es|ed|ing)|transferr?(?:s|ed|ing)?)\b"
               + _NO_FLOW + _FROM_END)
_SWITCHED_FROM = (r"\b(?:switch(?:es|ed|ing)?|migrat(?:e|es|ed|ing)|mov(?:e|es|ed|ing))\b"
                  + _NO_FLOW + _FROM_END)

PATTERNS: tuple[Pattern, ...] = _named((
    # a person and an outside organisation: "Ana owns the Globex relationship", "Bo takes over
    # the Initech account"; the word after the organisation says what is held
    _p(R.MANAGES, r"\b(?:owns?|owned|own(?:ing)?|tak(?:e|es|ing|en)\s+over|took\s+over|handl(?:e|es|ed|ing)|"
                  r"manag(?:e|es|ed|ing)|runs?|ran|keeps?|kept|holds?|held|inherit(?:s|ed)?|leads?|led)"
                  r"\s+(?:the|our|their|his|her)(?:\s+[\w&.-]+){0,2}\s*$",
       src={P}, tgt_sub=_NOT_TEAM, after=r"^(?:['’]s)?\s+(?:commercial\s+)?(?:relationship|account|partnership|contract)s?\b",
       name="manages.relationship"),
    # a team owning a system keeps it running: "Payments owns Ledgerly", "What we own: Ledgerly"
    _p(R.MAINTAINS, r"\bowned(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its))?\s*$",
       reverse=True, src={O}, tgt=_THING, name="maintains.owned_by_team"),
    _p(R.MAINTAINS, r"\bowns?\b|\bowned\b|\bis (?:the )?owner of\b|\bresponsible for\b|\bkeeps? ownership of\b",
       src={O}, tgt=_THING, name="maintains.team_owns"),
    _p(R.MAINTAINS, r"\b(?:builds?|built|develops?|developed)\s+and\s+" + _KEEPS + r"\b|^\s*(?:runs|operates|maintains|supports)(?:\s+the)?\s*$",
       src={O}, tgt=_THING, name="maintains.team_runs"),
    # a product on a platform: "Beacon is now on Elixir 1.16", "Atlas has been on Kubernetes"
    _p(R.USES, r"\b(?:is|are|was|were|been|be|stays?|stayed|remains?|remained)\s+(?:now\s+|still\s+|"
               r"officially\s+|already\s+|currently\s+|fully\s+|live\s+)?on\s*$",
       src={EntityType.PRODUCT, EntityType.CONCEPT, O}, tgt={EntityType.TECHNOLOGY}, name="uses.is_on"),
    # two organisations joined by a multiplication sign: "Acme × Globex partnership"
    _p(R.COLLABORATED_WITH, r"^\s*[×x]\s*$", src={O}, tgt={O}, name="collaborated_with.cross"),
    _p(R.REPORTS_TO, r"\b(?:manager|boss|supervisor|line manager)(?: is|:)\s*$", src={P}, tgt={P}),
    _p(R.LEADS, r"\b(?:led|run|headed|driven)(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its|his|her))?\s*$", reverse=True),
    _p(R.OWNS, r"\bowned(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its|his|her))?\s*$", reverse=True),
    _p(R.MANAGES, r"\b(?:managed|supervised|overseen)(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its|his|her))?\s*$", reverse=True),
    _p(R.ACQUIRED, r"\b(?:acquired|bought|purchased)(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its|his|her))?\s*$", reverse=True),
    _p(R.CREATED, r"\b(?:created|founded|written|authored|designed|invented|started)(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its|his|her))?\s*$", reverse=True),
    _p(R.DEVELOPED, r"\b(?:developed|built|implemented)(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its|his|her))?\s*$", reverse=True),
    _p(R.MAINTAINS, r"\b(?:maintained|supported|operated)(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its|his|her))?\s*$", reverse=True),
    _p(R.USES, r"\bused(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its|his|her))?\s*$", reverse=True),
    _p(R.INVESTED_IN, r"\b(?:funded|backed)(?:\s+(?!by\b)[\w-]+){0,3}\s+by\b(?:\s+(?:the|our|their|a|an|its|his|her))?\s*$", reverse=True),
    _p(R.LEADS, r"(?:'s|’s)\s+(?:tech(?:nical)? )?(?:lead|leader|owner|dri|pm)\s+(?:is|was)\b", reverse=True),
    # a team inside a larger group: "the Search Team is part of / reports into the Platform Group"
    _p(R.MEMBER_OF, r"\b(?:is|are|was|were)\s+(?:now\s+)?(?:a\s+)?part of\b|\bbelongs? to\b|\bsits? (?:under|within|inside|in)\b|\breport(?:s|ed|ing)?\s+(?:in)?to\b"
                    r"|\bfall(?:s|en)?\s+(?:under|within)\b|\bfell\s+(?:under|within)\b|\bone\s+of\s+the\s+(?:teams|groups|squads|units|departments)\s+(?:of|in)\b", src={O}, tgt={O}),
    # "the Platform Division includes the Payments Team": the team is part of the division
    _p(R.MEMBER_OF, r"\b(?:includes?|included|contains?|contained|comprises?|comprised|consists?\s+of)(?:\s+the)?\s*$", reverse=True, src={O}, tgt={O}),
    _p(R.REPORTS_TO, r"\breport(?:s|ed|ing)?\s+(?:directly\s+)?(?:in)?to\b|\bunder\b", src={P}),
    _p(R.REPORTS_TO, r"(?:'s|’s)\s+(?:direct report|report)\b", reverse=True, src={P}, tgt={P}),
    # "Ana's squad (Payments)", "Ana's team, Payments": the person's team
    _p(R.MEMBER_OF, r"^(?:'s|’s)\s+(?:[\w-]+\s+)?(?:team|squad|group|department|org|tribe)\s*[(,]\s*$", src={P}, tgt={O}),
    # "Ana's platform, Beacon": what the person owns
    _p(R.OWNS, r"^(?:'s|’s)\s+(?:[\w-]+\s+)?(?:platform|service|tool|system|app|library|project|dashboard)\s*[(,]\s*$", src={P}),
    # a person and their team in parentheses: "Ana Ruiz (Payments)", "Payments (Ana Ruiz)"
    _p(R.MEMBER_OF, r"^\s*\(\s*$", src={P}, tgt={O}),
    _p(R.MEMBER_OF, r"^\s*(?:team\s+|squad\s+)?\(\s*$", reverse=True, src={P}, tgt={O}),
    # apposition of a title: "Omar Haddad, head of Security", "Ana, tech lead of Atlas"
    _p(R.LEADS, r"^,\s*(?:the\s+|our\s+)?(?:[\w-]+\s+)?(?:lead|leader|owner|dri|head)\s+(?:of|for|on)\s*(?:the\s+)?$", src={P}),
    _p(R.MANAGES, r"^,\s*(?:the\s+|our\s+)?(?:[\w-]+\s+)?(?:director|manager|vp|chief)\s+(?:of|for)\s*(?:the\s+)?$", src={P}),
    # a labelled list item: "Streaming team — lead: Ravi", "Atlas (owner: Ana)", "Search, manager: Bo"
    # (a table row's cells: "Ledger; Lead: Ana", the separator already split off)
    _p(R.MANAGES, r"^\s*(?:[—–-]+|,|\(|:)?\s*(?:(?:line|engineering|team|project)\s+)?manager\s*:\s*$", reverse=True, src={P}),
    _p(R.LEADS, r"^\s*(?:[—–-]+|,|\(|:)?\s*(?:(?:tech(?:nical)?|team|project)\s+)?(?:lead|leader|head|owner|dri|pm)\s*:\s*$", reverse=True, src={P}),
    # where something moved away from: "the Archive team moves from Bergen (to …)", "the Almanac
    # team moved from Marine into Forestry", "Ledgerly switched its source from Quillbook": the old home,
    # team or dependency (``change`` ends it: "from" after a move verb names the old side).
    # Measured on the two development corpora (gold ended relations it closed / typed facts it
    # made): located_in.moved_from 1 / 2 (one target was a name NER typed as a place),
    # member_of.moved_from 0 / 1 (true, but the gold names the team, not its lead),
    # depends_on.switched_from 1 / 1, uses.switched_from 0 / 0
    _p(R.LOCATED_IN, _MOVED_FROM, src={P, O}, tgt={L}, name="located_in.moved_from"),
    _p(R.MEMBER_OF, _MOVED_FROM, src={P, O}, tgt={O}, name="member_of.moved_from"),
    _p(R.DEPENDS_ON, _SWITCHED_FROM, src={EntityType.PRODUCT, EntityType.CONCEPT, O},
       tgt={EntityType.PRODUCT}, name="depends_on.switched_from"),
    _p(R.USES, _SWITCHED_FROM, src={EntityType.PRODUCT, EntityType.CONCEPT, O}, tgt={EntityType.TECHNOLOGY},
       name="uses.switched_from"),
    # a title after the unit's name: "Dana Wolf is interim Billing lead", "Bo becomes Search lead"
    # (development corpora: 1 interim lead closed, 1 aggregation answer right)
    _p(R.LEADS, r"\b(?:is|was|as|becomes|became|become|remains|stays)\s+(?:the\s+|our\s+)?"
                r"(?:new\s+|interim\s+|acting\s+|current\s+)?$",
       src={P}, tgt={O}, after=r"^(?:['’]s)?\s+(?:team\s+)?(?:lead|leader|head)\b", name="leads.unit_title"),
    _p(R.HEADQUARTERED_IN, r"\b(?:headquartered|hq(?:'d)?|head office is) in\b|\bheadquarters (?:is |are )?in\b"),
    # "a startup based in Cork": a one-word place the statistical model called an organisation
    _p(R.LOCATED_IN, r"\b(?:based|located|situated|offices? (?:is |are )?)\s+in\s*$", tgt={L}, weak_place=True),
    # "the Revenue Dashboard in Looker", "the nightly jobs on Airflow"
    _p(R.USES, r"^\s*(?:in|on)\s*$", src={EntityType.PRODUCT}, tgt={EntityType.TECHNOLOGY}),
    _p(R.DEPENDS_ON, r"\b(?:depends?|depending|depended|relies|rely|relying|relied) (?:heavily |directly |entirely )?on\b|\bdependent on\b|\brequires?\b|\bcalls\b|\bconsumes?\b|\b(?:reads|pulls|consumes|fetches|loads)(?:\s+\w+){0,3}\s+from\b|\b(?:writes|publishes|sends|pushes)(?:\s+\w+){0,2}\s+to\b|\bintegrates? with\b|\bgoes through\b|\bbacked by\b"),
    # a stack list in parentheses: "Cart Service (Java, Spring Boot, PostgreSQL)"
    _p(R.USES, r"^\s*\(\s*$", src={EntityType.PRODUCT}, tgt={EntityType.TECHNOLOGY}),
    # or after a colon: "Cartwheel API: Go, Redis, PostgreSQL"
    _p(R.USES, r"^\s*:\s*(?:[\w.+#/-]+(?:\s+[\w.+#/-]+)?\s*,\s*){0,5}$", src={EntityType.PRODUCT}, tgt={EntityType.TECHNOLOGY}),
    # "the Promotions service belongs to the Growth team": the team owns it
    _p(R.OWNS, r"\bbelongs?\s+to\b", reverse=True, src={O, P}, tgt_sub={"SYSTEM", "PROJECT"}),
    _p(R.USES, r"\bbuilt (?:on top of|on|with|using|in)\b|\b(?:written|implemented) in\b|\bstored in\b|\b(?:runs|running|hosted) on\b|\bpowered by\b", tgt={EntityType.TECHNOLOGY, EntityType.PRODUCT}),
    # change language: "took over the Payments team" (a team or project: leading it)
    _p(R.LEADS, r"\b(?:took|takes|take|taking|taken) over\b", src={P}, tgt={O}),
    _p(R.LEADS, r"\b(?:took|takes|take|taking|taken) over\b", tgt_sub={"PROJECT"}),
    # "Hana took over the Orion ingestion service (from Deepak)": she owns it now
    _p(R.OWNS, r"\b(?:took|takes|take|taking|taken) over\b(?!.*\b(?:on[- ]?call|rotation|support|pager)\b)", src={P}, tgt_sub={"SYSTEM"}),
    # a team and its people listed: "the Data team now has four engineers: Hana, Tom and Raj"
    _p(R.MEMBER_OF, r"\b(?:has|have|had|includes?|included|comprises?|consists? of|(?:is|are|was) made up of|welcomes?d?)\s+(?:now\s+)?(?:[\w-]+\s+){0,2}(?:engineers?|members?|people|developers?|designers?|analysts?|scientists?|staff|folks|ics?)?\s*(?::|\bincluding\b)?\s*$", reverse=True, src={P}, tgt={O}),
    _p(R.ACQUIRED, r"\b(?:acquir(?:e|es|ed|ing)|bought|purchased)\b"),
    _p(R.INVESTED_IN, r"\binvest(?:s|ed|ing|ment)? in\b|\bfunded\b|\bbacked\b"),
    _p(R.MEMBER_OF, r"\b(?:is|are|was|were|became)\s+(?:a\s+)?(?:member|part)\s+of\b|\bbelongs? to\b|\b(?:team|squad|department|group):\s*$", src={P}),
    # leaving an employer states the employment (ended: ``change`` names the old side)
    _p(R.WORKS_AT, r"\b(?:leav(?:e|es|ing)|left|quits?|quitting)\s*$|\blast\s+(?:working\s+)?day\s+(?:at|with)\s*$",
       src={P}, tgt={O}, tgt_sub=_NOT_TEAM),
    _p(R.WORKS_AT, r"\b(?:work(?:s|ed|ing)?|employed|hired)\s+(?:at|for|by)\b|\bjoin(?:s|ed|ing)?\b|\b(?:company|employer|organization):\s*$", src={P}, tgt={O}, tgt_sub=_NOT_TEAM),
    _p(R.MEMBER_OF, r"\b(?:work(?:s|ed|ing)?)\s+(?:at|for|in|on)\b|\bjoin(?:s|ed|ing)?\b|\bon the\s*$|\bin the\s*$|\b(?:is|am|are|'m|’m)\s+(?:now\s+)?on\s*$|\bmov(?:e|es|ed|ing)\b(?:\s+\S+){0,4}\s+to(?: the)?\s*$|\btransferr(?:ed|ing) to\b", src={P}, tgt={O}),
    _p(R.WORKS_AT, r"\bjoin(?:s|ed|ing)?\b|\b(?:is|was)\s+(?:a|an|the)\s+[\w\s/-]{1,40}\b(?:at|of|with)\s*$|^,\s*(?:a|an|the|our)?\s*[\w\s/-]{1,40}\b(?:at|of)\s*$", src={P}, tgt={O}),
    _p(R.LEADS, r"\blead(?:s|ing)?\b|\bled\b|\bheads?\b|\bheaded\b|\bruns\b|\bran\b|\brunning\b|\bdrives\b|\bdriving\b|\bin charge of\b|\b(?:is|was|as)\s+(?:the\s+|our\s+)?(?:[\w-]+\s+)?(?:lead|leader|head|owner|dri|project manager)\s+(?:of|for|on)\b|\b(?:lead|owner|dri):\s*$", src={P}),
    _p(R.MANAGES, r"\bmanag(?:e|es|ed|ing)\b|\bovers(?:ee|ees|aw|eeing)\b|\bsupervis\w+\b|\b(?:is|was)\s+(?:the\s+|our\s+)?(?:[\w-]+\s+)?(?:manager|director|vp|head)\s+(?:of|for)\b", src={P}),
    _p(R.LEADS, r"\blead(?:s|ing)?\b|\bled\b|\bdrives\b"),
    _p(R.LEADS, r"\bowns the\b", src={P}, tgt_sub={None, "PROJECT", "TEAM"}),  # a person owning a project leads it; a team owns it
    _p(R.OWNS, r"\bowns?\b|\bowned\b|\bis (?:the )?owner of\b|\bresponsible for\b|\bowner:\s*$"),
    _p(R.LOCATED_IN, r"\b(?:located|based|sits?|situated|lives?|living|hosted|deployed|runs?|office is|offices are|relocat\w+|mov\w+) (?:in|to)\b|\bin\s*$|\b(?:location|office|city|site|country|region|based in|based|home office|hub|town|campus|workplace|work location)\s*:\s*$", tgt={L}),
    _p(R.COLLABORATED_WITH, r"\b(?:collaborat\w*|partner\w*|pair(?:s|ed|ing)?|team(?:s|ed)? up|work(?:s|ed|ing)? (?:closely |together )?)\s*with\b|\band\b.*\btogether\b"),
    _p(R.CREATED, r"\b(?:creat(?:e|es|ed|ing)|found(?:s|ed)|wrote|writes|authored|designed|invented|started|launched|proposed)\b"),
    # who develops is a person or an organisation; "build" is often a noun ("the nightly build",
    # "build machines") and a release "ships on" a platform: neither develops it
    _p(R.DEVELOPED, r"\b(?:develop(?:s|ed|ing)?|built|buil(?:d|ds|ding)\s+(?:the|a|an|our|their|its|his|her|out)\b|"
                    r"implement(?:s|ed|ing)|ship(?:s|ped)\b(?!\s+(?:on|with|in)\b)|prototyped)\b",
       src={P, O}, name="developed.verb"),
    _p(R.MAINTAINS, r"\bmaintain(?:s|ed|ing)?\b|\bsupports?\b|\bon[- ]call (?:rotation )?for\b|\btak(?:e|es|ing|en) over\b|\btook over\b|\boperat(?:e|es|ed)\b|\bkeeps? .* running\b"),
    _p(R.USES, r"\b(?:us(?:e|es|ed|ing)|runs? on|built (?:on|with)|powered by|leverag\w+|adopt\w*|migrat\w+ (?:to|onto)|switch\w* to|mov(?:e|ed|ing) to|standardi[sz]\w* on|deploy\w* (?:on|to))\b"),
))

_TEAMS_OF = re.compile(r"^(?:'s|’s)\s+(?:[\w-]+\s+)?(?:team|squad|group|department|org|tribe)\s+[a-z]")
_NEW_CLAUSE = re.compile(r"(?:[,;]|\band\b|\bbut\b)[^,;]{0,30}?\b(?:we|they|he|she|i|you|it)\b"
                         r"(?!\s*(?:'s|’s|,|\)))")
_MOVE_FROM = re.compile(r"\s+from(?:\s+the)?\s*$")
_MOVE_TO = re.compile(r"^\s*(?:to|into|onto)(?:\s+the)?\s*$")
_MODIFIER = re.compile(r"\s*(?:in|from|at|of)\s*")
_LIST_SEP = re.compile(r"^\s*(?:,|,?\s*and|,?\s*or|&|/)\s*$")
_MAX_GAP_TOKENS = 14


def _gap(text: str, a: Mention, b: Mention, between: list[Mention]) -> str:
    out, pos = [], a.end
    for m in between:
        out.append(text[pos : m.start])
        out.append(_E)
        pos = m.end
    out.append(text[pos : b.start])
    return "".join(out)


_SOFT_ORG_TYPES = frozenset({EntityType.ORGANIZATION, EntityType.PRODUCT, EntityType.CONCEPT,
                             EntityType.EVENT})


def _fits(m: Mention, allowed: frozenset[EntityType] | None) -> bool:
    """Statistical NER often calls a company a product: its organisation-like types are soft."""
    if allowed is None or m.type in allowed:
        return True
    soft = m.extractor == "spacy" and m.subtype is None
    return soft and EntityType.ORGANIZATION in allowed and m.type in _SOFT_ORG_TYPES


# a person is only the target of these; a place only an endpoint of location relations
_PERSON_TARGET = frozenset({R.REPORTS_TO, R.MANAGES, R.COLLABORATED_WITH, R.RELATED_TO})
_PLACE_SOURCE = frozenset({R.LOCATED_IN, R.RELATED_TO})
_PLACE_TARGET = frozenset({R.LOCATED_IN, R.HEADQUARTERED_IN, R.RELATED_TO})


def _maybe_not_person(m: Mention) -> bool:
    """A name only the statistical model calls a person whose first word is no given name
    ("Atlas", "Client Care"): could be anything."""
    weak = set(m.votes or (m.extractor,)) <= {"spacy", "shape", "caps", "known"}  # known: an earlier guess
    return weak and m.extractor != "coref" and not is_given_name(m.text.split()[0] if m.text.split() else "")


# a job title NER took for an organisation ("Ana Ruiz (CTO)"): nobody is a member of it
_TITLE = re.compile(r"^(?:C[A-Z]{1,3}O|S?E?VP\b.*|Head of\b.*|Director\b.*|Chief\b.*|"
                    r"(?:Senior |Staff |Principal )?(?:Manager|Engineer|Lead)\b.*)$")


# what only a thing is the object of: a one-word name only NER calls a place ("Payoutd") is one
_THING_TARGET = frozenset({R.OWNS, R.MAINTAINS, R.DEPENDS_ON, R.USES})


def _maybe_not_place(m: Mention) -> bool:
    return m.type is EntityType.LOCATION and " " not in m.text and m.extractor != "coref" \
        and set(m.votes or (m.extractor,)) <= {"spacy", "shape", "caps", "known"}


def _weak_place(m: Mention) -> bool:
    return (m.type is EntityType.ORGANIZATION and m.subtype is None and " " not in m.text
            and set(m.votes or (m.extractor,)) <= {"spacy", "shape", "caps"})


def _allowed(p: Pattern, src: Mention, tgt: Mention, gap: str = "") -> bool:
    if p.weak_place and _weak_place(tgt) and src.type is not EntityType.LOCATION:
        return True
    if not (_fits(src, p.source_types) and _fits(tgt, p.target_types)):
        return False
    if p.type in (R.MEMBER_OF, R.WORKS_AT) and _TITLE.match(tgt.text):
        return False
    if src.type is EntityType.LOCATION and tgt.type is EntityType.LOCATION and p.type is R.LOCATED_IN \
            and not re.fullmatch(r"\s*(?:,|in|in the)\s*", gap):
        return False  # "Toronto, Canada" / "Austin in Texas", not "Toronto with hubs in Montreal"
    if p.type in (R.USES, R.DEPENDS_ON) and tgt.subtype == "TEAM":
        return False  # "moving to the Platform group" is no usage of a team
    if tgt.type is EntityType.PERSON and p.type not in _PERSON_TARGET and not _maybe_not_person(tgt):
        return False
    if (src.type is EntityType.LOCATION and p.type not in _PLACE_SOURCE) or (
            tgt.type is EntityType.LOCATION and p.type not in _PLACE_TARGET
            and not (p.type in _THING_TARGET and _maybe_not_place(tgt))):
        return False
    return p.target_subtypes is None or tgt.subtype in p.target_subtypes


def classify(gap: str, left: Mention, right: Mention, after: str = "") -> tuple[RelationType, bool, float] | None:
    """(type, reversed, confidence) for the gap text between two mentions, if any; ``after``:
    the text after the right mention (what a pattern's ``after`` must match)."""
    found = classify_named(gap, left, right, after)
    return None if found is None else found[:3]


def classify_named(gap: str, left: Mention, right: Mention,
                   after: str = "") -> tuple[RelationType, bool, float, str] | None:
    """:func:`classify` with the name of the pattern that decided ("related_to" for none)."""
    if left.text.endswith(("'s", "’s")):
        gap = "'s" + gap  # the mention took the possessive: "Ana's| team"
    lowered = gap.lower()
    if _TEAMS_OF.match(lowered) or re.match(r"^\s*\)", lowered):
        return None  # "Ana's team maintains X": the team does, not Ana; "(Ana) owns X" neither
    if "(" in lowered and ")" in lowered:  # "the Payments team (Ana Ruiz) owns X": skip the aside
        lowered = re.sub(r"\s*\([^()]*\)", "", lowered)
    row_cells = re.split(r"[;|]", lowered)
    if len(row_cells) > 1:
        # a table row rendered "Name: X; Team: Y; Manager: Z": only the last "Header:" counts
        lowered_for_match = row_cells[-1]
        if _E in lowered_for_match or not lowered_for_match.rstrip().endswith(":"):
            return None
        parts = [lowered_for_match]
    else:
        parts = lowered.split(_E)
        if len(parts) == 1:
            if _LIST_SEP.match(lowered):
                return None  # "Kafka and PostgreSQL": listed together, no relation stated
            lowered_for_match = lowered
        elif all(_LIST_SEP.match(p) for p in parts[1:]):
            lowered_for_match = parts[0]  # "depends on Kafka and PostgreSQL"
        elif len(parts) == 2 and not re.search(r"[,;:()]", lowered) and (
                inner := _INNER_CONJ.search(parts[-1])) is not None:
            # "Diego remains <Android> chapter lead and will report to Svetlana"
            lowered_for_match = parts[-1][inner.end():]
        elif len(parts) == 2 and _MOVE_FROM.search(parts[0]) and _MOVE_TO.match(parts[1]):
            # "Ana moves from <the Fraud Team> to the Search Team": where she moves to
            lowered_for_match = _MOVE_FROM.sub(" to the", parts[0])
        elif len(parts) == 2 and _MODIFIER.fullmatch(parts[0]) and re.search(r"[a-z]", parts[1]):
            # "Ana (Bo) in Lisbon takes over X": a place or unit between subject and verb
            lowered_for_match = parts[1]
        elif parts[-1].strip() == "(":
            return None  # "Jonas (Legal), Priya (Data)": the parenthesis is about Priya
        elif all(_LIST_SEP.match(p) for p in parts[:-1]):
            lowered_for_match = parts[-1]  # "Lucas and Nina work at Globex"
        else:
            return None
    if len(lowered_for_match.split()) > _MAX_GAP_TOKENS or _NEW_CLAUSE.search(lowered_for_match):
        return None  # "…, and in 2023 we were acquired by X": the new clause's subject is "we"
    for p in PATTERNS:
        if p.regex.search(lowered_for_match) and (p.after is None or p.after.match(after.lower())):
            src, tgt = (right, left) if p.reverse else (left, right)
            if _allowed(p, src, tgt, lowered_for_match):
                return p.type, p.reverse, 0.8 if _E not in lowered else 0.7, p.name
    if _E not in lowered and len(lowered.split()) <= 10 and not re.search(r"[\n;|:]", gap):
        return R.RELATED_TO, False, 0.45, "related_to"
    return None


@dataclass(frozen=True, slots=True)
class RelationHit:
    source: Mention
    target: Mention
    type: RelationType
    confidence: float
    rule: str = ""  # the pattern's name (bench/relation_patterns.py)


# a second predicate of the same subject: "… is on the Security Team and reports to Omar"
_CONJ_PREDICATE = re.compile(r"^\s*,?\s*(?:and|but)\s+(?:now\s+|also\s+|still\s+|will\s+|"
                             r"directly\s+)?(?=[a-z])(?!(?:the|a|an|our|their|its|his|her|we|they|"
                             r"he|she|i|it|then|so|that|this)\b)")


_INNER_CONJ = re.compile(r"\b(?:and|but)\s+(?:now\s+|also\s+|still\s+|will\s+|directly\s+)?(?=[a-z])"
                         r"(?!(?:the|a|an|our|their|its|his|her|we|they|he|she|i|it|then|so|that|this)\b)")


def _subject_of_conjunct(text: str, mentions: list[Mention], i: int) -> int | None:
    """The subject shared by "<S> <verb> <mentions[i]> and <verb> …": the mention S before i,
    when S and mentions[i] are related by a typed predicate (mentions[i] is its object)."""
    for k in range(i - 1, max(-1, i - 4), -1):
        gap = _gap(text, mentions[k], mentions[i], mentions[k + 1 : i])
        if _E in gap or "\n" in gap:
            continue
        found = classify(gap, mentions[k], mentions[i])
        if found is not None and found[0] is not R.RELATED_TO:
            return k
        plain_clause = not re.search(r"[,;:()\[\]]", gap) and len(gap.split()) <= 6 \
            and re.search(r"\b[a-z]{2,}\b", gap) and not _LIST_SEP.match(gap)
        return k if plain_clause else None  # "Ana met Bo and reports to Cy"
    return None


# "Ravi handed the Streaming team over to Elif", "passed Atlas on to Bo": the receiver leads it
_HANDOVER_VERB = re.compile(r"\b(?:hand(?:s|ed|ing)?|pass(?:es|ed|ing)?|transferr?(?:s|ed|ing)?)"
                            r"(?:\s+(?:over|on))?(?:\s+(?:the\s+)?(?:leadership|ownership|reins)"
                            r"\s+of)?\s+(?:the\s+|his\s+|her\s+|their\s+)?$")
_HANDOVER_TO = re.compile(r"^\s*(?:(?:over|on)\s+)?to\s*$")


def _handovers(text: str, mentions: list[Mention]) -> list[RelationHit]:
    hits = []
    for i in range(len(mentions) - 2):
        giver, what, receiver = mentions[i], mentions[i + 1], mentions[i + 2]
        if giver.type is not EntityType.PERSON or receiver.type is not EntityType.PERSON \
                or what.type not in (EntityType.ORGANIZATION, EntityType.PRODUCT):
            continue
        if _HANDOVER_VERB.search(text[giver.end:what.start].lower()) and \
                _HANDOVER_TO.match(text[what.end:receiver.start].lower()):
            hits.append(RelationHit(receiver, what, R.LEADS,
                                    min(0.8, receiver.confidence + 0.1, what.confidence + 0.1)))
    return hits


# "Ownership of DocHub moves from the Tools team to Platform", "the Billing API is transferred
# from Payments to the Core team": a thing changing owners; both sides are OWNS facts, the
# old one ended by the change rules (change.py reads "from" after a move verb)
_OWNERSHIP_OF = re.compile(r"\b(?:ownership|stewardship|custody)\s+of(?:\s+the)?\s*$")
_OWNERSHIP_MOVE = (r"(?:['’]s\s+ownership\s+|\s+ownership\s+)?\s*(?:(?:is|are|was|were|will|has|have|had)"
                   r"\s+)?(?:be(?:en|ing)?\s+|now\s+|formally\s+|officially\s+)?"
                   r"(?:mov|transferr?|pass|shift|migrat|go|went|hand)\w*(?:\s+(?:over|across))?\s+")
_MOVES_FROM = re.compile(r"^" + _OWNERSHIP_MOVE + r"from(?:\s+the)?\s*$")
_MOVES_TO = re.compile(r"^" + _OWNERSHIP_MOVE + r"to(?:\s+the)?\s*$")
_FROM_TO = re.compile(r"^\s*(?:team\s+|group\s+|squad\s+)?to(?:\s+the)?\s*$")
_OWNED_THINGS = frozenset({EntityType.PRODUCT, EntityType.ORGANIZATION, EntityType.TECHNOLOGY})


def _can_own(m: Mention) -> bool:
    return m.type is EntityType.ORGANIZATION or (m.type is EntityType.PERSON and m.extractor != "coref")


def _ownership_moves(text: str, mentions: list[Mention]) -> list[RelationHit]:
    hits: list[RelationHit] = []
    for i, what in enumerate(mentions):
        if what.type not in _OWNED_THINGS or what.subtype == "TEAM":
            continue
        named = bool(_OWNERSHIP_OF.search(text[max(0, what.start - 40):what.start].lower()))
        nxt = mentions[i + 1 : i + 3]
        # "from the Tools team to Data Platform": the other side of a team is an owner too
        paired = len(nxt) == 2 and "TEAM" in (nxt[0].subtype, nxt[1].subtype) \
            and EntityType.PERSON not in (nxt[0].type, nxt[1].type)
        owner = [_can_own(n) or (paired and n.type is EntityType.PRODUCT) for n in nxt]
        if not nxt or not owner[0]:
            continue
        gap = text[what.end:nxt[0].start].lower()
        # without the word "ownership", only a product moving between two teams
        if not (named or "ownership" in gap or (paired and what.type is not EntityType.ORGANIZATION)):
            continue
        conf = min(0.8, what.confidence + 0.1)
        if _MOVES_FROM.match(gap) and len(nxt) == 2 and owner[1] \
                and _FROM_TO.match(text[nxt[0].end:nxt[1].start].lower()):
            if not paired and not ((named or "ownership" in gap) and _can_own(nxt[1])):
                continue  # "Ledger moves from Oracle to Postgres": no team, no change of owner
            hits.append(RelationHit(nxt[1], what, R.OWNS, min(conf, nxt[1].confidence + 0.1)))
            hits.append(RelationHit(nxt[0], what, R.OWNS, min(conf, nxt[0].confidence + 0.1)))
        elif _MOVES_TO.match(gap) and (named or "ownership" in gap):
            hits.append(RelationHit(nxt[0], what, R.OWNS, min(conf, nxt[0].confidence + 0.1)))
    return hits


def relations_in_sentence(text: str, mentions: list[Mention]) -> list[RelationHit]:
    hits: list[RelationHit] = _handovers(text, mentions) + _ownership_moves(text, mentions)
    handed = {(h.source.start, h.target.start) for h in hits}
    for i, left in enumerate(mentions):
        for j in range(i + 1, min(len(mentions), i + 6)):
            right = mentions[j]
            gap = _gap(text, left, right, mentions[i + 1 : j])
            conj = _CONJ_PREDICATE.match(gap) if j == i + 1 else None
            if conj is not None:
                subject = _subject_of_conjunct(text, mentions, i)
                if subject is not None:  # the predicate belongs to the clause's subject
                    left = mentions[subject]
                    gap = gap[conj.end():]
            if (right.start, left.start) in handed or (left.start, right.start) in handed:
                continue  # the handover above says what this pair is
            subject = _row_subject(text, mentions, left, gap)
            if subject is not None:
                # "Ana Ruiz; Team: Ledger; Manager: Bo Chen": Bo is Ana's manager, not the
                # Ledger team's; a cell is about the row's subject, never the cell before it
                if subject is right or any({h.source.start, h.target.start}
                                           == {subject.start, right.start} for h in hits):
                    continue
                left = subject
            found = classify_named(gap, left, right, text[right.end : right.end + 40])
            if found is None:
                continue
            rel, reverse, conf, rule = found
            src, tgt = (right, left) if reverse else (left, right)
            hits.append(RelationHit(src, tgt, rel, min(conf, src.confidence + 0.1, tgt.confidence + 0.1), rule))
    return hits


# the header of a row's first cell when that cell names what the row is about
_ROW_NAME_CELL = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:(?:full\s+)?name|person|employee|member|team|squad|group|project|"
    r"system|service|product|component|app|application|company|vendor|organi[sz]ation)?\s*:?\s*$",
    re.IGNORECASE)


def _row_subject(text: str, mentions: list[Mention], left: Mention, gap: str) -> Mention | None:
    """What a table row is about, when ``left`` is a later cell's value of that row: the one
    thing named in the row's first cell ("Ana Ruiz; …", "Name: Ana Ruiz; …", "Team: Ledger;
    …")."""
    if not re.search(r"[;|]", gap):
        return None
    line_start = text.rfind("\n", 0, left.start) + 1
    line_end = text.find("\n", left.start)
    line = text[line_start: len(text) if line_end < 0 else line_end]
    first = re.search(r"[;|]", line)
    if first is None or left.start < line_start + first.start():
        return None  # the left mention is in the first cell: it is the subject
    cell_end = line_start + first.start()
    named = [m for m in mentions if line_start <= m.start and m.end <= cell_end]
    if len(named) != 1 or not _ROW_NAME_CELL.match(text[line_start:named[0].start]):
        return None  # "Owner: Ana; …": the first cell is a value of its own
    return named[0]


def relation_types_named(text: str) -> set[RelationType]:
    """Relation types a question's wording names ("who leads …" → LEADS), passive forms too."""
    lowered = text.lower()
    # a pattern that needs words after its target ("… relationship") only reads a mention pair
    return {p.type for p in PATTERNS if p.after is None and p.regex.search(lowered)} - {R.RELATED_TO}
