"""How a chained question decomposes: which embedded description is answered first.

"In which office is the release manager of X based?" asks about someone the question only
describes. The description is answered first as its own question ("Who is the release
manager of X?"), the entity its answer names (the bridge) is put in its place, and the
outer question is asked about the bridge. The shapes are data (:data:`SHAPES`, one named
pattern each, tried in order, first match wins); :data:`HITS` counts which fired, so a bench
or a trace can report each shape's hit rate.

Shapes:

- ``conjunction-anaphor``: "A, and B" where B refers back to A's answer ("that person",
  "their role", "its owner", "it"): A is answered, its answer's entity replaces the anaphor
  in B, B is answered; the two answers are joined.
- ``role-of``: "… the <role> of <Name> …" inside a longer question.
- ``possessive-role``: "… <Name>'s <role> …" inside a longer question.
- ``relative-clause``: "… the engineer who prepared <X> …" (:func:`multihop.decompose`).

Pure: no store is read here.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from knotwork.domain.models import EntityType
from knotwork.retrieval.intent import AnswerType, intent_of
from knotwork.retrieval.lexical import stem
from knotwork.retrieval.multihop import decompose
from knotwork.retrieval.role_nouns import GROUP_ROLES, PERSON_ROLES, ROLE_HEADS

__all__ = ["ANAPHORS", "GROUP_ROLES", "HITS", "PERSON_ROLES", "SHAPES", "Plan", "plan"]

_ROLE_HEADS = ROLE_HEADS

# words that end a name inside a question: verbs and particles of the outer question
_END_WORDS = frozenset("""
based located headquartered situated work works working worked report reports reporting reported
belong belongs belonged sit sits sitting live lives living use uses used run runs ran running on
in at to for from with under into by now currently today still then also before after during and
or but is are was were be been does do did has have had who whom whose which what when where why
how that this as of since until while whilst
""".split())  # noqa: SIM905 - a word list reads best as words
_WH = r"(?:who|whom|whose|what|which|where|when|how)"
_PRE_WH = re.compile(r"^\s*(?:(?:in|to|at|from|for|with|on|by|under|into)\s+)?" + _WH + r"\b",
                     re.IGNORECASE)
_DO_QUESTION = re.compile(r"^\s*(?:\w+\s+){0,3}?(?:does|do|did)\b", re.IGNORECASE)
# "Who is {}?", "What was {} before X?": a property of the described one itself, one hop
_SINGLE_HOP = re.compile(r"^\s*(?:who|what|which|where|when)\s+(?:is|was|are|were)\s+"
                         r"(?:the\s+(?:full\s+)?name\s+of\s+)?\{\}",
                         re.IGNORECASE)
_AS = re.compile(r"\bas\s*$", re.IGNORECASE)  # "replaced X as Y's partner": Y's partner is no chain
_TOKEN = re.compile(r"[^\s,;?!]+")
_NOT_ROLES = frozenset(stem(w) for w in (
    "overview", "summary", "status", "history", "list", "risk", "risks", "theme", "themes",
    "cause", "date", "time", "number", "name", "purpose", "goal", "result", "outcome", "scope",
    "cost", "price", "version", "budget", "relationship"))


@dataclass(frozen=True)
class Plan:
    shape: str  # the SHAPES entry that fired
    inner: str  # answered first
    template: str  # the outer question, {} where the bridge goes
    kinds: frozenset[EntityType] | None = None  # what the bridge may be (None: anything)
    role: str | None = None  # the description's role words ("release manager"), to find
    # the bridge next to them in the inner answer
    joined: bool = False  # conjunction: the answer states both parts
    plural: bool = False  # the anaphor may stand for several ("their roles", "them")


def _name_span(text: str, start: int) -> int:
    """The end of a name that begins at ``start``: capitalised words, digits and the
    lower-case words that continue it ("the Atlas v3 refresh"), up to a verb, particle or
    punctuation of the outer question."""
    end = start
    first = True
    for m in _TOKEN.finditer(text, start):
        if text[end:m.start()].strip():
            break  # punctuation between
        word = m.group(0)
        bare = re.sub(r"(?:'s|’s)$", "", word)
        if first and bare.lower() in ("the", "a", "an"):
            end = m.end()
            continue
        if first and not (bare[:1].isupper() or bare[:1].isdigit()):
            return start
        if not first and bare.lower() in _END_WORDS:
            break
        end = m.end()
        first = False
        if bare != word:
            break  # "Atlas's manager": the name ends at the possessive
    return end


def _drop_final_verb(q: str, start: int, end: int) -> int:
    """In "To whom does the lead of X report?" the last word is the outer verb."""
    if not q[end:].strip(" ?.!") and _DO_QUESTION.match(q):
        words = list(_TOKEN.finditer(q, start, end))
        if len(words) >= 2 and words[-1].group(0).islower():
            return words[-2].end()
    return end


_ROLE_OF = re.compile(r"\b(?:the|a|an)\s+(?P<role>(?:[a-z][a-z-]*\s+){0,2}?(?P<head>[a-z][a-z-]*))"
                      r"\s+(?:of|for)\s+(?=\S)")


def _role_of(q: str) -> Plan | None:
    if not _PRE_WH.match(q):
        return None
    for m in _ROLE_OF.finditer(q):
        head, role = m.group("head").lower(), m.group("role")
        if head not in _ROLE_HEADS or any(stem(w) in _NOT_ROLES for w in role.lower().split()) \
                or re.search(r"\b" + _WH + r"\b", role, re.IGNORECASE):
            continue
        end = _name_span(q, m.end())
        if end == m.end() or re.search(r"(?:'s|’s)$", q[:end]):
            continue  # "the manager of X's Y": the possessive shape's
        end = _drop_final_verb(q, m.end(), end)
        template = q[: m.start()] + "{}" + q[end:]
        if _SINGLE_HOP.match(template) or _AS.search(q[: m.start()]):
            continue
        described = q[m.start(): end].strip()
        person = head in PERSON_ROLES
        inner = f"Who is {described}?" if person else f"Which {head} is {described}?"
        kinds = frozenset({EntityType.PERSON}) if person else None
        return Plan("role-of", inner, template, kinds, role)
    return None


_POSSESSIVE = re.compile(r"(?:'s|’s)\s+")
# after an acronym role ("X's CFO"), the question ends or its verb follows: not "X's HR desk",
# not "X's CFO before Y" (a time, not a chain)
_AFTER_ACRONYM = re.compile(r"\s*(?:\?|$|(?:work|works|report|reports|sit|sits|live|lives|"
                            r"belong|belongs|based|located)\b)")


def _possessive_role(q: str) -> Plan | None:
    if not _PRE_WH.match(q):
        return None
    for m in _POSSESSIVE.finditer(q):
        words = list(re.finditer(r"[A-Za-z][\w-]*", q[m.end():]))[:3]
        role_end = None
        acronym = bool(words) and re.fullmatch(r"[A-Z]{2,6}", words[0].group(0)) is not None
        if acronym and _AFTER_ACRONYM.match(q, m.end() + words[0].end()):
            role_end, head = m.end() + words[0].end(), words[0].group(0)
        else:
            for i, w in enumerate(words):  # the longest lower-case run ending in a role noun
                if not w.group(0).islower() or (i and q[m.end() + words[i - 1].end(): m.end() + w.start()].strip()):
                    break
                if w.group(0) in _ROLE_HEADS:
                    role_end, head = m.end() + w.end(), w.group(0)
        if role_end is None:
            continue
        # the owner: the capitalised words right before "'s"
        owner = re.search(r"(?:(?<=\s)|^)(?:(?:[A-Z0-9][\w&.+/-]*|&)\s+){0,3}[A-Z0-9][\w&.+/-]*$",
                          q[: m.start()])
        if owner is None or _PRE_WH.match(owner.group(0)):
            continue
        end = _drop_final_verb(q, owner.start(), role_end)
        if end <= m.end():
            continue
        template = q[: owner.start()] + "{}" + q[end:]
        if _SINGLE_HOP.match(template) or _AS.search(q[: owner.start()]):
            continue
        described = q[owner.start(): end].strip()
        person = acronym or head in PERSON_ROLES
        inner = f"Who is {described}?" if person else f"Which {head} is {described}?"
        kinds = frozenset({EntityType.PERSON}) if person else None
        return Plan("possessive-role", inner, template, kinds, q[m.end(): end].strip())
    return None


def _relative_clause(q: str) -> Plan | None:
    found = decompose(q)
    if found is None:
        return None
    person = (found.noun or "") in PERSON_ROLES | {"people", "one"}
    return Plan("relative-clause", found.inner, found.template,
                frozenset({EntityType.PERSON}) if person and found.noun != "one" else None)


# (name, pattern, the bridge's kinds): a word of the second part that refers back to the
# first part's answer; the pattern's whole match is replaced by the bridge ("that person's
# manager" → "<bridge>'s manager", "their role" → "<bridge>'s role")
_PEOPLE_WORDS = r"(?:person|people|manager|engineer|lead|leader|owner|designer|author|director|producer)"
_GROUP_WORDS = r"(?:team|squad|division|department|group|unit|office|studio|vendor|company)"
ANAPHORS: tuple[tuple[str, re.Pattern[str], str, frozenset[EntityType] | None], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE), repl, kinds) for name, pattern, repl, kinds in (
        ("that-person", r"\b(?:that|this|the same)\s+" + _PEOPLE_WORDS + r"\b", "{}",
         frozenset({EntityType.PERSON})),
        ("that-group", r"\b(?:that|this|the same)\s+" + _GROUP_WORDS + r"\b", "{}",
         frozenset({EntityType.ORGANIZATION, EntityType.LOCATION})),
        ("their", r"\b(?:their|his|her)\s+(?=[a-z])", "{}'s ", frozenset({EntityType.PERSON})),
        ("its", r"\bits\s+(?=[a-z])", "{}'s ", None),
        ("it", r"(?<=\s)(?:it|him|them)(?=\s*[?.,]?\s*$|\s+(?:now|then|before|after)\b)", "{}",
         None),
    ))
_CONJUNCTION = re.compile(r",?\s+and\s+(?=(?:(?:in|to|at|from|for|with|on|by|under)\s+)?" + _WH
                          + r"\b)", re.IGNORECASE)


def _conjunction(q: str) -> Plan | None:
    if re.search(r"[.?!]\s+\S", q.strip()):
        return None  # a statement before the question: not this shape
    m = _CONJUNCTION.search(q)
    if m is None:
        return None
    first, second = q[: m.start()].strip(" ,"), q[m.end():].strip()
    if len(first.split()) < 3 or len(second.split()) < 3 or not _PRE_WH.match(first):
        return None
    asked = intent_of(first).answer_type
    for _name, pattern, repl, kinds in ANAPHORS:
        found = pattern.search(second)
        if found is None:
            continue
        if not _refers_to(kinds, asked):
            return None  # "Who led X, and who leads it now?": "it" is X, not the answer
        template = second[: found.start()] + repl + second[found.end():]
        template = template[0].upper() + template[1:]
        plural = found.group(0).lower().split()[0] in ("their", "them")
        return Plan("conjunction-anaphor", first.rstrip("?") + "?", template.rstrip("?") + "?",
                    kinds, None, joined=True, plural=plural)
    return None


def _refers_to(kinds: frozenset[EntityType] | None, asked: AnswerType) -> bool:
    """Whether an anaphor of these kinds can be the answer of a question of this type: "that
    person" a person, "it" no person, and no number, date or amount ever a bridge."""
    if asked in (AnswerType.DATE, AnswerType.MONEY, AnswerType.NUMBER):
        return False
    if kinds is None:
        return asked is not AnswerType.PERSON
    return asked is AnswerType.DESCRIPTION or bool(kinds & _TYPE_KINDS[asked])


_TYPE_KINDS = {AnswerType.PERSON: frozenset({EntityType.PERSON}),
               AnswerType.ORGANIZATION: frozenset({EntityType.ORGANIZATION}),
               AnswerType.PLACE: frozenset({EntityType.LOCATION})}


# (name, the planner): the first that returns a plan decides
SHAPES = (
    ("conjunction-anaphor", _conjunction),
    ("role-of", _role_of),
    ("possessive-role", _possessive_role),
    ("relative-clause", _relative_clause),
)
HITS: Counter[str] = Counter()  # how often each shape fired (counted where a plan is run)


def plan(question: str) -> Plan | None:
    q = question.strip()
    for _name, planner in SHAPES:
        found = planner(q)
        if found is not None:
            return found
    return None
