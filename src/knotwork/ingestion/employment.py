"""WORKS_AT for the people of the tenant's own workspace (run after an ingest that brought them).

A company's wiki and chat rarely say "Ana works at Example Corp" of its own staff: that they do
is what the workspace itself states. This pass decides which organisation is the tenant's own
(:data:`TENANT_CUES`, each a named cue whose votes are summed) and relates each workspace member
the graph knows as a person to it:

    Ana Example —WORKS_AT→ Example Corp      (ended when the account is deactivated)

The evidence of such a fact is the person's directory row when they have one (a fact read from
a table row), else the first chunk naming them. The facts are written to the graph only: they
have no vector, so a search for passages or sentences never meets them, and they reach an
answer only through the graph (an employer question, a "who works at" list).

:func:`tenant_organization` and :func:`plan_employment` are pure; :func:`derive_employment`
reads and writes the tenant's graph.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from knotwork.domain.models import Entity, EntityType, Fact, RelationType, WorkspaceMember
from knotwork.ingestion.facts import fact_id
from knotwork.resolution.name_forms import folded_keys

if TYPE_CHECKING:
    from knotwork.runtime import Runtime

R = RelationType
METHOD = "workspace"  # the extraction method of a fact this pass derives
CONFIDENCE = 0.85

# The cues, as data: name -> (weight, what it says). A cue's votes go to organisation entities;
# the organisation with the most weighted votes is the tenant's own (none when no cue votes).
TENANT_CUES: dict[str, tuple[float, str]] = {
    "email_domain": (3.0, ("the members' e-mail domain is the organisation's name "
                          "(ana@examplecorp.com: Example Corp)")),
    "email_domain_prefix": (1.5, ("the members' e-mail domain begins or ends the organisation's "
                                 "name (ana@example.io: Example Corp)")),
    "unit_chain": (1.0, ("teams and divisions chain up to the organisation by MEMBER_OF "
                        "(share of the chains that end there)")),
    "member_ties": (1.0, ("the organisation most workspace members are tied to by any fact "
                         "(share of the ties)")),
}
_MIN_PREFIX = 4  # a domain label shorter than this begins too many names
_GENERIC_DOMAINS = frozenset({"gmail", "googlemail", "outlook", "hotmail", "yahoo", "icloud",
                              "proton", "protonmail", "gmx", "web", "mail", "live", "aol"})


@dataclass
class TenantChoice:
    """The tenant's organisation and the votes of each cue (entity id -> weight)."""

    organization: Entity | None
    votes: dict[str, dict[str, float]] = field(default_factory=dict)


def _org_keys(entity: Entity) -> set[str]:
    keys: set[str] = set()
    for form in [entity.name, *entity.aliases]:
        keys |= folded_keys(form)
    return keys


def _domain_label(domain: str) -> str:
    """"mail.examplecorp.co.uk" -> "examplecorp": the label before the public suffix."""
    labels = [p for p in domain.lower().split(".") if p]
    while len(labels) > 1 and (len(labels[-1]) <= 3 or labels[-1] in {"com", "org", "net", "info"}):
        labels.pop()
        if len(labels) == 1:
            break
    return re.sub(r"[^a-z0-9]", "", labels[-1]) if labels else ""


def _is_unit(entity: Entity) -> bool:
    return (entity.subtype or "").upper() in {"TEAM", "DEPARTMENT", "DIVISION", "UNIT"}


def tenant_organization(entities: Sequence[Entity], facts: Sequence[Fact],
                        members: Sequence[WorkspaceMember],
                        member_ids: Iterable[str] = ()) -> TenantChoice:
    """The organisation the workspace is (:data:`TENANT_CUES`), with each cue's votes."""
    orgs = {e.id: e for e in entities if e.type is EntityType.ORGANIZATION}
    # the domain every member's e-mail shares names an organisation, whatever type one
    # mention guessed for the entity ("Example Corp" read as a person's name)
    named_any = {e.id: e for e in entities if e.type is not EntityType.PERSON or len(e.name.split()) > 1}
    votes: dict[str, dict[str, float]] = {name: {} for name in TENANT_CUES}
    domains = Counter(_domain_label(m.domain) for m in members if m.domain)
    domains = Counter({d: n for d, n in domains.items() if d and d not in _GENERIC_DOMAINS})
    if domains:
        label = domains.most_common(1)[0][0]
        for org in named_any.values():
            if org.type not in (EntityType.ORGANIZATION, EntityType.PERSON):
                continue
            keys = _org_keys(org)
            if label in keys:
                votes["email_domain"][org.id] = 1.0
            elif len(label) >= _MIN_PREFIX and any(k.startswith(label) or label.startswith(k)
                                                   for k in keys if len(k) >= _MIN_PREFIX):
                votes["email_domain_prefix"][org.id] = 1.0
    # unit chains: from each organisation with a MEMBER_OF parent up to the top of its chain
    parent: dict[str, str] = {}
    for f in facts:
        if f.type is R.MEMBER_OF and f.invalid_at is None and f.source_id in orgs \
                and f.target_id in orgs and f.source_id not in parent:
            parent[f.source_id] = f.target_id
    tops: Counter[str] = Counter()
    for start in parent:
        node, seen = start, {start}
        while node in parent and parent[node] not in seen:
            node = parent[node]
            seen.add(node)
        if not _is_unit(orgs[node]):
            tops[node] += 1
    total = sum(tops.values())
    votes["unit_chain"] = {k: n / total for k, n in tops.items()} if total else {}
    people = set(member_ids)
    ties: Counter[str] = Counter()
    for f in facts:
        for a, b in ((f.source_id, f.target_id), (f.target_id, f.source_id)):
            if a in people and b in orgs and not _is_unit(orgs[b]):
                ties[b] += 1
    total = sum(ties.values())
    votes["member_ties"] = {k: n / total for k, n in ties.items()} if total else {}
    score: defaultdict[str, float] = defaultdict(float)
    for cue, by_org in votes.items():
        for org_id, share in by_org.items():
            score[org_id] += TENANT_CUES[cue][0] * share
    # the members' e-mail domain must name the organisation: chains and ties alone picked a
    # team over a company whose name a mention mistyped; they only break ties between names
    named = set(votes["email_domain"]) | set(votes["email_domain_prefix"])
    ranked = [(s, org_id) for org_id, s in score.items() if org_id in named]
    if not ranked:
        return TenantChoice(None, votes)
    best = max(ranked, key=lambda p: (p[0], -len(named_any[p[1]].name), p[1]))[1]
    return TenantChoice(named_any[best], votes)


