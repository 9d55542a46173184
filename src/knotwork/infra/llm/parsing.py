"""Shared by every LLM adapter: the output JSON schema, and parsing with repair.

Small and local models wrap JSON in fences, add chatter after it, or stop mid-object at the
token limit. :func:`parse_output` strips fences and surrounding text, then falls back to
``json_repair`` (trailing commas, single quotes, unclosed brackets) before validating into the
pydantic model. What still fails validation is reported, never raised.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)(?:```|$)", re.DOTALL)
_DROP_KEYS = ("title", "default", "examples")


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema made strict: ``$defs`` inlined, every property required,
    no additional properties, titles and defaults dropped. Accepted by OpenAI strict mode
    and by llama.cpp's grammar converter; ``max_length`` on lists becomes ``maxItems``
    (small models loop without it)."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = copy.deepcopy(defs[ref.rsplit("/", 1)[1]])
                extra = {k: v for k, v in node.items() if k != "$ref"}
                return inline({**target, **extra})
            out = {k: inline(v) for k, v in node.items()
                   if k not in _DROP_KEYS and k != "properties"}
            if isinstance(node.get("properties"), dict):  # names there are fields, not keywords
                out["properties"] = {k: inline(v) for k, v in node["properties"].items()}
            if out.get("type") == "object" and "properties" in out:
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    result: dict[str, Any] = inline(raw)
    return result


@dataclass(frozen=True, slots=True)
class Parsed(Generic[T]):
    value: T | None
    repaired: bool
    error: str | None = None


def _json_span(text: str) -> str | None:
    """The outermost {...} in the text (after fences), unbalanced tails kept for repair."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start = body.find("{")
    if start < 0:
        return None
    depth, in_str, escaped = 0, False, False
    for i in range(start, len(body)):
        ch = body[i]
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return body[start: i + 1]
    return body[start:]


def _validate(model: type[T], data: object) -> tuple[T | None, str | None]:
    try:
        return model.model_validate(data), None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return None, f"schema: {where}: {first.get('msg', 'invalid')}"


def parse_output(text: str, model: type[T]) -> Parsed[T]:
    """Parse ``text`` into ``model``: as is, then from the JSON span, then repaired."""
    try:
        data = json.loads(text)
    except ValueError:
        pass
    else:
        value, error = _validate(model, data)
        if value is not None:
            return Parsed(value, repaired=False)
        if isinstance(data, dict):
            return Parsed(None, repaired=False, error=error)
    span = _json_span(text)
    if span is None:
        return Parsed(None, repaired=False, error="no JSON object in the output")
    try:
        data = json.loads(span)
    except ValueError:
        from json_repair import repair_json

        data = repair_json(span, return_objects=True)
    if not isinstance(data, dict):
        return Parsed(None, repaired=True, error="output is not a JSON object")
    value, error = _validate(model, data)
    return Parsed(value, repaired=True, error=error)
