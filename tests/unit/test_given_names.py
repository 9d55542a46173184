"""Given names: curated, international and census names count; ordinary words and places do not."""

from __future__ import annotations

import pytest

from knotwork.ingestion.extraction.given_names import is_given_name


@pytest.mark.parametrize("word", ["Marguerite", "tomasz", "Elif", "Oluwaseun", "Siobhan",
                                  "Kwame", "Priya", "Wojciech", "Haruto", "Gonzalo"])
def test_names_of_many_cultures(word: str) -> None:
    assert is_given_name(word)


@pytest.mark.parametrize("word", ["Will", "May", "Chase", "Page", "April", "Dallas", "Van",
                                  "Sterling", "Major", "Platform", "Ling", "Can"])
def test_words_months_places_and_particles_are_not(word: str) -> None:
    assert not is_given_name(word)


def test_accents_do_not_hide_a_listed_name() -> None:
    assert is_given_name("Tomás") and is_given_name("Lucía") and is_given_name("Zoë")
    assert not is_given_name("Ménage")


def test_a_compound_of_a_given_name_and_a_capitalised_word_is_a_given_name() -> None:
    assert is_given_name("Marie-Claire") and is_given_name("Jan-Torben")
    assert not is_given_name("Self-Serve") and not is_given_name("Marie-CLAIRE")
    assert not is_given_name("Re-Run")
