"""Entity summaries: what the graph knows about each of several entities, one call."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.ports import ChatMessage
from knotwork.prompts.base import cut_list, cut_text, system, user

NAME = "entity_summary"
VERSION = "1"

MAX_ENTITIES = 12


class Subject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str  # "E1": how the output refers to it
    name: str
    type: str
    facts: list[str] = Field(min_length=1)
    previous_summary: str = ""


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entities: list[Subject] = Field(min_length=1, max_length=MAX_ENTITIES)


class Summary(BaseModel):
    ref: Annotated[str, cut_text(12)]
    summary: Annotated[str, cut_text(500)]


class Output(BaseModel):
    summaries: Annotated[list[Summary], cut_list(MAX_ENTITIES), Field(max_length=MAX_ENTITIES)] = (
        Field(default_factory=list)
    )


_SYSTEM = """
You write short summaries of entities (people, teams, projects, systems) in a company's
knowledge graph. For each entity write 1-3 sentences saying who or what it is and its most
important current relations, using only its facts (and its previous summary where the facts do
not contradict it). Refer to each entity by its ref.
"""


def render(data: Input) -> list[ChatMessage]:
    blocks = []
    for entity in data.entities:
        lines = [f"[{entity.ref}] {entity.name} ({entity.type})"]
        if entity.previous_summary:
            lines.append(f"Previous summary: {entity.previous_summary}")
        lines.extend(f"- {fact}" for fact in entity.facts)
        blocks.append("\n".join(lines))
    return [system(_SYSTEM), user("\n\n".join(blocks))]
