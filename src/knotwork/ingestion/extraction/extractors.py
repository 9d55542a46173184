"""The ensemble's entity extractors, each behind the ``Extractor`` protocol (types.py).

Each one is independent: it sees the chunk (and the shared spaCy parse) and returns typed
candidate mentions with its own confidence. ``ensemble.Ensemble`` counts their votes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.caps import caps_mentions
from knotwork.ingestion.extraction.mentions import (
    gazetteer_mentions,
    known_mentions,
    rule_mentions,
    shape_mentions,
    spacy_mentions,
    speaker_mentions,
    user_mentions,
)
from knotwork.ingestion.extraction.speakers import speaker_turns
from knotwork.ingestion.extraction.types import ChunkInput, LlmChunkVotes, Mention


class SpacyNerExtractor:
    """spaCy NER, labels mapped to PERSON / ORGANIZATION / LOCATION / CONCEPT / EVENT / PRODUCT."""

    name = "spacy"

    def __init__(self, nlp: Any | None = None) -> None:
        self._nlp = nlp

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        missing = [i for i, c in enumerate(chunks) if c.doc is None]
        if missing and self._nlp is not None:
            parsed = self._nlp.pipe([chunks[i].text for i in missing], batch_size=16)
            for i, doc in zip(missing, parsed, strict=True):
                chunks[i].doc = doc
        return [spacy_mentions(c.doc) if c.doc is not None else [] for c in chunks]


class RuleExtractor:
    """Project / team / system / company name shapes, ticket ids, given name + surname."""

    name = "rule"

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        return [rule_mentions(c.text) for c in chunks]


class GazetteerExtractor:
    """The curated technology list (PostgreSQL, GitHub Actions, Node.js …)."""

    name = "gazetteer"

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        return [gazetteer_mentions(c.text) for c in chunks]


class UserTableExtractor:
    """Slack handles and user ids through the user table (or a known person's name)."""

    name = "user"

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        return [user_mentions(c.text, c.users, c.known) for c in chunks]


class KnownNameExtractor:
    """Names of entities already in the graph."""

    name = "known"

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        return [known_mentions(c.text, c.known) for c in chunks]


class SpeakerExtractor:
    """Speaker prefixes of chat turns ("Alice Chen(user): …", Slack authors)."""

    name = "speaker"

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        return [speaker_mentions(c.text, speaker_turns(c.text)) for c in chunks]


class CapsExtractor:
    """Lone capitalised words inside sentences: a weak product vote (see ``caps``)."""

    name = "caps"

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        return [caps_mentions(c.text) for c in chunks]


class ShapeExtractor:
    """Capitalised word runs: corroborates other extractors' spans, never passes alone."""

    name = "shape"

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        return [shape_mentions(c.text) for c in chunks]


class LlmVoteExtractor:
    """The LLM's entities of each chunk (from ``llm_extractor``), located in the chunk text.

    Holds the votes of one batch: ``set_votes`` before ``mentions``; a chunk without votes
    (no LLM configured, or its call failed) gets none.
    """

    name = "llm"

    def __init__(self) -> None:
        self._votes: Sequence[LlmChunkVotes | None] = ()

    def set_votes(self, votes: Sequence[LlmChunkVotes | None]) -> None:
        self._votes = votes

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        out: list[list[Mention]] = []
        for i, chunk in enumerate(chunks):
            votes = self._votes[i] if i < len(self._votes) else None
            out.append(locate_votes(chunk.text, votes) if votes is not None else [])
        return out


def locate_votes(text: str, votes: LlmChunkVotes) -> list[Mention]:
    """Every occurrence (word-bounded, case-sensitive first, else case-insensitive) of each name."""
    out: list[Mention] = []
    for entity in votes.entities:
        name = " ".join(entity.name.split())
        if len(name) < 2:
            continue
        pattern = r"(?<![\w])" + re.escape(name).replace(r"\ ", r"\s+") + r"(?![\w])"
        hits = list(re.finditer(pattern, text)) or list(re.finditer(pattern, text, re.IGNORECASE))
        etype = entity.type if isinstance(entity.type, EntityType) else EntityType(entity.type)
        confidence = max(0.0, min(1.0, entity.confidence))
        out.extend(Mention(h.start(), h.end(), h.group(0), etype, confidence, "llm") for h in hits)
    return out
