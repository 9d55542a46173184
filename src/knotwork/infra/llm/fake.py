"""A scripted :class:`LLMClient` for unit tests: replies in order, records every call.

Replies go through the same parse-and-repair path as a real endpoint's text. A reply is raw
text, a pydantic object (serialised), an exception (raised, like a failed endpoint) or a
callable of the call. With the script used up, the fake answers the smallest valid instance
of the requested schema (empty lists, empty strings, zeros, the first enum value).

``stream`` takes the next reply from the same script: text is sent word by word (a
:class:`FakeStream` gives the exact deltas, and optionally fails after them); with the script
used up it streams :data:`DEFAULT_STREAM`. Its calls are recorded with ``output=None``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

from pydantic import BaseModel

from knotwork.domain.ports import ChatMessage, LLMError, LLMResult, LLMUsage
from knotwork.infra.llm.base import LLMAccounting, estimate_tokens
from knotwork.infra.llm.parsing import output_schema

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class FakeCall:
    messages: tuple[ChatMessage, ...]
    output: type[BaseModel] | None  # None: a ``stream`` call
    name: str
    max_tokens: int | None
    schema: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        return "\n".join(m.content for m in self.messages)


@dataclass(frozen=True, slots=True)
class FakeStream:
    """A streamed reply: exactly these deltas, then ``error`` raised (as LLMError) if set."""

    deltas: tuple[str, ...]
    error: Exception | None = None

    @property
    def text(self) -> str:
        return "".join(self.deltas)


FakeReply = (str | BaseModel | Exception | FakeStream
             | Callable[[FakeCall], "str | BaseModel | FakeStream"])

DEFAULT_STREAM = "A fake streamed answer."
_WORDS = re.compile(r"\s*\S+\s*|\s+")


class FakeLLMClient(LLMAccounting):
    def __init__(self, script: Sequence[FakeReply] = (), *,
                 responder: Callable[[FakeCall], str | BaseModel | FakeStream] | None = None,
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
        reply = self._reply(call, lambda: json.dumps(minimal_instance(call.schema)))
        if isinstance(reply, FakeStream):
            if reply.error is not None:
                self._fail(reply.error, name)
            reply = reply.text
        text = reply.model_dump_json() if isinstance(reply, BaseModel) else reply
        usage = LLMUsage(prompt_tokens=estimate_tokens(call.prompt),
                         completion_tokens=estimate_tokens(text))
        return self._finish(text, output, usage, 1, name)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        name: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[str]:
        call = FakeCall(tuple(messages), None, name, max_tokens)
        self.calls.append(call)
        reply = self._reply(call, lambda: DEFAULT_STREAM)
        if isinstance(reply, BaseModel):
            reply = reply.model_dump_json()
        script = reply if isinstance(reply, FakeStream) else \
            FakeStream(tuple(_WORDS.findall(reply)))
        sent: list[str] = []
        try:
            for delta in script.deltas:
                sent.append(delta)
                yield delta
        finally:
            text = "".join(sent)
            if script.error is None or len(sent) < len(script.deltas):  # done, or abandoned
                self._finish_stream(text, LLMUsage(prompt_tokens=estimate_tokens(call.prompt),
                                                   completion_tokens=estimate_tokens(text)),
                                    1, name)
        if script.error is not None:
            self._fail(script.error, name)

    def _reply(self, call: FakeCall, default: Callable[[], str]) -> str | BaseModel | FakeStream:
        reply: FakeReply
        if self._script:
            reply = self._script.pop(0)
        elif self._responder is not None:
            reply = self._responder
        else:
            reply = default()
        if isinstance(reply, Exception):
            self._fail(reply, call.name)
        if callable(reply) and not isinstance(reply, BaseModel | FakeStream):
            reply = reply(call)
        assert not isinstance(reply, Exception)
        return reply

    def _fail(self, error: Exception, name: str) -> NoReturn:
        self._failed(1, name, str(error))
        raise error if isinstance(error, LLMError) else LLMError(str(error)) from error


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
