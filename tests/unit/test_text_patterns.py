"""The schema's text patterns and the code's own checks agree on every string: a request the
schema accepts is never refused later as blank or nameless, one it refuses never gets through."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from knotwork.domain.text import NAMES_SOMETHING, NON_BLANK, name_residue
from knotwork.resolution.normalize import name_key, readable_name

# spaces of every dialect, ASCII punctuation and controls, letters, and symbols of no class
TRICKY = st.sampled_from(list("\t\n\x0b\x1c\x1f \x85\xa0\u1680\u2007\u200b\u2028\u3000\ufeff"
                              ".,;:!?'\"()-_#+¿©€🙂\x00\x7f\x9fAzÉß7李"))
TEXTS = st.lists(TRICKY, max_size=6).map("".join) | st.text(max_size=8)


class _Patterns(BaseModel):  # pydantic's own regex engine, as the API validates
    text: str = Field(pattern=NON_BLANK)


class _Names(BaseModel):
    name: str = Field(pattern=NAMES_SOMETHING)


def _pydantic_accepts(model: type[BaseModel], field: str, value: str) -> bool:
    try:
        model.model_validate({field: value})
    except ValidationError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_a_non_blank_text_survives_strip(value: str) -> None:
    matched = re.search(NON_BLANK, value) is not None
    assert matched == _pydantic_accepts(_Patterns, "text", value)
    if matched:
        assert value.strip()


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_a_name_matching_the_pattern_has_a_key(value: str) -> None:
    matched = re.search(NAMES_SOMETHING, value) is not None
    assert matched == _pydantic_accepts(_Names, "name", value)
    assert matched == bool(name_residue(value))
    if matched:
        assert name_key(readable_name(value))


def test_symbol_names_keep_a_key_and_words_keep_theirs() -> None:
    assert name_key("Dr. Zoë Ångström") == "zoe angstrom"
    assert name_key("¿") == "¿" and readable_name("¿") == "¿"
    assert name_key("...") == "" and name_residue(" .-") == ""
