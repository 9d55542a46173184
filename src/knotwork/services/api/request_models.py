"""What every REST request body shares: the schema says exactly what is accepted.

Strict by default (no ``"5"`` or ``true`` for a number, no ``1`` for a boolean), times only as
ISO-8601 strings (never a number of seconds), enum fields lax (their values are strings) and
free text that must say something (``TEXT``: a non-blank string; ``NAME``: one with a letter,
a digit or a non-ASCII character: what a name's key keeps).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from typing_extensions import TypeAliasType

from knotwork.domain.text import NAMES_SOMETHING, NON_BLANK

__all__ = ["NAME", "PATTERN_MESSAGES", "TEXT", "ApiInt", "ApiRequest", "ApiTime", "CommunityLevel", "DriftIterations",
           "LaxEnum", "TopCommunities"]


class ApiRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _iso_only(value: object) -> object:
    if isinstance(value, str | datetime):
        return value
    raise ValueError("a date-time must be an ISO-8601 string, such as 2026-03-01T09:00:00Z")


def _number_only(value: object) -> object:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a JSON number")  # noqa: TRY004 - pydantic reports ValueError
    return value


_NUMBER = BeforeValidator(_number_only)
# an integer as JSON Schema has it: 52 and 52.0, never true or "52"
ApiInt = Annotated[int, Field(strict=False), _NUMBER]
# bounded ones used as optional fields: the bounds must sit inside (before the validator),
# or the schema of ``X | None`` reads "ge"/"le" instead of minimum/maximum
CommunityLevel = Annotated[int, Field(ge=0, le=100, strict=False), _NUMBER]
TopCommunities = Annotated[int, Field(ge=1, le=100, strict=False), _NUMBER]
DriftIterations = Annotated[int, Field(ge=0, le=10, strict=False), _NUMBER]
ApiTime = Annotated[datetime, Field(strict=False, json_schema_extra={"format": "date-time"}),
                    BeforeValidator(_iso_only)]
T = TypeVar("T")
# an enum field of a strict model: takes the enum's values (strings), gives its members
LaxEnum = TypeAliasType("LaxEnum", Annotated[T, Field(strict=False)], type_params=(T,))
TEXT = NON_BLANK
NAME = NAMES_SOMETHING
# what a 422 says for a text that does not match one of these patterns
PATTERN_MESSAGES = {TEXT: "is blank", NAME: "has no letter or digit"}
