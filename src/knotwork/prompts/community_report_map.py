"""Map step of a community report: one slice of the community's facts -> a partial summary."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.ports import ChatMessage
from knotwork.prompts.base import cut_list, cut_text, system, user

NAME = "community_report_map"
VERSION = "1"

MAX_POINTS = 6
MAX_REFS = 6


class NumberedFact(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str  # "F12": how the output cites it
    text: str


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    central_entities: list[str] = Field(default_factory=list)
    facts: list[NumberedFact] = Field(min_length=1)


Ref = Annotated[str, cut_text(12)]


class KeyPoint(BaseModel):
    text: Annotated[str, cut_text(300)]
    refs: Annotated[list[Ref], cut_list(MAX_REFS), Field(max_length=MAX_REFS)] = Field(
        default_factory=list
    )


class Output(BaseModel):
    summary: Annotated[str, cut_text(800)]
    key_points: Annotated[
        list[KeyPoint], cut_list(MAX_POINTS), Field(max_length=MAX_POINTS)
    ] = Field(default_factory=list)


_SYSTEM = """
You summarise part of a group of related people, teams, projects and systems from a company's
knowledge graph. You get numbered facts. Write a short summary (2-4 sentences) of what they say
together, then the most important points, each citing the refs of the facts it rests on
(e.g. ["F3", "F7"]). Use only the facts given; do not add knowledge of your own.
"""


def render(data: Input) -> list[ChatMessage]:
    lines = [f"[{f.ref}] {f.text}" for f in data.facts]
    head = ("Central entities: " + ", ".join(data.central_entities) + "\n\n"
            if data.central_entities else "")
    return [system(_SYSTEM), user(head + "Facts:\n" + "\n".join(lines))]
