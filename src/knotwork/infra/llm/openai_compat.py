"""An OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp server, Ollama...).

Plain ``httpx``: one POST per attempt to ``{base_url}/chat/completions`` with the strict JSON
schema as ``response_format``. Timeouts, connection errors, 429 and 5xx are retried with
exponential backoff and jitter (``Retry-After`` honoured, capped); other 4xx fail at once.
``stream`` sends ``stream: true`` (free text, no schema) and yields the content deltas of the
Server-Sent ``data: {...}`` chunks until ``data: [DONE]``.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from knotwork.domain.ports import ChatMessage, ChatRole, LLMError, LLMResult, LLMUsage
from knotwork.infra.llm.base import LLMAccounting, estimate_tokens, log
from knotwork.infra.llm.parsing import output_schema
from knotwork.observability.tracing import span
from knotwork.settings import LLMJsonMode

T = TypeVar("T", bound=BaseModel)

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAICompatClient(LLMAccounting):
    def __init__(
        self,
        base_url: str,
        *,
        model: str = "default",
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        json_mode: LLMJsonMode = LLMJsonMode.JSON_SCHEMA,
        backoff_base_s: float = 0.5,
        max_backoff_s: float = 20.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__()
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._max_retries = max_retries
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._json_mode = json_mode
        self._backoff_base = backoff_base_s
        self._max_backoff = max_backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(timeout=httpx.Timeout(timeout_s), headers=headers,
                                  transport=transport)

    @property
    def model(self) -> str:
        return self._model

    def close(self) -> None:
        self._http.close()

    # ------------------------------------------------------------------ request
    def _body(self, messages: Sequence[ChatMessage], output: type[BaseModel], name: str,
              max_tokens: int | None, temperature: float | None) -> dict[str, Any]:
        schema = output_schema(output)
        wire = [{"role": m.role.value, "content": m.content} for m in messages]
        body: dict[str, Any] = {
            "model": self._model,
            "messages": wire,
            "max_tokens": max_tokens or self._max_tokens,
            "temperature": self._temperature if temperature is None else temperature,
        }
        if self._json_mode is LLMJsonMode.JSON_SCHEMA:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": _schema_name(name or output.__name__), "schema": schema,
                "strict": True}}
        elif self._json_mode is LLMJsonMode.JSON_OBJECT:
            body["response_format"] = {"type": "json_object", "schema": schema}
        else:
            note = ("Reply with one JSON object and nothing else. It must match this JSON "
                    "schema:\n" + json.dumps(schema, separators=(",", ":")))
            if wire and wire[0]["role"] == ChatRole.SYSTEM.value:
                wire[0] = {"role": "system", "content": wire[0]["content"] + "\n\n" + note}
            else:
                wire.insert(0, {"role": "system", "content": note})
        return body

    def _schema_rejected(self, response: httpx.Response) -> bool:
        """A server that does not know ``json_schema`` response formats (an error naming
        ``response_format`` and ``json_schema``; llama-cpp-python answers 500): switch this
        client to ``json_object`` with the schema."""
        text = response.text
        if self._json_mode is not LLMJsonMode.JSON_SCHEMA or response.status_code < 400 \
                or "response_format" not in text or "json_schema" not in text:
            return False
        log.warning("llm.json_mode_fallback", to=LLMJsonMode.JSON_OBJECT.value,
                    status=response.status_code)
        self._json_mode = LLMJsonMode.JSON_OBJECT
        return True

    @property
    def json_mode(self) -> LLMJsonMode:
        return self._json_mode

    def _wait(self, attempt: int, response: httpx.Response | None) -> float:
        delay: float = min(self._max_backoff, self._backoff_base * 2 ** attempt)
        delay *= 0.5 + random.random() / 2
        if response is not None:
            after = response.headers.get("retry-after")
            if after is not None:
                try:
                    delay = min(self._max_backoff, max(0.0, float(after)))
                except ValueError:
                    pass
        return delay

    def complete(
        self,
        messages: Sequence[ChatMessage],
        output: type[T],
        *,
        name: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMResult[T]:
        with span(f"knotwork.llm.{name or 'complete'}"):
            return self._complete(messages, output, name, max_tokens, temperature)

    def _complete(self, messages: Sequence[ChatMessage], output: type[T], name: str,
                  max_tokens: int | None, temperature: float | None) -> LLMResult[T]:
        body = self._body(messages, output, name, max_tokens, temperature)
        attempts = 0
        error = ""
        while True:
            attempts += 1
            response: httpx.Response | None = None
            try:
                response = self._http.post(self._url, json=body)
            except httpx.TimeoutException as exc:
                error = f"timeout: {type(exc).__name__}"
            except httpx.TransportError as exc:
                error = f"transport: {type(exc).__name__}: {exc}"
            else:
                if response.status_code < 300:
                    try:
                        return self._result(response, output, attempts, name)
                    except LLMError as exc:
                        self._failed(attempts, name, str(exc))
                        raise
                error = f"HTTP {response.status_code}: {response.text[:200]}"
                if self._schema_rejected(response):  # e.g. llama-cpp-python's server
                    body = self._body(messages, output, name, max_tokens, temperature)
                    attempts -= 1  # the request never reached the model
                    continue
                if response.status_code not in _RETRY_STATUS:
                    self._failed(attempts, name, error)
                    raise LLMError(error)
            self._back_off(attempts, name, error, response)

    # ------------------------------------------------------------------ streaming
    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        name: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[str]:
        """Free text with ``stream: true``: the ``data: {...}`` chunks' content deltas until
        ``data: [DONE]``. Retried like ``complete`` until the first delta; usage from the
        final chunk when the server sends one (``stream_options.include_usage``), else
        estimated."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role.value, "content": m.content} for m in messages],
            "max_tokens": max_tokens or self._max_tokens,
            "temperature": self._temperature if temperature is None else temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        prompt = "\n".join(m.content for m in messages)
        attempts = 0
        while True:
            attempts += 1
            parts: list[str] = []
            usage: LLMUsage | None = None
            response: httpx.Response | None = None
            retryable = True
            try:
                with self._http.stream("POST", self._url, json=body) as response:
                    if response.status_code < 300:
                        for delta, reported in _sse_chunks(response):
                            usage = reported or usage
                            if delta:
                                parts.append(delta)
                                yield delta
                        text = "".join(parts)
                        self._finish_stream(text, _stream_usage(usage, prompt, text), attempts,
                                            name)
                        return
                    response.read()
                    error = f"HTTP {response.status_code}: {response.text[:200]}"
                    retryable = response.status_code in _RETRY_STATUS
            except GeneratorExit:  # the caller stopped reading: count what was generated
                text = "".join(parts)
                self._finish_stream(text, _stream_usage(usage, prompt, text), attempts, name)
                raise
            except httpx.TimeoutException as exc:
                error = f"timeout: {type(exc).__name__}"
            except (httpx.TransportError, _StreamCut) as exc:
                error = f"transport: {type(exc).__name__}: {exc}"
            except LLMError as exc:  # a malformed stream or an error chunk
                error, retryable = str(exc), False
            if parts or not retryable:  # once deltas were sent, a retry would repeat them
                self._failed(attempts, name, error)
                raise LLMError(error)
            self._back_off(attempts, name, error, response)

    def _back_off(self, attempts: int, name: str, error: str,
                  response: httpx.Response | None) -> None:
        """After a retryable failure: give up past ``max_retries``, else wait and log."""
        if attempts > self._max_retries:
            self._failed(attempts, name, error)
            raise LLMError(f"{error} (after {attempts} attempts)")
        delay = self._wait(attempts - 1, response)
        log.info("llm.retry", prompt=name, attempt=attempts, error=error, wait_s=round(delay, 3))
        time.sleep(delay)

    def _result(self, response: httpx.Response, output: type[T], attempts: int,
                name: str) -> LLMResult[T]:
        try:
            payload = response.json()
            message = payload["choices"][0]["message"]
            text = message.get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"malformed completion response: {exc!r}") from exc
        raw_usage = payload.get("usage") or {}
        usage = LLMUsage(
            prompt_tokens=int(raw_usage.get("prompt_tokens") or 0),
            completion_tokens=int(raw_usage.get("completion_tokens") or estimate_tokens(text)))
        return self._finish(text, output, usage, attempts, name)


