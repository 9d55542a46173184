"""Questions with gold answers and supporting documents, by category.

Categories: local (one fact), multi_hop (two facts chained), temporal (a past value, asked
with ``as_of``), global (a list over a group), aggregation (a count), unanswerable (about
things the world does not contain, or facts no document states).
Only facts that some document states are asked about.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, timedelta

from bench.world.docs import EVENT_LABEL, Index, Truth
from bench.world.model import END, START, Relation, World
from bench.world.names import syllable_name

NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen"]

Question = dict[str, object]


class _Maker:
    def __init__(self, w: World, idx: Index, truth: Truth, rng: random.Random) -> None:
        self.w, self.idx, self.truth, self.rng = w, idx, truth, rng

    def docs(self, *rels: Relation | None) -> list[str]:
        out: dict[str, None] = {}
        for r in rels:
            for row in self.truth.evidence.get(r.id, []) if r else []:
                out[row[0]] = None
        return list(out)

    def stated(self, r: Relation | None) -> bool:
        return r is not None and bool(self.truth.evidence.get(r.id))

    def answers(self, eid: str) -> list[str]:
        """Acceptable answer strings: the name, and multi-word forms used in the documents."""
        e = self.w.entities[eid]
        forms = [e.name] + [f for f in sorted(self.truth.forms.get(eid, {}))
                            if (" " in f or e.kind != "person") and f != e.name]
        if e.kind == "team":
            forms = [f for f in forms if f.lower() != e.short.lower()]
        return forms

    def q(self, cat: str, text: str, gold: list[str], docs: list[str], *,
          as_of: date | None = None, wrong: list[str] | None = None,
          items: list[list[str]] | None = None, match: str = "cited") -> Question:
        return {"category": cat, "question": text, "answers": gold, "supporting_docs": docs,
                "as_of": as_of.isoformat() if as_of else None, "wrong_answers": wrong or [],
                "items": items or [], "match": match}

    # ------------------------------------------------------------------ local
    def local(self) -> list[Question]:
        w, idx, out = self.w, self.idx, []
        for t in w.of_kind("team"):
            r = idx.lead_of("team_lead", t.id, END)
            if self.stated(r):
                out.append(self.q("local", f"Who leads the {t.name}?", self.answers(r.subject),
                                  self.docs(r)))
            r = w.at("team_office", t.id, END)
            if self.stated(r):
                out.append(self.q("local", f"Where is the {t.name} based?",
                                  self.answers(r.object), self.docs(r)))
        for p in w.of_kind("person"):
            r = w.at("reports_to", p.id, END)
            if self.stated(r):
                out.append(self.q("local", f"Who does {p.name} report to?",
                                  self.answers(r.object), self.docs(r)))
            r = w.at("member_of", p.id, END)
            if self.stated(r):
                out.append(self.q("local", f"Which team is {p.name} on?",
                                  self.answers(r.object), self.docs(r)))
        for pr in w.of_kind("project"):
            r = idx.lead_of("project_lead", pr.id, END)
            if self.stated(r):
                out.append(self.q("local", f"Who leads {pr.name}?", self.answers(r.subject),
                                  self.docs(r)))
        for s in w.of_kind("system"):
            for r in idx.subjects("maintains", s.id, END)[:1]:
                if self.stated(r):
                    out.append(self.q("local", f"Which team maintains the {s.name}?",
                                      self.answers(r.subject), self.docs(r)))
        return out

    # ------------------------------------------------------------------ multi-hop
    def multi_hop(self) -> list[Question]:
        w, idx, out = self.w, self.idx, []
        for pr in w.of_kind("project"):
            lead = idx.lead_of("project_lead", pr.id, END)
            boss = w.at("reports_to", lead.subject, END) if lead else None
            if self.stated(lead) and self.stated(boss):
                out.append(self.q("multi_hop",
                                  f"Who is the manager of the person who leads {pr.name}?",
                                  self.answers(boss.object), self.docs(lead, boss)))
        for s in w.of_kind("system"):
            owner = next(iter(idx.subjects("maintains", s.id, END)), None)
            if not self.stated(owner):
                continue
            office = w.at("team_office", owner.subject, END)
            if self.stated(office):
                out.append(self.q("multi_hop",
                                  f"Where is the team that maintains the {s.name} based?",
                                  self.answers(office.object), self.docs(owner, office)))
            lead = idx.lead_of("team_lead", owner.subject, END)
            if self.stated(lead):
                out.append(self.q("multi_hop", f"Who leads the team that maintains the {s.name}?",
                                  self.answers(lead.subject), self.docs(owner, lead)))
        for p in w.of_kind("person"):
            team = w.at("member_of", p.id, END)
            div = w.at("team_division", team.object, END) if team else None
            if self.stated(team) and self.stated(div):
                out.append(self.q("multi_hop",
                                  f"Which division is the team of {p.name} part of?",
                                  self.answers(div.object), self.docs(team, div)))
        return out

    # ------------------------------------------------------------------ temporal
    def temporal(self) -> list[Question]:
        w, out = self.w, []
        phr = {"lead_change": "Who led the {s} {when}?",
               "transfer": "Which team was {s} on {when}?",
               "office_move": "Where was the {s} based {when}?",
               "project_lead_change": "Who led {s} {when}?",
               "reorg": "Which division was the {s} part of {when}?",
               "vendor_swap": "Which {cat} vendor did {s} use {when}?"}
        for ev in w.events:
            old = next((w.relations[r] for r in ev.ended
                        if w.relations[r].label.startswith(EVENT_LABEL[ev.kind])), None)
            if old is None or not self.stated(old):
                continue
            lo = max(old.start or START, START)
            hi = ev.day - timedelta(days=1)
            if hi < lo:
                continue
            day = lo + (hi - lo) / 2
            when = self._when(day, lo, hi)
            old_ans, new_ans = self.answers(ev.old), self.answers(ev.new)
            subj = w.company if ev.kind == "vendor_swap" else w.entities[ev.subject]
            text = phr[ev.kind].format(s=subj.name, when=when,
                                       cat=ev.subject.partition(":")[2])
            out.append(self.q("temporal", text, old_ans, self.docs(old), as_of=day,
                              wrong=new_ans))
        return out

    @staticmethod
    def _when(day: date, lo: date, hi: date) -> str:
        first = day.replace(day=1)
        nxt = (first + timedelta(days=32)).replace(day=1)
        if first >= lo and nxt - timedelta(days=1) <= hi:
            return f"in {day:%B} {day.year}"
        return f"on {day:%B} {day.day}, {day.year}"

    # ------------------------------------------------------------------ global
    def global_(self) -> list[Question]:
        w, idx, out = self.w, self.idx, []
        for d in w.of_kind("division"):
            rels = [r for r in idx.subjects("team_division", d.id, END) if self.stated(r)]
            if rels:
                out.append(self.q("global", f"Which teams are part of the {d.name}?",
                                  [], self.docs(*rels),
                                  items=[self.answers(r.subject) for r in rels]))
        for o in w.of_kind("office"):
            rels = [r for r in idx.subjects("team_office", o.id, END) if self.stated(r)]
            if len(rels) >= 2:
                out.append(self.q("global", f"Which teams are based in {o.name}?", [],
                                  self.docs(*rels), items=[self.answers(r.subject) for r in rels]))
        divs = w.of_kind("division")
        out.append(self.q("global", f"What are the divisions of {w.company.name}?", [],
                          self.docs(*[idx.lead_of("division_head", d.id, END) for d in divs]),
                          items=[self.answers(d.id) for d in divs]))
        techs = {}
        for s in w.of_kind("system"):
            for r in self.idx.objects("uses", s.id, END):
                if self.stated(r):
                    techs.setdefault(r.object, r)
        if techs:
            out.append(self.q("global", "Which technologies do our systems use?", [],
                              self.docs(*techs.values()),
                              items=[self.answers(t) for t in techs]))
        return out

    # ------------------------------------------------------------------ aggregation
    def aggregation(self) -> list[Question]:
        w, idx, out = self.w, self.idx, []
        for t in w.of_kind("team"):
            rels = idx.subjects("member_of", t.id, END)
            if rels and all(self.stated(r) for r in rels):
                out.append(self.q("aggregation", f"How many people are on the {t.name}?",
                                  self._count(len(rels)), self.docs(*rels), match="answer"))
            owned = idx.objects("maintains", t.id, END)
            if owned and all(self.stated(r) for r in owned):
                out.append(self.q("aggregation", f"How many systems does the {t.name} maintain?",
                                  self._count(len(owned)), self.docs(*owned), match="answer"))
        for d in w.of_kind("division"):
            rels = idx.subjects("team_division", d.id, END)
            if rels and all(self.stated(r) for r in rels):
                out.append(self.q("aggregation", f"How many teams are in the {d.name}?",
                                  self._count(len(rels)), self.docs(*rels), match="answer"))
        return out

    @staticmethod
    def _count(n: int) -> list[str]:
        return [str(n)] + ([NUMBER_WORDS[n]] if n < len(NUMBER_WORDS) else [])

    # ------------------------------------------------------------------ unanswerable
    def unanswerable(self, n: int) -> list[Question]:
        w, rng, out = self.w, self.rng, []
        names = {e.name for e in w.entities.values()}
        people = w.of_kind("person")
        families = sorted({p.family for p in people})
        givens = sorted({p.given for p in people})
        for _ in range(n):
            kind = len(out) % 5
            if kind == 0:
                word = syllable_name(rng, 2)
                text = f"Who leads Project {word}?"
            elif kind == 1:
                full = f"{rng.choice(givens)} {rng.choice(families)}"
                if full in names:
                    continue
                text = f"Who does {full} report to?"
            elif kind == 2:
                text = f"Which team maintains the {syllable_name(rng, 2)} Service?"
            elif kind == 3:
                text = f"What is the annual salary of {rng.choice(people).name}?"
            else:
                text = f"Where is the {syllable_name(rng, 2)} Team based?"
            out.append(self.q("unanswerable", text, [], []))
        return out


def make_questions(w: World, idx: Index, truth: Truth, rng: random.Random,
                   per_category: int = 12) -> list[Question]:
    maker = _Maker(w, idx, truth, rng)
    makers: list[tuple[str, Callable[[], list[Question]]]] = [
        ("local", maker.local), ("multi_hop", maker.multi_hop), ("temporal", maker.temporal),
        ("global", maker.global_), ("aggregation", maker.aggregation)]
    out: list[Question] = []
    for _cat, make in makers:
        pool = make()
        rng.shuffle(pool)
        out.extend(pool[:per_category])
    out.extend(maker.unanswerable(per_category))
    for i, q in enumerate(out):
        q["id"] = f"q{i:05d}"
    return out
