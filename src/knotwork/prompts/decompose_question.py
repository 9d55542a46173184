"""Multi-hop questions -> sub-questions answerable by one fact lookup each, with dependencies."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.ports import ChatMessage
from knotwork.prompts.base import cut_list, cut_text, system, user

NAME = "decompose_question"
VERSION = "1"

MAX_STEPS = 4


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    known_entities: list[str] = Field(default_factory=list)  # names found in the question


class Step(BaseModel):
    question: Annotated[str, cut_text(300)]
    depends_on: Annotated[list[int], cut_list(MAX_STEPS), Field(max_length=MAX_STEPS)] = Field(
        default_factory=list
    )


class Output(BaseModel):
    steps: Annotated[list[Step], cut_list(MAX_STEPS), Field(max_length=MAX_STEPS)] = Field(
        default_factory=list
    )


_SYSTEM = f"""
Break the user's question into at most {MAX_STEPS} simpler questions, in the order they must
be answered; each must be answerable by looking up one fact about one entity. "depends_on"
lists the positions (0-based) of earlier questions whose answer it needs; write "#0" in the
question text where that answer goes ("Who does #0 report to?"). A question that needs one
lookup becomes a single step.
"""


def render(data: Input) -> list[ChatMessage]:
    text = data.question.strip()
    if data.known_entities:
        text += "\n\nEntities named in it: " + ", ".join(data.known_entities)
    return [system(_SYSTEM), user(text)]
