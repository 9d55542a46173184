"""Generate a world directory: ``confluence/``, ``slack/`` and ``truth/``.

Documents are rendered in date order and written as they are made (pages one file each,
Slack day files flushed when the day is over). Ground truth goes to ``truth/``:
``entities.jsonl``, ``relations.jsonl``, ``mentions.jsonl``, ``documents.jsonl``,
``resolution_pairs.jsonl``, ``communities.json``, ``questions.jsonl`` and ``world.json``.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from bench.world.confluence import ConfluenceWriter
from bench.world.docs import Index, Truth
from bench.world.generator import build_world
from bench.world.model import END, START, World
from bench.world.questions import make_questions
from bench.world.slack import SlackWriter


@dataclass
class Summary:
    people: int
    entities: int
    relations: int
    documents: int
    questions: int
    out: Path


def _rand_day(rng: random.Random, lo: date, hi: date) -> date:
    return lo + timedelta(days=rng.randint(0, max(0, (hi - lo).days)))


def _jobs(w: World, rng: random.Random) -> list[tuple[date, int, str, str]]:
    """(day, tiebreak, kind, argument) of every document, to be rendered in date order."""
    jobs: list[tuple[date, int, str, str]] = []

    def add(day: date, kind: str, arg: str) -> None:
        jobs.append((day, len(jobs), kind, arg))

    late = END - timedelta(days=75)
    for t in w.of_kind("team"):
        add(_rand_day(rng, late, END), "team_page", t.id)
        for _ in range(2):
            add(_rand_day(rng, START, END), "meeting_notes", t.id)
        for _ in range(3):
            add(_rand_day(rng, START, END), "team_thread", t.id)
    for d in w.of_kind("division"):
        add(_rand_day(rng, late, END), "division_page", d.id)
        add(_rand_day(rng, START, START + timedelta(days=50)), "directory", d.id)
        add(_rand_day(rng, late, END), "directory", d.id)
    for p in w.of_kind("project"):
        add(max(p.started or START, START), "charter", p.id)
        for _ in range(2):
            add(_rand_day(rng, max(p.started or START, START), END), "project_thread", p.id)
    systems = w.of_kind("system")
    for s in systems:
        add(_rand_day(rng, date(2024, 6, 1), END), "system_page", s.id)
    for s in rng.sample(systems, len(systems) // 2):
        add(_rand_day(rng, START, END), "postmortem", s.id)
    for i, ev in enumerate(w.events):
        slack = ev.kind in ("transfer", "vendor_swap") or rng.random() < 0.3
        add(ev.day, "slack_announcement" if slack else "announcement", str(i))
    for key in sorted({lab for (lab, _s) in w.timeline if lab.startswith("vendor:")}):
        add(_rand_day(rng, late, END), "vendor_page", key.partition(":")[2])
    for _ in range(max(3, len(w.of_kind("person")) // 5)):
        add(_rand_day(rng, START, END), "banter", "")
    jobs.sort()
    return jobs


def generate_world(out: Path, people: int = 50, seed: int = 7,
                   questions_per_category: int = 12) -> Summary:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    world = build_world(people, seed)
    rng = random.Random(seed * 1_000_003 + 1)
    index = Index(world)
    truth = Truth(out / "truth")
    conf = ConfluenceWriter(out / "confluence", world, truth, index, rng)
    slack = SlackWriter(out / "slack", world, truth, index, rng)
    for day, _n, kind, arg in _jobs(world, rng):
        if kind == "announcement":
            conf.announcement(world.events[int(arg)])
        elif kind == "slack_announcement":
            slack.announcement(world.events[int(arg)])
        elif kind in ("team_thread", "project_thread"):
            getattr(slack, kind)(arg, day)
        elif kind == "banter":
            slack.banter(day)
        else:
            getattr(conf, kind)(arg, day)
    conf.write_users()
    slack.close()
    truth.close()
    n_entities, n_relations = write_truth(out / "truth", world, truth)
    qs = make_questions(world, index, truth, random.Random(seed + 17), questions_per_category)
    with (out / "truth" / "questions.jsonl").open("w", encoding="utf-8") as fh:
        for q in qs:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    n_people = len(world.of_kind("person"))
    summary = {"seed": seed, "people": n_people, "company": world.company.name,
               "entities": n_entities, "relations": n_relations,
               "documents": truth.doc_count, "questions": len(qs),
               "start": START.isoformat(), "end": END.isoformat()}
    (out / "truth" / "world.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return Summary(n_people, n_entities, n_relations, truth.doc_count, len(qs), out)


def write_truth(out: Path, w: World, truth: Truth) -> tuple[int, int]:
    """Entities with their surface forms, relations with evidence, resolution pairs and
    communities. Returns (entities written, relations written)."""
    n_ent = 0
    with (out / "entities.jsonl").open("w", encoding="utf-8") as fh:
        for e in w.entities.values():
            forms = truth.forms.get(e.id, {})
            if not forms:
                continue
            n_ent += 1
            fh.write(json.dumps({
                "id": e.id, "kind": e.kind, "name": e.name,
                "forms": sorted(forms), "form_counts": dict(sorted(forms.items())),
                "nickname": e.nickname or None, "handle": e.handle or None,
            }, ensure_ascii=False) + "\n")
    n_rel = 0
    with (out / "relations.jsonl").open("w", encoding="utf-8") as fh:
        for r in w.relations.values():
            ev = truth.evidence.get(r.id, [])
            n_rel += 1
            fh.write(json.dumps({
                "id": r.id, "type": r.type, "label": r.label,
                "subject": r.subject, "object": r.object,
                "subject_name": w.entities[r.subject].name,
                "object_name": w.entities[r.object].name,
                "valid_from": r.start.isoformat() if r.start else None,
                "valid_to": r.end.isoformat() if r.end else None,
                "evidence": [{"doc": d, "subject_form": s, "object_form": o} for d, s, o in ev],
            }, ensure_ascii=False) + "\n")
    _write_pairs(out, w, truth)
    _write_communities(out, w)
    return n_ent, n_rel


def _write_pairs(out: Path, w: World, truth: Truth) -> None:
    """Pairs of person surface forms: same entity (True) or confusable different people."""
    with (out / "resolution_pairs.jsonl").open("w", encoding="utf-8") as fh:
        people = [e for e in w.of_kind("person") if truth.forms.get(e.id)]
        for e in people:
            forms = sorted(truth.forms[e.id])
            for i, a in enumerate(forms):
                for b in forms[i + 1:]:
                    fh.write(json.dumps({"a": a, "b": b, "a_entity": e.id, "b_entity": e.id,
                                         "same": True, "kind": "alias"}) + "\n")
        for x, y in w.confusables:
            for a in sorted(truth.forms.get(x, {})):
                for b in sorted(truth.forms.get(y, {})):
                    if a != b:
                        fh.write(json.dumps({"a": a, "b": b, "a_entity": x, "b_entity": y,
                                             "same": False, "kind": "confusable"}) + "\n")
        by_given: dict[str, list[str]] = {}
        for e in people:
            by_given.setdefault(e.given, []).append(e.id)
        for ids in by_given.values():  # neighbours only: bounded at large scales
            for x, y in itertools.pairwise(ids[:4]):
                    fh.write(json.dumps({"a": w.entities[x].name, "b": w.entities[y].name,
                                         "a_entity": x, "b_entity": y, "same": False,
                                         "kind": "same_given_name"}) + "\n")


def _write_communities(out: Path, w: World) -> None:
    """The generator's own groups at the end of the timeline: divisions and teams."""
    members: dict[str, list[str]] = {}
    for (label, person), rids in w.timeline.items():
        last = w.relations[rids[-1]]
        if label == "member_of" and last.end is None:
            members.setdefault(last.object, []).append(person)
    by_division: dict[str, list[str]] = {}
    teams = []
    for t in w.of_kind("team"):
        division = w.value("team_division", t.id, END)
        by_division.setdefault(division or "", []).append(t.id)
        teams.append({"id": t.id, "name": t.name, "division": division,
                      "members": sorted(members.get(t.id, []))})
    divisions = [{"id": d.id, "name": d.name, "teams": by_division.get(d.id, [])}
                 for d in w.of_kind("division")]
    (out / "communities.json").write_text(
        json.dumps({"as_of": END.isoformat(), "divisions": divisions, "teams": teams}, indent=1),
        encoding="utf-8")
