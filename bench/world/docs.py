"""Writing one document: surface forms, fact sentences, and the ground truth they leave.

``Truth`` accumulates, across all documents, which surface forms each entity was written
as and which documents state each relation (with the forms used); mentions are streamed
to ``truth/mentions.jsonl`` document by document. ``Doc`` is the writer of one document.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import IO

from bench.world.model import Entity, Event, Relation, World
from bench.world.templates import CHANGE, CHAT, FIRST_PERSON, PROSE, TYPOS

EVENT_LABEL = {"lead_change": "team_lead", "transfer": "member_of", "reorg": "team_division",
               "office_move": "team_office", "project_lead_change": "project_lead",
               "vendor_swap": "vendor:"}


class Index:
    """Relations by object (``label`` -> object id -> relation ids) for as-of lookups."""

    def __init__(self, world: World) -> None:
        self.w = world
        self.by_object: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.by_subject: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for rel in world.relations.values():
            self.by_object[rel.label][rel.object].append(rel.id)
            self.by_subject[rel.label][rel.subject].append(rel.id)

    def subjects(self, label: str, obj: str, day: date) -> list[Relation]:
        rels = (self.w.relations[r] for r in self.by_object[label].get(obj, []))
        return [r for r in rels if r.holds(day)]

    def objects(self, label: str, subject: str, day: date) -> list[Relation]:
        rels = (self.w.relations[r] for r in self.by_subject[label].get(subject, []))
        return [r for r in rels if r.holds(day)]

    def one(self, label: str, subject: str, day: date) -> Relation | None:
        found = self.objects(label, subject, day)
        return found[0] if found else None

    def lead_of(self, label: str, obj: str, day: date) -> Relation | None:
        found = self.subjects(label, obj, day)
        return found[0] if found else None


class Truth:
    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.forms: dict[str, dict[str, int]] = defaultdict(dict)
        self.evidence: dict[str, list[list[str]]] = defaultdict(list)
        self._mentions: IO[str] = (out / "mentions.jsonl").open("w", encoding="utf-8")
        self._docs: IO[str] = (out / "documents.jsonl").open("w", encoding="utf-8")
        self.doc_count = 0

    def record_doc(self, doc_id: str, system: str, kind: str, title: str, day: date,
                   mentions: dict[tuple[str, str], None]) -> None:
        self.doc_count += 1
        self._docs.write(json.dumps({"doc": doc_id, "system": system, "kind": kind,
                                     "title": title, "date": day.isoformat()}) + "\n")
        rows = [[e, f] for e, f in mentions]
        self._mentions.write(json.dumps({"doc": doc_id, "mentions": rows}) + "\n")

    def close(self) -> None:
        self._mentions.close()
        self._docs.close()


def _fmt_day(day: date, rng: random.Random) -> str:
    style = rng.randrange(4)
    if style == 0:
        return day.isoformat()
    if style == 1:
        return f"{day:%B} {day.day}, {day.year}"
    if style == 2:
        return f"{day.day} {day:%B} {day.year}"
    return f"{day:%b} {day.day} {day.year}"


class Doc:
    """The writer of one document; every name it writes is recorded as a mention."""

    def __init__(self, truth: Truth, world: World, rng: random.Random, doc_id: str,
                 day: date, chat: bool = False) -> None:
        self.truth, self.w, self.rng = truth, world, rng
        self.doc_id, self.day, self.chat = doc_id, day, chat
        self.mentions: dict[tuple[str, str], None] = {}
        self.last_subject = ""
        self.last_form = ""

    # ------------------------------------------------------------------ names
    def record(self, eid: str, form: str) -> None:
        self.mentions[(eid, form)] = None
        forms = self.truth.forms[eid]
        forms[form] = forms.get(form, 0) + 1

    def name(self, eid: str, style: str = "formal") -> str:
        """Raw text for entity ``eid``; records the surface form a reader sees."""
        e = self.w.entities[eid]
        raw, form = self._pick(e, style)
        self.record(eid, form)
        return raw

    def _pick(self, e: Entity, style: str) -> tuple[str, str]:
        r = self.rng.random()
        if e.kind == "person":
            nick_full = f"{e.nickname} {e.family}" if e.nickname else e.name
            short = e.nickname or e.given
            if style == "formal":
                form = e.name if r < 0.9 else nick_full
            elif style == "casual":
                form = e.name if r < 0.45 else nick_full if r < 0.6 else (
                    e.given if r < 0.8 else short)
            else:  # chat
                if r < 0.3:
                    return f"<@{e.slack_id}>", e.name
                if r < 0.03 + 0.3 and len(e.given) > 4:
                    typo = e.given[0] + e.given[2] + e.given[1] + e.given[3:]
                    return typo, typo
                form = e.given if r < 0.6 else short if r < 0.85 else e.name
            return form, form
        if e.kind == "team":
            low = f"{e.short} team"
            if style == "chat":
                form = low if r < 0.5 else e.name if r < 0.8 else f"{e.short} squad"
            else:
                form = e.name if r < 0.85 else low
            return form, form
        if e.kind == "division":
            form = e.name if r < 0.8 else f"{e.short} {'org' if style == 'chat' else 'division'}"
            return form, form
        if e.kind == "project":
            form = e.short if (style == "chat" and r < 0.6) or r < 0.15 else e.name
            return form, form
        if e.kind == "system":
            if style == "chat" and r < 0.7:
                form = e.name.lower() if r < 0.5 else e.name.lower().replace(" ", "-")
            else:
                form = e.name
            return form, form
        if e.kind == "technology":
            form = e.short if e.short and r < 0.3 else e.name
            return form, form
        if e.kind in ("vendor", "company"):
            form = e.short if " " in e.name and r < 0.25 else e.name
            return form, form
        return e.name, e.name

    # ------------------------------------------------------------------ facts
    def fact(self, rel: Relation, style: str = "formal", pronoun: bool = True,
             speaker: str = "") -> str:
        """One sentence stating ``rel``; records it as evidence in this document.

        ``speaker``: in chat, a speaker who is the subject says it in the first person."""
        label = "vendor" if rel.label.startswith("vendor:") else rel.label
        cat = rel.label.partition(":")[2]
        o_raw = self.name(rel.object, style)
        o_form = self._last_form(rel.object)
        if speaker == rel.subject and label in FIRST_PERSON:
            text = self.rng.choice(FIRST_PERSON[label]).format(o=o_raw)
            s_form = self.w.entities[speaker].name
            self.record(speaker, s_form)
        else:
            pool = CHAT.get(label) if style == "chat" else None
            template = self.rng.choice(pool or PROSE[label])
            use_pronoun = (pronoun and style != "chat" and self.last_subject == rel.subject
                           and template.startswith("{s}") and template.count("{s}") == 1
                           and self.w.entities[rel.subject].kind == "person")
            if use_pronoun:
                s_raw, s_form = "{pronoun}", self.last_form
            else:
                s_raw = self.name(rel.subject, style)
                s_form = self._last_form(rel.subject)
            text = template.format(s=s_raw, o=o_raw, cat=cat)
            if use_pronoun:
                text = text.replace("{pronoun}", self.w.entities[rel.subject].pronoun.capitalize())
            else:
                self.last_subject, self.last_form = rel.subject, s_form
            if style != "chat":
                text = text[0].upper() + text[1:]
        self.truth.evidence[rel.id].append([self.doc_id, s_form, o_form])
        return text

    def _last_form(self, eid: str) -> str:
        for e, form in reversed(list(self.mentions)):
            if e == eid:
                return form
        return self.w.entities[eid].name

    def change(self, ev: Event, style: str = "formal") -> str:
        names = {}
        for key, eid in (("subj", ev.subject), ("old", ev.old), ("new", ev.new)):
            if key == "subj" and ev.kind == "vendor_swap":
                names[key] = ev.subject.partition(":")[2]
            else:
                names[key] = self.name(eid, style)
        day = _fmt_day(ev.day, self.rng)
        text = self.rng.choice(CHANGE[ev.kind]).format(date=day, **names)
        label = EVENT_LABEL[ev.kind]
        for rid in ev.started + ev.ended:
            rel = self.w.relations[rid]
            if not rel.label.startswith(label):
                continue
            s_form = (self.w.entities[rel.subject].name if ev.kind == "vendor_swap"
                      else self._last_form(rel.subject))
            self.truth.evidence[rid].append([self.doc_id, s_form, self._last_form(rel.object)])
        return text[0].upper() + text[1:]

    def typos(self, text: str, rate: float = 0.15) -> str:
        words = text.split(" ")
        for i, word in enumerate(words):
            if word in TYPOS and self.rng.random() < rate:
                words[i] = TYPOS[word]
        return " ".join(words)

    def close(self, system: str, kind: str, title: str) -> None:
        self.truth.record_doc(self.doc_id, system, kind, title, self.day, self.mentions)
