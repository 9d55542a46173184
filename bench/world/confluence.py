"""Confluence Cloud REST v2 page objects (storage-format XHTML), one JSON file per page."""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, timedelta
from html import escape
from pathlib import Path

from bench.world.docs import Doc, Index, Truth, _fmt_day
from bench.world.model import START, Event, World
from bench.world.templates import FILLER, TOPICS

SPACE_ID = "131072"
BASE = "https://example-corp.atlassian.net/wiki"


def account_id(eid: str) -> str:
    return "712020:" + f"{int(eid.split(':')[1]):08x}-5eed-4c0f-9a1b-bench"


class Page:
    """Storage-format XHTML built block by block."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def h(self, level: int, text: str) -> None:
        self.parts.append(f"<h{level}>{escape(text)}</h{level}>")

    def p(self, *sentences: str, raw: str = "") -> None:
        self.parts.append(f"<p>{raw}{escape(' '.join(s for s in sentences if s))}</p>")

    def ul(self, items: list[str]) -> None:
        if items:
            self.parts.append("<ul>" + "".join(f"<li><p>{escape(i)}</p></li>" for i in items)
                              + "</ul>")

    def table(self, headers: list[str], rows: list[list[str]]) -> None:
        head = "".join(f"<th><p>{escape(h)}</p></th>" for h in headers)
        body = "".join("<tr>" + "".join(f"<td><p>{escape(c)}</p></td>" for c in row) + "</tr>"
                       for row in rows)
        self.parts.append('<table data-layout="default"><tbody>'
                          f"<tr>{head}</tr>{body}</tbody></table>")

    def info(self, text: str) -> None:
        self.parts.append('<ac:structured-macro ac:name="info"><ac:rich-text-body>'
                          f"<p>{escape(text)}</p></ac:rich-text-body></ac:structured-macro>")

    @staticmethod
    def user(eid: str) -> str:
        return f'<ac:link><ri:user ri:account-id="{account_id(eid)}" /></ac:link>'


class ConfluenceWriter:
    def __init__(self, out: Path, world: World, truth: Truth, index: Index,
                 rng: random.Random) -> None:
        self.dir = out
        out.mkdir(parents=True, exist_ok=True)
        self.w, self.truth, self.idx, self.rng = world, truth, index, rng
        self.next_id = 4_000_000

    # ------------------------------------------------------------------ plumbing
    def _doc(self, day: date) -> Doc:
        self.next_id += 1
        return Doc(self.truth, self.w, self.rng, str(self.next_id), day)

    def _write(self, doc: Doc, kind: str, title: str, page: Page, author: str) -> None:
        created = datetime.combine(doc.day, datetime.min.time(), UTC) + timedelta(
            hours=self.rng.randint(8, 17), minutes=self.rng.randint(0, 59))
        obj = {
            "id": doc.doc_id, "status": "current", "title": title, "spaceId": SPACE_ID,
            "parentId": "4000000", "parentType": "page", "authorId": account_id(author),
            "ownerId": account_id(author),
            "createdAt": created.isoformat().replace("+00:00", "Z"),
            "version": {"number": 1, "message": "", "minorEdit": False,
                        "createdAt": created.isoformat().replace("+00:00", "Z"),
                        "authorId": account_id(author)},
            "body": {"storage": {"representation": "storage", "value": "".join(page.parts)}},
            "_links": {"webui": f"/spaces/ENG/pages/{doc.doc_id}", "base": BASE},
        }
        path = self.dir / f"{doc.doc_id}.json"
        path.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
        doc.close("confluence", kind, title)

    def write_users(self) -> None:
        users = {account_id(e.id): e.name for e in self.w.of_kind("person")}
        (self.dir / "users.json").write_text(json.dumps(users, indent=0), encoding="utf-8")

    def _filler(self) -> str:
        return self.rng.choice(FILLER).format(topic=self.rng.choice(TOPICS))

    def _evidence(self, doc: Doc, rid: str, s_form: str, o_form: str) -> None:
        self.truth.evidence[rid].append([doc.doc_id, s_form, o_form])

    # ------------------------------------------------------------------ pages
    def team_page(self, team: str, day: date) -> None:
        w, idx, doc, page = self.w, self.idx, self._doc(day), Page()
        t = w.entities[team]
        page.h(1, t.name)
        doc.record(team, t.name)
        lead = idx.lead_of("team_lead", team, day)
        sentences = [doc.fact(r) for r in (lead, w.at("team_division", team, day),
                                           w.at("team_office", team, day)) if r]
        self.rng.shuffle(sentences)
        page.p(*sentences)
        members = [r for r in idx.subjects("member_of", team, day)
                   if not lead or r.subject != lead.subject]
        page.h(2, self.rng.choice(["Members", "Who we are", "Team"]))
        if self.rng.random() < 0.5:
            rows = []
            for r in members:
                person = w.entities[r.subject]
                form = doc.name(person.id)
                self._evidence(doc, r.id, form, t.name)
                rows.append([form, person.role])
            page.table(["Name", "Role"], rows)
        else:
            items = []
            for r in members:
                form = doc.name(r.subject)
                self._evidence(doc, r.id, form, t.name)
                items.append(f"{form} ({w.entities[r.subject].role})")
            page.ul(items)
        owned = idx.objects("maintains", team, day)
        if owned:
            page.h(2, self.rng.choice(["What we own", "Responsibilities", "Services"]))
            page.ul([doc.fact(r) for r in owned])
        past = [w.relations[rid] for rid in idx.by_object["team_lead"].get(team, [])
                if w.relations[rid].end is not None and w.relations[rid].end <= day]
        if past:
            page.h(2, "History")
            for r in past:
                who = doc.name(r.subject)
                self._evidence(doc, r.id, who, t.name)
                page.p(self.rng.choice([
                    f"Until {_fmt_day(r.end, self.rng)}, the team was led by {who}.",  # type: ignore[arg-type]
                    f"{who} led the {t.name} until {_fmt_day(r.end, self.rng)}.",  # type: ignore[arg-type]
                ]))
        page.p(self._filler())
        self._write(doc, "team_page", f"{t.name} — Team Page", page, lead.subject if lead else w.ceo)

    def division_page(self, division: str, day: date) -> None:
        w, idx, doc, page = self.w, self.idx, self._doc(day), Page()
        d = w.entities[division]
        page.h(1, d.name)
        doc.record(division, d.name)
        head = idx.lead_of("division_head", division, day)
        page.p(doc.fact(head) if head else "", self._filler())
        rows = []
        for r in idx.subjects("team_division", division, day):
            team = w.entities[r.subject]
            doc.record(team.id, team.name)
            self._evidence(doc, r.id, team.name, d.name)
            row = [team.name, "", ""]
            lead = idx.lead_of("team_lead", team.id, day)
            if lead:
                row[1] = doc.name(lead.subject)
                self._evidence(doc, lead.id, row[1], team.name)
            office = w.at("team_office", team.id, day)
            if office:
                row[2] = doc.name(office.object)
                self._evidence(doc, office.id, team.name, row[2])
            rows.append(row)
        page.h(2, "Teams")
        page.table(["Team", "Lead", "Office"], rows)
        self._write(doc, "division_page", f"{d.name} overview", page,
                    head.subject if head else w.ceo)

    def directory(self, division: str, day: date) -> None:
        w, idx, doc, page = self.w, self.idx, self._doc(day), Page()
        d = w.entities[division]
        title = f"People directory — {d.name} (as of {day.isoformat()})"
        page.h(1, title)
        doc.record(division, d.name)
        page.info(f"This snapshot reflects the organisation on {_fmt_day(day, self.rng)}.")
        rows = []
        for tr in idx.subjects("team_division", division, day):
            team = w.entities[tr.subject]
            for mr in idx.subjects("member_of", team.id, day):
                person = w.entities[mr.subject]
                name = doc.name(person.id)
                doc.record(team.id, team.name)
                self._evidence(doc, mr.id, name, team.name)
                row = [name, person.role, team.name, "", ""]
                boss = w.at("reports_to", person.id, day)
                if boss:
                    row[3] = doc.name(boss.object)
                    self._evidence(doc, boss.id, name, row[3])
                based = idx.objects("based_in", person.id, day)
                if based:
                    row[4] = doc.name(based[0].object)
                    self._evidence(doc, based[0].id, name, row[4])
                rows.append(row)
        page.table(["Name", "Role", "Team", "Manager", "Location"], rows)
        self._write(doc, "directory", title, page, w.ceo)

    def charter(self, project: str, day: date) -> None:
        w, idx, doc, page = self.w, self.idx, self._doc(day), Page()
        pr = w.entities[project]
        page.h(1, f"{pr.name} — Charter")
        doc.record(project, pr.name)
        lead = idx.lead_of("project_lead", project, day)
        page.p(f"Goal: {pr.category}.", doc.fact(lead) if lead else "")
        page.h(2, "People")
        items = []
        for r in [w.relations[rid] for rid in idx.by_object["project_member"].get(project, [])]:
            if lead and r.subject == lead.subject:
                continue
            if self.rng.random() < 0.5:
                items.append(doc.fact(r, pronoun=False))
            else:
                form = doc.name(r.subject)
                self._evidence(doc, r.id, form, pr.name)
                items.append(f"{form} — contributor")
        page.ul(items)
        page.h(2, "Dependencies")
        deps = [w.relations[rid] for label in ("project_depends", "project_uses")
                for rid in idx.by_subject[label].get(project, [])]
        page.ul([doc.fact(r) for r in deps])
        self._write(doc, "charter", f"{pr.name} — Charter", page,
                    lead.subject if lead else w.ceo)

    def system_page(self, system: str, day: date) -> None:
        w, idx, doc, page = self.w, self.idx, self._doc(day), Page()
        s = w.entities[system]
        page.h(1, s.name)
        doc.record(system, s.name)
        rels = idx.subjects("maintains", system, day) + [
            w.relations[rid] for label in ("uses", "depends_on")
            for rid in idx.by_subject[label].get(system, [])]
        sentences = [doc.fact(r) for r in rels]
        self.rng.shuffle(sentences)
        page.p(*sentences)
        owner = idx.subjects("maintains", system, day)
        lead = idx.lead_of("team_lead", owner[0].subject, day) if owner else None
        if lead:
            page.p(f"Escalation: page {doc.name(lead.subject)} if on-call does not respond.")
        page.p(self._filler())
        self._write(doc, "system_page", f"{s.name} — Overview", page, w.ceo)

    def announcement(self, ev: Event) -> None:
        w, doc, page = self.w, self._doc(ev.day), Page()
        title = self.rng.choice(["Org update", "Announcement", "Change notice"]) + \
            f" — {ev.day.isoformat()}"
        page.h(1, title)
        page.p(doc.change(ev), self._filler())
        if ev.kind == "lead_change":
            rel = w.at("reports_to", ev.new, ev.day)
            if rel:
                page.p(doc.fact(rel))
        self._write(doc, "announcement", title, page, w.ceo)

    def vendor_page(self, category: str, day: date) -> None:
        w, doc, page = self.w, self._doc(day), Page()
        company = w.company
        title = f"Vendor review: {category}"
        page.h(1, title)
        doc.record(company.id, company.name)
        page.p(f"This page tracks the {category} vendors of {company.name}.")
        rels = [w.relations[r] for r in w.timeline.get((f"vendor:{category}", company.id), [])]
        current = [r for r in rels if r.holds(day)]
        if current:
            page.p(doc.fact(current[0], pronoun=False))
        rows = []
        for r in rels:
            form = doc.name(r.object)
            self._evidence(doc, r.id, company.name, form)
            rows.append([form, r.start.isoformat() if r.start else "before 2023",
                         r.end.isoformat() if r.end else "current"])
        page.table(["Vendor", "From", "Until"], rows)
        self._write(doc, "vendor_page", title, page, w.ceo)

    def meeting_notes(self, team: str, day: date) -> None:
        w, idx, doc, page = self.w, self.idx, self._doc(day), Page()
        t = w.entities[team]
        title = f"{t.name} weekly sync — {day.isoformat()}"
        page.h(1, title)
        doc.record(team, t.name)
        people = [r.subject for r in idx.subjects("member_of", team, day)]
        attendees = self.rng.sample(people, min(len(people), self.rng.randint(2, 5)))
        if not attendees:
            return
        links = "".join(Page.user(a) + ", " for a in attendees[:2])
        for a in attendees[:2]:
            doc.record(a, w.entities[a].name)
        rest = ", ".join(doc.name(a, "casual") for a in attendees[2:])
        page.p(rest, raw="Attendees: " + links)
        page.h(2, "Updates")
        updates = []
        for a in attendees:
            options = [r for r in (w.at("reports_to", a, day),) if r] + \
                idx.objects("based_in", a, day) + idx.objects("project_lead", a, day) + \
                idx.objects("project_member", a, day)
            if options:
                updates.append(doc.fact(self.rng.choice(options), style="casual"))
        owned = idx.objects("maintains", team, day)
        if owned:
            updates.append(doc.fact(self.rng.choice(owned), style="casual"))
        page.ul(updates)
        page.h(2, "Discussion")
        page.p(self._filler(), self._filler(), self._filler())
        page.h(2, "Action items")
        page.ul([f"{doc.name(a, 'casual')} to follow up on the {self.rng.choice(TOPICS)}"
                 for a in attendees[:3]])
        self._write(doc, "meeting_notes", title, page, attendees[0])

    def postmortem(self, system: str, day: date) -> None:
        w, idx, doc, page = self.w, self.idx, self._doc(day), Page()
        s = w.entities[system]
        title = f"Postmortem: {s.name} outage on {day.isoformat()}"
        page.h(1, title)
        doc.record(system, s.name)
        deps = [w.relations[r] for r in idx.by_subject["depends_on"].get(system, [])] or [
            w.relations[r] for r in idx.by_subject["uses"].get(system, [])]
        page.p(f"The {s.name} was degraded for {self.rng.randint(7, 190)} minutes.",
               doc.fact(deps[0]) if deps else "",
               "The root cause was on that side; see the timeline below.")
        owner = idx.subjects("maintains", system, day)
        if owner:
            lead = idx.lead_of("team_lead", owner[0].subject, day)
            page.p(doc.fact(owner[0]),
                   f"{doc.name(lead.subject)} was the incident commander." if lead else "")
        page.h(2, "Follow-ups")
        page.ul([self._filler() for _ in range(3)])
        self._write(doc, "postmortem", title, page, w.ceo)


__all__ = ["START", "ConfluenceWriter", "account_id"]