def _schema_name(name: str) -> str:
    """OpenAI allows [a-zA-Z0-9_-]{1,64} for the schema name."""
    clean = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name)
    return clean[:64] or "output"


def _stream_usage(reported: LLMUsage | None, prompt: str, text: str) -> LLMUsage:
    """The usage the server reported, estimated where it reported none."""
    return LLMUsage(
        prompt_tokens=(reported.prompt_tokens if reported else 0) or estimate_tokens(prompt),
        completion_tokens=(reported.completion_tokens if reported else 0)
        or estimate_tokens(text))


class _StreamCut(Exception):
    """The stream ended before ``[DONE]`` or a ``finish_reason`` (the connection dropped)."""


def _sse_chunks(response: httpx.Response) -> Iterator[tuple[str, LLMUsage | None]]:
    """(content delta, usage or None) per ``data:`` line of a chat-completions stream."""
    finished = False
    for line in response.iter_lines():
        line = line.strip()
        if not line.startswith("data:"):
            continue  # blank separators, ": keep-alive" comments, "event:" lines
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            chunk = json.loads(data)
            if not isinstance(chunk, dict):
                raise TypeError(type(chunk).__name__)
            if chunk.get("error"):
                raise LLMError(f"stream error: {str(chunk['error'])[:200]}")
            raw_usage = chunk.get("usage") or None
            usage = LLMUsage(prompt_tokens=int(raw_usage.get("prompt_tokens") or 0),
                             completion_tokens=int(raw_usage.get("completion_tokens") or 0)
                             ) if raw_usage else None
            choices = chunk.get("choices") or []
            delta = "".join((choice.get("delta") or {}).get("content") or ""
                            for choice in choices)
            finished = finished or any(choice.get("finish_reason") for choice in choices)
        except (ValueError, TypeError, AttributeError) as exc:
            raise LLMError(f"malformed stream chunk: {exc!r}") from exc
        yield delta, usage
    if not finished:
        raise _StreamCut("the stream ended before [DONE]")
