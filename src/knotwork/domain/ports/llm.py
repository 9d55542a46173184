"""The LLM client port (optional: Knotwork works without one)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

# --------------------------------------------------------------------------- LLM (optional)


class ChatRole(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: ChatRole
    content: str


class LLMUsage(BaseModel):
    """Tokens of one call (as the endpoint reports them; estimated when it does not)."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


OutputT = TypeVar("OutputT", bound=BaseModel)


class LLMResult(BaseModel, Generic[OutputT]):
    """One structured completion. ``value`` is None when the output stayed invalid after
    repair (the client logged ``llm.output_dropped``); transport failures raise LLMError."""

    value: OutputT | None
    usage: LLMUsage = Field(default_factory=LLMUsage)
    attempts: int = 1  # HTTP requests made: 1 + retries
    repaired: bool = False  # the JSON needed fixing (fences, trailing text, brackets...)
    error: str | None = None


class LLMStats(BaseModel):
    """Running totals of one client (what the benchmark prints)."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0  # complete() and stream() invocations
    requests: int = 0  # HTTP requests, retries included
    retries: int = 0
    failures: int = 0  # calls that raised LLMError
    repaired: int = 0
    dropped: int = 0  # calls whose output was invalid even after repair
    prompt_tokens: int = 0
    completion_tokens: int = 0


class LLMError(RuntimeError):
    """The endpoint failed after the bounded retries (timeout, connection, HTTP status)."""


@runtime_checkable
class LLMClient(Protocol):
    """Chat completion constrained to a JSON schema, parsed into a pydantic model (or, with
    ``stream``, free text delivered as it is generated).

    Retries timeouts, connection errors, 429 and 5xx with backoff (at most
    ``llm_max_retries``); repairs invalid JSON (fences, trailing text, missing brackets) or
    drops it with a structured log line. Synchronous, like every port.
    """

    @property
    def model(self) -> str: ...

    @property
    def stats(self) -> LLMStats: ...

    def complete(
        self,
        messages: Sequence[ChatMessage],
        output: type[OutputT],
        *,
        name: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMResult[OutputT]:
        """``name`` (the prompt's name and version) goes in logs and the schema name."""
        ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        name: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[str]:
        """Free text, streamed: the text deltas as the endpoint sends them (lazy: nothing is
        sent before the first ``next``). Failures before the first delta are retried like
        ``complete``; any failure raises LLMError. Counted in ``stats`` once it ends (an empty
        text counts as dropped); closing the iterator early closes the connection."""
        ...

    def close(self) -> None: ...
