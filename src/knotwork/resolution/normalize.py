"""Name normalisation: the exact-match key used for resolution."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from knotwork.domain.text import name_residue
from knotwork.ingestion.extraction.lexicon import TITLES

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$", re.IGNORECASE)


# letters NFKD does not decompose into a base letter + accent
_FOLD = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE",
                       "ß": "ss", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "þ": "th", "Þ": "Th",
                       "ı": "i"})


def strip_accents(text: str) -> str:
    return "".join(
        c for c in unicodedata.normalize("NFKD", text.translate(_FOLD))
        if not unicodedata.combining(c)
    )


def clean_display_name(text: str) -> str:
    """Human-readable name: trimmed, single-spaced, no possessive, no leading article/title."""
    name = _SPACE.sub(" ", text).strip()
    name = _POSSESSIVE.sub("", name).strip()
    words = name.split(" ")
    while len(words) > 1 and words[0].lower().rstrip(".") in ({"the"} | TITLES):
        words = words[1:]
    name = " ".join(words)
    return _EDGE_PUNCT.sub("", name) if not name.endswith((".js", "++", "#")) else name


@lru_cache(maxsize=1 << 16)
def normalize_name(text: str) -> str:
    """Canonical key: accents folded, lower case, titles/articles/possessives stripped."""
    name = strip_accents(clean_display_name(text)).lower()
    name = name.replace("&", " and ")
    name = re.sub(r"[^\w+#.]+", " ", name)
    return _SPACE.sub(" ", name).strip(" .")


def name_key(text: str) -> str:
    """``normalize_name``; for a name it keeps nothing of (symbols only: "¿", "©", an emoji)
    the name case-folded, without ASCII punctuation: every name matching ``NAMES_SOMETHING``
    has a key."""
    return normalize_name(text) or name_residue(text.casefold())


def readable_name(text: str) -> str:
    """``clean_display_name``, or the name single-spaced when cleaning leaves nothing."""
    return clean_display_name(text) or _SPACE.sub(" ", text).strip()


def first_name_key(normalized: str) -> str | None:
    """Key that lets a lone given name find the one person who has it."""
    parts = normalized.split(" ")
    return f"first:{parts[0]}" if len(parts) >= 2 else None
