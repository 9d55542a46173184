"""A chain's first hop read from a labelled line: "Owner: Ana Ruiz" on the page about X.

"Who owned Project X, and who is that person's manager?" names its bridge in a page's
layout more often than in a sentence: a header line under the page title ("Owner: A. Ruiz",
"Lead: B. Chen · Status: DONE"), a table row whose first cell is the anchor ("Team: Billing;
Lead: Bo Chen"), or a people row whose role cell holds the described role ("Name: Ana Ruiz;
Role: Release manager"). Sentence search ranks such short lines low (they do not repeat the
anchor), and a neighbour of the right name is then taken for the bridge. Here the hop is
verified by the label: the label must state the asked role (:data:`ROLE_LABELS`, the act of a
"who <verb> X" question read as its role noun by :data:`ACT_ROLES`), every other word of the
label must be in the question ("Relationship owner" only when the question asks about the
relationship), and the line must be about the anchor (its row's first cell names it, or it is
a header line of a page whose title names it).

Pure over what it is given: the caller passes the anchor entities, the episodes that mention
them and a name lookup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from knotwork.domain.models import Entity, EntityType, Episode
from knotwork.retrieval.lexical import STOPWORDS, term_set

__all__ = ["ACT_ROLES", "ROLE_LABELS", "WORDS_LABEL", "AskedRole", "FieldHit", "asked_role",
           "field_bridges"]

# a role noun → the label words that state it (their terms, any form: "led by" for "lead")
ROLE_LABELS: dict[str, tuple[str, ...]] = {
    "owner": ("owner", "owners", "owned by", "dri"),
    "lead": ("lead", "leader", "led by", "head"),
    "leader": ("lead", "leader", "led by", "head"),
    "head": ("head", "lead", "leader"),
    "author": ("author", "authors", "written by", "writer"),
    "writer": ("author", "writer", "written by"),
    "approver": ("approver", "approvers", "approved by", "sign-off"),
    "sponsor": ("sponsor", "sponsored by"),
    "reviewer": ("reviewer", "reviewers", "reviewed by"),
    "commander": ("commander", "ic"),
    "manager": ("manager",),
    "maintainer": ("maintainer", "maintainers", "maintained by"),
    "contact": ("contact",),
    "producer": ("producer",),
    "director": ("director",),
    "coordinator": ("coordinator",),
}
# the act of "Who <verb> X?" → the role noun its label states
ACT_ROLES: dict[str, str] = {
    "own": "owner", "owns": "owner", "owned": "owner",
    "lead": "lead", "leads": "lead", "led": "lead", "head": "head", "heads": "head",
    "headed": "head",
    "write": "author", "wrote": "author", "writes": "author", "authored": "author",
    "approve": "approver", "approves": "approver", "approved": "approver",
    "sponsor": "sponsor", "sponsors": "sponsor", "sponsored": "sponsor",
    "review": "reviewer", "reviewed": "reviewer", "reviews": "reviewer",
    "maintain": "maintainer", "maintains": "maintainer", "maintained": "maintainer",
}
# the cells of a people row that hold a person's role ("Role: Economy designer")
_ROLE_CELLS = frozenset({"role", "title", "position", "job title", "job"})
# words of a role phrase that say when, not which role ("the current lead")
_WHEN_WORDS = frozenset({"current", "new", "former", "previous", "old", "direct", "acting",
                         "interim", "then", "today", "now"})
_CELL = re.compile(r"^\s*(?:[-*•]\s*)?(?P<label>[A-Za-z][\w &/()'’-]{0,40}?)\s*:\s*(?P<value>.+?)\s*$")
_SPLIT = re.compile(r"\s*[;|·]\s*|\s+—\s+(?=[A-Z][\w ]{0,20}:)")
_WHO_VERB = re.compile(r"^\W*(?:(?:to|for|with|by)\s+)?(?:who(?:m)?|(?:which|what)\s+[a-z]+)\s+"
                       r"(?:(?:did|does|do)\s+)?(?P<verb>[a-z]+)\s+(?:(?:the|a|an)\s+)?"
                       r"(?P<object>[\w-]+)?", re.IGNORECASE)


@dataclass(frozen=True)
class FieldHit:
    bridges: tuple[Entity, ...]  # the entities the line's value names, in order
    line: str  # the line as written
    title: str  # the page it is on
    episode_id: str
    label: str


@dataclass(frozen=True)
class AskedRole:
    noun: str  # the role noun ("manager"; "owner" for "Who owned X?"); "" for no role: a
    # label of the question's own words answers ("Which app won best overall at X?" is read
    # from "Best overall: <name>" on the page about X)
    modifiers: tuple[str, ...] = ()  # its other words ("account" of "account manager")
    thing: str | None = None  # the lower-case thing the act is on ("the postmortem")


WORDS_LABEL = AskedRole("")
_MIN_LABEL_WORDS = 2  # a label of the question's own words: this many content words at least


def asked_role(inner: str, role: str | None) -> AskedRole | None:
    """The role a first hop asks for ("account manager" → manager, [account]); "Who owned
    X?" → owner; "Who wrote the postmortem …?" → author, of a postmortem. None when it
    asks for no role."""
    if role:
        words = [w for w in re.findall(r"[a-z][\w-]*", role.lower()) if w not in _WHEN_WORDS]
        return AskedRole(words[-1], tuple(words[:-1])) if words else None
    m = _WHO_VERB.match(inner)
    if m and m.group("verb").lower() in ACT_ROLES:
        thing = m.group("object")
        thing = thing if thing and thing.islower() and thing not in STOPWORDS else None
        return AskedRole(ACT_ROLES[m.group("verb").lower()], (), thing)
    return None


def _names(entity: Entity) -> list[str]:
    return [n for n in (entity.name, *entity.aliases) if len(n) >= 3]


def _names_any(text: str, names: Sequence[str]) -> bool:
    low = text.lower()
    return any(re.search(r"(?<!\w)" + re.escape(n.lower()) + r"(?!\w)", low) for n in names)


def _label_fits(label: str, noun: str, asked: set[str]) -> int | None:
    """The label states the role and its other words are the question's: how many other
    words it has (a label naming more of the question is more specific); else None. With
    no role noun, a label of two content words or more that are all the question's."""
    words = re.findall(r"[a-z][\w-]*", re.sub(r"\(.*?\)", " ", label.lower()))
    text = " ".join(words)
    if not noun:
        content = [w for w in words if w not in STOPWORDS and term_set(w)]
        fits = len(content) >= _MIN_LABEL_WORDS and all(term_set(w) <= asked for w in content)
        return len(content) if fits else None
    for form in ROLE_LABELS.get(noun, (noun,)):
        m = re.search(r"(?<![\w-])" + re.escape(form) + r"(?![\w-])", text)
        if m is None:
            continue
        rest = [w for w in (text[: m.start()] + " " + text[m.end():]).split()
                if w not in STOPWORDS]
        if all(term_set(w) <= asked for w in rest if term_set(w)):
            return len([w for w in rest if term_set(w)])
    return None


