"""A scripted :class:`LLMClient` for unit tests: replies in order, records every call.

Replies go through the same parse-and-repair path as a real endpoint's text. A reply is raw
text, a pydantic object (serialised), an exception (raised, like a failed endpoint) or a
callable of the call. With the script used up, the fake answers the smallest valid instance
of the requested schema (empty lists, empty strings, zeros, the first enum value).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from knotwork.domain.ports import ChatMessage, LLMError, LLMResult, LLMUsage
from knotwork.infra.llm.base import LLMAccounting, estimate_tokens
from knotwork.infra.llm.parsing import output_schema

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class FakeCall:
    messages: tuple[ChatMessage, ...]
    output: type[BaseModel]
    name: str
    max_tokens: int | None
    schema: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        return "\n".join(m.content for m in self.messages)


FakeReply = str | BaseModel | Exception | Callable[[FakeCall], "str | BaseModel"]


class FakeLLMClient(LLMAccounting):
    def __init__(self, script: Sequence[FakeReply] = (), *,
                 responder: Callable[[FakeCall], str | BaseModel] | None = None,
                 model: str = "fake") -> None:
        super().__init__()
        self._script = list(script)
        self._responder = responder
        self._model = model
        self.calls: list[FakeCall] = []
        self.closed = False

    @property
    def model(self) -> str:
        return self._model

    def add(self, *replies: FakeReply) -> None:
        self._script.extend(replies)

    def close(self) -> None:
        self.closed = True

    def complete(
        self,
        messages: Sequence[ChatMessage],
        output: type[T],
        *,
        name: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMResult[T]:
        call = FakeCall(tuple(messages), output, name, max_tokens, output_schema(output))
        self.calls.append(call)
        reply: FakeReply
        if self._script:
            reply = self._script.pop(0)
        elif self._responder is not None:
            reply = self._responder
        else:
            reply = json.dumps(minimal_instance(call.schema))
        if isinstance(reply, Exception):
            self._failed(1, name, str(reply))
            raise reply if isinstance(reply, LLMError) else LLMError(str(reply)) from reply
        if callable(reply) and not isinstance(reply, BaseModel):
            reply = reply(call)
        text = reply.model_dump_json() if isinstance(reply, BaseModel) else reply
        usage = LLMUsage(prompt_tokens=estimate_tokens(call.prompt),
                         completion_tokens=estimate_tokens(text))
        return self._finish(text, output, usage, 1, name)


def minimal_instance(schema: dict[str, Any]) -> Any:
    """The smallest JSON value valid under a strict schema from ``output_schema``."""
    if "anyOf" in schema:
        options = schema["anyOf"]
        null = next((o for o in options if o.get("type") == "null"), None)
        return None if null is not None else minimal_instance(options[0])
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {k: minimal_instance(v) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [minimal_instance(schema["items"]) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * schema.get("minLength", 0)
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None
