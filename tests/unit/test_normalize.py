"""Name normalisation: display names, resolution keys, given-name keys."""

from __future__ import annotations

import pytest

from knotwork.resolution.normalize import (
    clean_display_name,
    first_name_key,
    normalize_name,
    strip_accents,
)


@pytest.mark.parametrize(
    ("raw", "display"),
    [
        ("Dr. Priya Raman", "Priya Raman"),
        ("Mr Tom Becker", "Tom Becker"),
        ("Prof. Dr. Hans Müller", "Hans Müller"),
        ("Ms. Zoë Ng", "Zoë Ng"),
        ("The Payments Team", "Payments Team"),
        ("the   Billing\n Service", "Billing Service"),
        ("Priya Raman's", "Priya Raman"),
        ("Priya Raman’s", "Priya Raman"),
        ("James'", "James"),
        ('"Project Atlas"', "Project Atlas"),
        ("  Sarah Lin  ", "Sarah Lin"),
    ],
)
def test_clean_display_name(raw: str, display: str) -> None:
    assert clean_display_name(raw) == display


def test_a_lone_title_or_article_is_kept_rather_than_emptied() -> None:
    assert clean_display_name("The") == "The"
    assert clean_display_name("Dr.") == "Dr"


@pytest.mark.parametrize("name", ["Node.js", "C++", "C#"])
def test_technology_names_keep_their_trailing_symbols(name: str) -> None:
    assert clean_display_name(name) == name
    assert normalize_name(name) == name.lower()


def test_strip_accents() -> None:
    assert strip_accents("José Álvarez Müller Zoë") == "Jose Alvarez Muller Zoe"
    assert strip_accents("plain") == "plain"


@pytest.mark.parametrize(
    ("variant", "key"),
    [
        ("Priya Raman", "priya raman"),
        ("PRIYA RAMAN", "priya raman"),
        ("Dr. Priya Raman", "priya raman"),
        ("Priya Raman's", "priya raman"),
        ("  priya   raman ", "priya raman"),
        ("José Álvarez", "jose alvarez"),
        ("Jose Alvarez", "jose alvarez"),
        ("The Billing Service", "billing service"),
        ("the billing service", "billing service"),
        ("Billing-Service", "billing service"),
    ],
)
def test_normalize_name_folds_variants_to_one_key(variant: str, key: str) -> None:
    assert normalize_name(variant) == key


def test_normalize_name_spells_out_ampersand() -> None:
    assert normalize_name("Research & Development") == "research and development"
    assert normalize_name("Research and Development") == "research and development"


def test_distinct_names_keep_distinct_keys() -> None:
    assert normalize_name("Priya Raman") != normalize_name("Priya Shah")
    assert normalize_name("Project Atlas") != normalize_name("Atlas")


def test_first_name_key() -> None:
    assert first_name_key("priya raman") == "first:priya"
    assert first_name_key("mary jane watson") == "first:mary"
    assert first_name_key("priya") is None  # a lone name is not a full name


def test_first_name_key_composes_with_normalize() -> None:
    assert first_name_key(normalize_name("Dr. José Álvarez")) == "first:jose"