def _role_cell_fits(label: str, value: str, noun: str, modifiers: Sequence[str]) -> bool:
    """"Role: Economy designer" for "the economy designer": the cell holds the role words."""
    if label.lower().strip() not in _ROLE_CELLS:
        return False
    have = term_set(value)
    return term_set(noun) <= have and all(term_set(w) <= have for w in modifiers)


def _header_lines(episode: Episode) -> set[int]:
    """The indexes of a page's header lines: under its title, before its first heading."""
    lines = episode.content.splitlines()
    if not lines or not lines[0].startswith("# "):
        return set()
    out: set[int] = set()
    for i, line in enumerate(lines[1:], 1):
        if line.startswith("#"):
            break
        out.add(i)
    return out


def field_bridges(inner: str, role: AskedRole, anchors: Sequence[Entity],
                  episodes: Sequence[Episode], kinds: frozenset[EntityType] | None,
                  named_in: Callable[[str], list[tuple[str, Entity]]]) -> FieldHit | None:
    """The best labelled line stating the role for the anchor, with the entities it names."""
    if not anchors:
        return None
    noun, modifiers = role.noun, role.modifiers
    anchor_names = [n for a in anchors for n in _names(a)]
    anchor_ids = {a.id for a in anchors}
    asked = term_set(inner)
    found: list[tuple[tuple[int, int, int], FieldHit]] = []
    for ep in episodes:
        lines = ep.content.splitlines()
        title = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("# ") else ep.name
        # a page titled by the anchor, or by the thing the act is on ("the postmortem")
        titled = _names_any(title, anchor_names) or (
            role.thing is not None and bool(term_set(role.thing))
            and term_set(role.thing) <= term_set(title))
        header = _header_lines(ep) if titled else set()
        for i, line in enumerate(lines):
            cells = [m for m in (_CELL.match(c) for c in _SPLIT.split(line)) if m]
            if not cells:
                continue
            about = _names_any(cells[0].group("value"), anchor_names) \
                or _names_any(cells[0].group("label"), anchor_names) \
                or (len(cells) > 1 and _names_any(line.split(":", 1)[0], anchor_names))
            if not about and not titled:
                continue
            for cell in cells:
                label, value = cell.group("label"), cell.group("value")
                specific = _label_fits(label, noun, asked)
                # a table row speaks for its first cell; a header line or a lone
                # "Label: value" line for the page's subject
                if specific is not None and (about or i in header or (titled and len(cells) == 1)):
                    shown = value
                elif noun and _role_cell_fits(label, value, noun, modifiers):
                    shown, specific = line.replace(value, " "), len(modifiers)
                else:
                    continue
                bridges = tuple(e for _, e in _ordered(named_in(shown), shown)
                                if e.id not in anchor_ids and (kinds is None or e.type in kinds))
                if bridges:
                    overlap = len(term_set(f"{title} {ep.content}") & asked)
                    rank = (-specific, 0 if about else 1, -overlap)
                    found.append((rank, FieldHit(bridges, line.strip(), title, ep.id, label)))
                break
    if not found:
        return None
    return min(found, key=lambda f: f[0])[1]


def _ordered(named: list[tuple[str, Entity]], text: str) -> list[tuple[str, Entity]]:
    """Named entities in the order the text names them, each once, shorter names that are
    part of a longer one left out ("Ruiz" inside "Ana Ruiz")."""
    low = text.lower()
    spans: list[tuple[int, int, str, Entity]] = []
    for words, entity in named:
        at = low.find(words.lower())
        if at >= 0:
            spans.append((at, at + len(words), words, entity))
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out: list[tuple[str, Entity]] = []
    seen: set[str] = set()
    taken: list[tuple[int, int]] = []
    for start, end, words, entity in spans:
        if entity.id in seen or any(s <= start and end <= e and (s, e) != (start, end)
                                    for s, e in taken):
            continue
        seen.add(entity.id)
        taken.append((start, end))
        out.append((words, entity))
    return out
