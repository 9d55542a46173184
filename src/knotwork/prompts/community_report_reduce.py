"""Reduce step of a community report: facts or partial summaries -> the community report.

When a community's facts fit the token budget this is the only call (notes are the facts);
otherwise the notes are the map step's partial summaries, each citing fact refs.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.ports import ChatMessage
from knotwork.prompts.base import cut_list, cut_text, system, user

NAME = "community_report_reduce"
VERSION = "1"

MAX_TOPICS = 6
MAX_REFS = 10


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str  # "F3" for a fact, "P2" for a partial summary
    text: str


class Member(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    type: str


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: int = 0
    central: list[Member] = Field(default_factory=list)
    member_count: int = 0
    children: list[str] = Field(default_factory=list)  # titles of sub-communities
    notes: list[Note] = Field(min_length=1)


Topic = Annotated[str, cut_text(60)]
Ref = Annotated[str, cut_text(12)]


class Output(BaseModel):
    title: Annotated[str, cut_text(120)]
    summary: Annotated[str, cut_text(1200)]
    key_topics: Annotated[list[Topic], cut_list(MAX_TOPICS), Field(max_length=MAX_TOPICS)] = Field(
        default_factory=list
    )
    key_refs: Annotated[list[Ref], cut_list(MAX_REFS), Field(max_length=MAX_REFS)] = Field(
        default_factory=list
    )


_SYSTEM = """
You write the report of one community: a group of closely related people, teams, projects and
systems found in a company's documents. From the notes (facts [F..] or partial summaries
[P..]) write:
- title: a short name for the community naming its central entities and what binds them;
- summary: one paragraph (3-6 sentences) on who and what is in it, how they relate, and any
  changes, risks or decisions the notes mention;
- key_topics: a few short topic phrases;
- key_refs: the refs of the notes that matter most, most important first.
Use only the notes; do not add knowledge of your own.
"""


def render(data: Input) -> list[ChatMessage]:
    head = [f"Level {data.level} community with {data.member_count} entities."]
    if data.central:
        head.append("Central entities: " + ", ".join(f"{m.name} ({m.type})" for m in data.central))
    if data.children:
        head.append("Sub-communities: " + "; ".join(data.children))
    notes = "\n".join(f"[{n.ref}] {n.text}" for n in data.notes)
    return [system(_SYSTEM), user("\n".join(head) + "\n\nNotes:\n" + notes)]
