"""A Slack workspace export: channels.json, users.json and ``<channel>/<YYYY-MM-DD>.json``.

Threads are written in date order; a day file is flushed as soon as a later day starts, so
the export is streamed rather than held in memory.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime
from pathlib import Path

from bench.world.docs import Doc, Index, Truth
from bench.world.model import Entity, Event, World
from bench.world.templates import BANTER


def channel_slug(e: Entity) -> str:
    return e.short.lower().replace(" ", "-").replace("/", "-")


class SlackWriter:
    def __init__(self, out: Path, world: World, truth: Truth, index: Index,
                 rng: random.Random) -> None:
        self.dir = out
        out.mkdir(parents=True, exist_ok=True)
        self.w, self.truth, self.idx, self.rng = world, truth, index, rng
        self.channels: dict[str, str] = {}  # name -> id
        self.buffer: dict[tuple[str, date], list[dict[str, object]]] = {}
        self.seq = 0
        self.people = [e.id for e in world.of_kind("person")]

    def channel(self, name: str) -> str:
        if name not in self.channels:
            self.channels[name] = f"C{len(self.channels) + 1:08d}"
        return name

    def _flush(self, before: date | None) -> None:
        for key in sorted(k for k in self.buffer if before is None or k[1] < before):
            name, day = key
            folder = self.dir / name
            folder.mkdir(exist_ok=True)
            (folder / f"{day.isoformat()}.json").write_text(
                json.dumps(self.buffer.pop(key), indent=1, ensure_ascii=False), encoding="utf-8")

    def _doc(self, channel: str, day: date) -> Doc:
        """A thread's writer; its id (``channel/parent_ts``) is fixed up front."""
        self.channel(channel)
        self.seq += 1
        base = int(datetime(day.year, day.month, day.day, 9, tzinfo=UTC).timestamp())
        base += self.rng.randint(0, 8 * 3600)
        doc = Doc(self.truth, self.w, self.rng, f"{channel}/{base}.{self.seq % 1_000_000:06d}",
                  day, chat=True)
        return doc

    def _finish(self, doc: Doc, lines: list[tuple[str, str]], kind: str) -> None:
        """Post ``lines`` (speaker id, text) as one thread."""
        self._flush(doc.day)
        channel, _, parent_ts = doc.doc_id.partition("/")
        base, _, frac = parent_ts.partition(".")
        messages: list[dict[str, object]] = []
        for i, (speaker, text) in enumerate(lines):
            ts = parent_ts if i == 0 else f"{int(base) + 60 * i}.{frac}"
            msg: dict[str, object] = {"type": "message", "user": self.w.entities[speaker].slack_id,
                                      "text": text, "ts": ts}
            if len(lines) > 1:
                msg["thread_ts"] = parent_ts
            messages.append(msg)
            doc.record(speaker, self.w.entities[speaker].name)
        if len(lines) > 1:
            messages[0]["reply_count"] = len(lines) - 1
        self.buffer.setdefault((channel, doc.day), []).extend(messages)
        doc.close("slack", kind, f"#{channel} {doc.day.isoformat()}")

    def _banter(self, doc: Doc) -> str:
        return doc.typos(self.rng.choice(BANTER))

    # ------------------------------------------------------------------ threads
    def team_thread(self, team: str, day: date) -> None:
        w, idx, rng = self.w, self.idx, self.rng
        people = [r.subject for r in idx.subjects("member_of", team, day)]
        if len(people) < 2:
            return
        doc = self._doc(f"team-{channel_slug(w.entities[team])}", day)
        speakers = rng.sample(people, min(len(people), rng.randint(2, 4)))
        lines: list[tuple[str, str]] = []
        for _ in range(rng.randint(3, 8)):
            who = rng.choice(speakers)
            roll = rng.random()
            if roll < 0.4:
                lines.append((who, self._banter(doc)))
                continue
            if roll < 0.6:  # the speaker about themselves
                options = [r for r in (w.at("member_of", who, day), w.at("reports_to", who, day))
                           if r] + idx.objects("based_in", who, day) + \
                    idx.objects("project_lead", who, day)
                rel = rng.choice(options)
                lines.append((who, doc.fact(rel, style="chat", speaker=who)))
                continue
            if roll < 0.8:  # about a teammate
                other = rng.choice(people)
                options = [r for r in (w.at("reports_to", other, day),
                                       w.at("member_of", other, day)) if r] + \
                    idx.objects("based_in", other, day)
                lead = idx.lead_of("team_lead", team, day)
                if lead and other == lead.subject:
                    options.append(lead)
                lines.append((who, doc.fact(rng.choice(options), style="chat")))
                continue
            owned = idx.objects("maintains", team, day)
            systems = [r.object for r in owned]
            rels = owned + [w.relations[rid] for s in systems for label in ("depends_on", "uses")
                            for rid in idx.by_subject[label].get(s, [])]
            if rels:
                lines.append((who, doc.typos(doc.fact(rng.choice(rels), style="chat"), 0.1)))
        if not lines:
            return
        self._finish(doc, lines, "team_thread")

    def project_thread(self, project: str, day: date) -> None:
        w, idx, rng = self.w, self.idx, self.rng
        crew = [w.relations[r].subject for r in idx.by_object["project_member"].get(project, [])]
        if not crew:
            return
        doc = self._doc(f"proj-{channel_slug(w.entities[project])}", day)
        lines: list[tuple[str, str]] = []
        lead = idx.lead_of("project_lead", project, day)
        if lead and rng.random() < 0.5:
            lines.append((lead.subject, doc.fact(lead, style="chat", speaker=lead.subject)))
        for _ in range(rng.randint(2, 6)):
            who = rng.choice(crew)
            roll = rng.random()
            if roll < 0.45:
                lines.append((who, self._banter(doc)))
            elif roll < 0.7 and lead:
                lines.append((who, doc.fact(lead, style="chat")))
            else:
                deps = [w.relations[rid] for label in ("project_depends", "project_uses")
                        for rid in idx.by_subject[label].get(project, [])]
                if deps:
                    lines.append((who, doc.fact(rng.choice(deps), style="casual")))
        if lines:
            self._finish(doc, lines, "project_thread")

    def announcement(self, ev: Event) -> None:
        doc = self._doc("general", ev.day)
        poster = self.w.ceo
        text = doc.change(ev)
        if ev.kind == "vendor_swap":
            text = f"Vendor news at {self.w.company.name}: {text}"
            doc.record(self.w.company.id, self.w.company.name)
        lines = [(poster, text)]
        for _ in range(self.rng.randint(0, 3)):
            lines.append((self.rng.choice(self.people),
                          self.rng.choice(["congrats!", ":tada:", "welcome!", "nice",
                                           "thanks for the heads-up", "makes sense"])))
        self._finish(doc, lines, "announcement")

    def banter(self, day: date) -> None:
        """#random chat: no facts, but confusable people named side by side."""
        w, rng = self.w, self.rng
        doc = self._doc("random", day)
        speakers = rng.sample(self.people, min(len(self.people), 3))
        lines = [(rng.choice(speakers), self._banter(doc)) for _ in range(rng.randint(2, 5))]
        if w.confusables and rng.random() < 0.5:
            a, b = rng.choice(w.confusables)
            lines.append((rng.choice(speakers),
                          f"{doc.name(a, 'chat')} and {doc.name(b, 'chat')} are both out today"))
        self._finish(doc, lines, "banter")

    # ------------------------------------------------------------------ export files
    def close(self) -> None:
        self._flush(None)
        users = [{
            "id": e.slack_id, "team_id": "T0BENCH01", "name": e.handle, "deleted": False,
            "real_name": e.name, "is_bot": False,
            "profile": {"title": e.role, "real_name": e.name, "display_name": e.handle},
        } for e in self.w.of_kind("person")]
        (self.dir / "users.json").write_text(json.dumps(users, indent=1), encoding="utf-8")
        channels = [{
            "id": cid, "name": name, "created": 1672531200, "creator": "", "is_archived": False,
            "is_general": name == "general", "members": [],
            "topic": {"value": "", "creator": "", "last_set": 0},
            "purpose": {"value": "", "creator": "", "last_set": 0},
        } for name, cid in sorted(self.channels.items())]
        (self.dir / "channels.json").write_text(json.dumps(channels, indent=1),
                                                encoding="utf-8")