def match_members(entities: Sequence[Entity], facts: Sequence[Fact],
                  members: Sequence[WorkspaceMember]) -> dict[str, WorkspaceMember]:
    """Person entity id -> the member it is (one entity per member: the best evidenced)."""
    by_key: dict[str, list[Entity]] = defaultdict(list)
    for e in entities:
        if e.type is not EntityType.PERSON:
            continue
        for form in [e.name, *e.aliases]:
            for key in folded_keys(form):
                by_key[key].append(e)
    degree: Counter[str] = Counter()
    for f in facts:
        degree[f.source_id] += 1
        degree[f.target_id] += 1
    out: dict[str, WorkspaceMember] = {}
    for member in members:
        found = {e.id: e for key in folded_keys(member.name) for e in by_key.get(key, [])}
        if found:
            best = max(found.values(), key=lambda e: (degree[e.id], e.id))
            out.setdefault(best.id, member)
    return out


def _sentence(person: Entity, org: Entity, member: WorkspaceMember) -> str:
    role = f" ({member.title})" if member.title else ""
    if member.left:
        until = f" until {member.left_at:%B %Y}" if member.left_at else ""
        return f"{person.name}{role} worked at {org.name}{until}."
    return f"{person.name}{role} works at {org.name}."


def plan_employment(group_id: str, org: Entity, people: dict[str, WorkspaceMember],
                    entities: dict[str, Entity], facts: Sequence[Fact],
                    evidence: dict[str, str], now: datetime) -> list[Fact]:
    """The WORKS_AT facts to write: one per member person not yet working at ``org``, or
    an existing one to close when the member left. ``evidence``: person id -> an episode id."""
    current: dict[str, Fact] = {f.source_id: f for f in facts
                                if f.type is R.WORKS_AT and f.target_id == org.id}
    out: list[Fact] = []
    for person_id, member in sorted(people.items()):
        episode = evidence.get(person_id)
        if episode is None or person_id == org.id:
            continue
        known = current.get(person_id)
        ended = (member.left_at or now) if member.left else None
        if known is not None:
            if ended is not None and known.invalid_at is None:
                out.append(known.model_copy(update={"invalid_at": ended}))
            continue
        text = _sentence(entities[person_id], org, member)
        out.append(Fact(id=fact_id(group_id, person_id, org.id, R.WORKS_AT, text),
                        group_id=group_id, source_id=person_id, target_id=org.id,
                        type=R.WORKS_AT, fact=text, confidence=CONFIDENCE, episodes=[episode],
                        episode_confidences=[CONFIDENCE], episode_valid_at=[None],
                        valid_at=None, invalid_at=ended, created_at=now,
                        extraction_method=METHOD))
    return out


def _evidence(rt: Runtime, group_id: str, people: Iterable[str], facts: Sequence[Fact]
              ) -> dict[str, str]:
    """Person id -> the episode of their directory row (a fact read from a table row), else
    the first episode naming them."""
    out: dict[str, str] = {}
    wanted = set(people)
    for f in sorted(facts, key=lambda f: f.id):
        if f.extraction_method == "table" and f.source_id in wanted and f.episodes \
                and f.source_id not in out:
            out[f.source_id] = f.episodes[0]
    for person_id in sorted(wanted - set(out)):
        episodes = rt.graph.entity_episode_ids(group_id, person_id)
        if episodes:
            out[person_id] = min(episodes)
    return out


@dataclass
class EmploymentReport:
    organization: str | None = None
    facts: int = 0
    cues: dict[str, int] = field(default_factory=dict)  # cue -> organisations it voted for
    retyped: bool = False  # the organisation had been typed otherwise (made an organisation)


def derive_employment(rt: Runtime, group_id: str, members: Sequence[WorkspaceMember],
                      now: datetime) -> EmploymentReport:
    """Relate the workspace ``members`` the graph knows to the tenant's organisation."""
    report = EmploymentReport()
    if not members:
        return report
    entities = rt.graph.list_entities(group_id)
    facts = rt.graph.list_facts(group_id)
    people = match_members(entities, facts, members)
    choice = tenant_organization(entities, facts, members, people)
    report.cues = {cue: len(v) for cue, v in choice.votes.items()}
    if choice.organization is None or not people:
        return report
    org = choice.organization
    report.organization = org.name
    if org.type is not EntityType.ORGANIZATION:  # the staff's own domain names it: a mention
        org = org.model_copy(update={"type": EntityType.ORGANIZATION, "subtype": None})
        rt.graph.upsert_entities([org])  # that read it as a person's name was wrong
        report.retyped = True
    planned = plan_employment(group_id, org, people,
                              {e.id: e for e in entities}, facts,
                              _evidence(rt, group_id, people, facts), now)
    if planned:
        rt.graph.upsert_facts(planned)
    report.facts = len(planned)
    return report
