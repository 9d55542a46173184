"""Chunk-level extraction: ensemble mentions → local entities → relations with their sentences."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import structlog

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction import entity_filter
from knotwork.ingestion.extraction.aliases import alias_mentions
from knotwork.ingestion.extraction.cell_names import cell_mentions
from knotwork.ingestion.extraction.ensemble import Ensemble, VotePolicy, default_extractors
from knotwork.ingestion.extraction.extractors import LlmVoteExtractor
from knotwork.ingestion.extraction.handover import handover_relations
from knotwork.ingestion.extraction.mentions import JOB_TITLE, rule_type
from knotwork.ingestion.extraction.page_labels import label_relations
from knotwork.ingestion.extraction.relations import relations_in_sentence
from knotwork.ingestion.extraction.spacy_model import loaded_words
from knotwork.ingestion.extraction.table_headers import (
    TABLE_METHOD,
    table_row_relations,
)
from knotwork.ingestion.extraction.types import (
    ChunkExtraction,
    ChunkInput,
    Extractor,
    KnownName,
    LlmChunkVotes,
    LocalEntity,
    LocalRelation,
    Mention,
)
from knotwork.resolution.name_forms import has_non_person_word
from knotwork.resolution.normalize import clean_display_name, normalize_name

if TYPE_CHECKING:
    from knotwork.settings import Settings

log = structlog.get_logger(__name__)

_WEIGHT = {"alias": 3.0, "speaker": 3.0, "user": 3.0, "rule": 2.5, "gazetteer": 3.0, "known": 2.0, "llm": 2.0,
           "gliner": 1.5, "spacy": 1.0, "caps": 0.8, "shape": 0.5, "coref": 0.5, "acronym": 2.0}
_CONTRACTIONS = {"'m": " is", "’m": " is", "'ve": " has", "’ve": " has", "'ll": " will",
                 "’ll": " will", "'d": " would", "’d": " would"}
_MARKUP = re.compile(r"^(?:[-*#>•]+\s*|\[[ xX]?\]\s*)+")
_PREFIX = re.compile(r"^\s*(?:\[[^\]\n]{1,40}\]\s*)?[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,3}\s*(?:\([^)\n]{1,30}\))?\s*:\s+")


def _typed_ends(text: str, doc: Any | None, mentions: list[Mention]) -> set[int]:
    """Ids of the mentions a rule pattern relates by a typed relation (not RELATED_TO)."""
    ends: set[int] = {id(m) for hit in table_row_relations(text, mentions)
                      for m in (hit.source, hit.target)}
    for start, end in _sentences(text, doc):
        inside = [m for m in mentions if m.start >= start and m.end <= end]
        if len(inside) >= 2:
            ends.update(id(m) for hit in relations_in_sentence(text, inside)
                        if hit.type is not RelationType.RELATED_TO
                        for m in (hit.source, hit.target))
    return ends


class EnsembleExtractor:
    """The no-LLM extractor of ingestion: the entity ensemble (spaCy NER, rules, gazetteers,
    Slack user table, known names, speakers, capitalisation, GLiNER when configured, the LLM's
    votes when given), coreference, and rule relations between the voted mentions."""

    name = "ensemble"

    def __init__(self, nlp: Any | None, extra: Sequence[Extractor] = (),
                 policy: VotePolicy | None = None) -> None:
        self._nlp = nlp
        self._words: frozenset[str] | None = None
        self._llm = LlmVoteExtractor()
        self.ensemble = Ensemble([*default_extractors(nlp), *extra, self._llm], policy or VotePolicy())
        self.users: dict[str, str] = {}  # Slack handle / user id -> real name

    @property
    def nlp(self) -> Any | None:
        return self._nlp

    def is_common_word(self, word: str) -> bool:
        """A common English word: one the NER model's vocabulary held when it was loaded (its
        string store grows with every text any extractor sharing it reads: recorded by
        ``load_spacy``); no model: none."""
        if self._words is None:
            self._words = loaded_words(self._nlp) if self._nlp is not None else frozenset()
        return word.lower() in self._words

    def extract(
        self,
        texts: Sequence[str],
        known: Mapping[str, KnownName],
        context: Sequence[KnownName] = (),
        llm: Sequence[LlmChunkVotes | None] | None = None,
    ) -> list[ChunkExtraction]:
        """One ChunkExtraction per text. ``llm``: the LLM's votes per text, when configured."""
        docs: list[Any | None]
        if self._nlp is not None:
            docs = list(self._nlp.pipe(texts, batch_size=16))
        else:
            docs = [None] * len(texts)
        chunks = [ChunkInput(t, d, known, context, self.users) for t, d in zip(texts, docs, strict=True)]
        self._llm.set_votes(llm or ())
        try:
            per_chunk = self.ensemble.mentions(chunks)
        finally:
            self._llm.set_votes(())
        out = []
        for i, (chunk, mentions) in enumerate(zip(chunks, per_chunk, strict=True)):
            mentions = alias_mentions(chunk.text, mentions, _nickname_linked, self.is_common_word)
            mentions = cell_mentions(chunk.text, _with_person_teams(chunk.text, _with_role_people(
                chunk.text, entity_filter.label_words(chunk.text, _without_cell_labels(
                    chunk.text, mentions), self.is_common_word))))
            votes = llm[i] if llm is not None and i < len(llm) else None
            out.append(self._one(chunk.text, chunk.doc, mentions, votes))
        return out

    def names_in(self, text: str) -> list[str]:
        """Proper names a short text (a question) states: people, projects, teams, systems."""
        doc = self._nlp(text) if self._nlp is not None else None
        chunk = ChunkInput(text, doc)
        out: list[str] = []
        for m in self.ensemble.mentions([chunk])[0]:
            words = m.text.split()
            strong = m.extractor in ("rule", "gazetteer") or (
                m.extractor == "spacy" and len(words) >= 2 and m.type is EntityType.PERSON)
            if strong and m.refers_to is None:
                out.append(clean_display_name(m.text))
        return out

    def _one(self, text: str, doc: Any | None, mentions: list[Mention],
             votes: LlmChunkVotes | None) -> ChunkExtraction:
        entities, index_of = _cluster(mentions)
        dropped = entity_filter.junk(entities, text, self.is_common_word)
        if dropped:  # one end of a typed relation ("works at Umbrella") is no guess: kept
            typed = _typed_ends(text, doc, mentions)
            dropped = {i for i in dropped if not typed & {id(m) for m in entities[i].mentions}}
        if dropped:
            gone = {id(m) for i in dropped for m in entities[i].mentions}
            mentions = [m for m in mentions if id(m) not in gone]
            entities, index_of = _cluster(mentions)
        relations: list[LocalRelation] = []
        sentences = _sentences(text, doc)
        for start, end in sentences:
            inside = [m for m in mentions if m.start >= start and m.end <= end
                      and not (m.extractor == "speaker" and m.refers_to is None)]
            if len(inside) < 2:
                continue
            sentence_facts: set[tuple[int, int, str]] = set()
            for hit in relations_in_sentence(text, inside):
                s, t = index_of[id(hit.source)], index_of[id(hit.target)]
                if s == t or (s, t, hit.type) in sentence_facts:
                    continue
                sentence_facts.add((s, t, hit.type))
                fact = _fact_text(text, start, end, mentions)
                relations.append(LocalRelation(s, t, hit.type, fact, hit.confidence, start, end))
        relations = _with_table_rows(text, mentions, index_of, relations)
        relations += _labelled(text, mentions, index_of, relations)
        relations += handover_relations(text, entities, relations)
        if votes is not None and votes.relations:
            relations += _llm_relations(text, votes, entities, sentences, mentions, relations)
        speaker = next((m.text for m in mentions if m.extractor == "speaker" and m.refers_to is None), None)
        return ChunkExtraction(entities, _drop_weaker_duplicates(relations), speaker)


_PAREN_TEAM = re.compile(r"^\s+\(((?:[A-Z][a-z][\w-]*)(?:\s+(?:&\s+)?[A-Z][\w-]*){0,3})\)")
# what a parenthesis after a name says besides a team: a title, a pronoun, a work mode
_NOT_A_TEAM = re.compile(r"^(?:Head|Director|VP|Chief|Manager|Senior|Staff|Principal|Lead|Engineer|"
                         r"Intern|Contractor|Consultant|She|He|They|Remote|Onsite|Acting|Interim|"
                         r"Former|New|Ex|Emeritus|Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|"
                         r"Jun|Jul|Aug|Sep|Oct|Nov|Dec)")


_TITLE_PAREN = re.compile(r"^[ \t]*\((" + JOB_TITLE + r")\)")
_GUESSERS = ("spacy", "shape", "caps", "gliner")  # statistical or capitalisation guesses
_STRONG = frozenset({"rule", "gazetteer", "user", "speaker", "known", "llm", "alias"})


def _without_cell_labels(text: str, mentions: list[Mention]) -> list[Mention]:
    """A table row rendered "Team: Medicines; Owns: MedsTrack": a capitalised header after a
    cell separator ("Owns", "Go-live") is a label, not a name NER should vote for."""
    return [m for m in mentions
            if m.extractor in _STRONG or m.type is EntityType.PERSON
            or not (re.match(r"[ \t]*:", text[m.end:m.end + 3])
                    and re.search(r"[;|][ \t]*$", text[max(0, m.start - 3):m.start]))]


_ROLE_LINE = re.compile(
    r"^[ \t]*(?:[-*•][ \t]*)?(?:(?:tech(?:nical)?|team|project|product|engineering|program|line)\s+)?"
    r"(?:lead|leads|owner|owners|manager|maintainers?|sponsor|authors?|reviewers?|presenters?|assignee|"
    r"reporter|dri|pm|contact|approvers?|c[a-z]o|vp(?:\s+[A-Za-z]+)?|director|head|on-?call|members?)"
    r"[ \t]*:[ \t]*(.+)$", re.IGNORECASE | re.MULTILINE)
_ROLE_NAME = re.compile(r"(?<![\w-])[A-Z][a-z][\w'’-]*(?:\s+(?:de|van|von|da|del|di|le|la|el|al|bin)?\s*"
                        r"[A-Z][a-z][\w'’-]*){1,2}(?![\w-])")


def _with_role_people(text: str, mentions: list[Mention]) -> list[Mention]:
    """Full names given as a role's value are people: "Project lead: Oluwaseun Adeyemi",
    "Reviewers: Ines Duarte, Tomasz Kral" (names statistical NER misses or mistypes)."""
    added: list[Mention] = []
    for line in _ROLE_LINE.finditer(text):
        value = re.split(r"[.!?;|](?:\s|$)", line.group(1), maxsplit=1)[0]
        for name in _ROLE_NAME.finditer(value):
            start, end = line.start(1) + name.start(), line.start(1) + name.end()
            if value[:name.start()].count("(") > value[:name.start()].count(")"):
                continue  # "(Data Engineering)": about the name before it
            if text[end:end + 1] == " " and text[end + 1:end + 2].isupper():
                continue
            if rule_type(name.group(0)) not in (None, (EntityType.PERSON, None)):
                continue  # "Payments Team", "Ledger Service": not a person
            if any(o.start < end and start < o.end and o.extractor in ("rule", "gazetteer", "user", "speaker")
                   for o in mentions):
                continue
            added.append(Mention(start, end, name.group(0), EntityType.PERSON, 0.85, "rule"))
    if not added:
        return mentions
    kept = [m for m in mentions if not any(m.start < a.end and a.start < m.end for a in added)]
    return sorted([*kept, *added], key=lambda m: (m.start, m.end))


def _with_person_teams(text: str, mentions: list[Mention]) -> list[Mention]:
    """A capitalised name in parentheses right after a person is their team:
    "Reviewers: Jonas Weber (Legal), Priya Nair (Data Engineering)". A job title there
    ("Grace Hu (Senior Software Engineer)") is no team, and what statistical NER read into
    it ("Senior Software" as a company) is dropped."""
    added: list[Mention] = []
    titles: list[tuple[int, int]] = []
    for m in mentions:
        if m.type is not EntityType.PERSON or m.extractor == "coref":
            continue
        title = _TITLE_PAREN.match(text[m.end:])
        if title is not None:
            titles.append((m.end + title.start(1), m.end + title.end(1)))
            continue
        hit = _PAREN_TEAM.match(text[m.end:])
        if hit is None or _NOT_A_TEAM.match(hit.group(1)):
            continue
        start, end = m.end + hit.start(1), m.end + hit.end(1)
        if any(o.start < end and start < o.end for o in mentions):
            continue  # already a mention (a place, a technology …): its vote stands
        added.append(Mention(start, end, hit.group(1), EntityType.ORGANIZATION, 0.8, "rule", "TEAM"))
    if titles:
        mentions = [m for m in mentions if m.type is EntityType.PERSON
                    or m.extractor not in _GUESSERS
                    or not any(a <= m.start and m.end <= b for a, b in titles)]
    return sorted([*mentions, *added], key=lambda m: (m.start, m.end)) if added else mentions


def _nickname_linked(short: str, given: str) -> bool:
    from knotwork.resolution.name_forms import nickname_formals

    return given in nickname_formals(short)


RuleBasedExtractor = EnsembleExtractor  # the name the rest of the code imported first


def build_extractor(settings: Settings) -> EnsembleExtractor:
    """The runtime's extractor: spaCy + rules + gazetteers (+ GLiNER when a model is set)."""
    from knotwork.ingestion.extraction.gliner_extractor import GlinerExtractor
    from knotwork.ingestion.extraction.spacy_model import load_spacy

    extra: list[Extractor] = []
    if settings.gliner_model_path:
        extra.append(GlinerExtractor(settings.gliner_model_path, settings.gliner_threshold))
    else:
        log.info("gliner.skipped", reason="no model configured (KNOTWORK_GLINER_MODEL_PATH)")
    return EnsembleExtractor(load_spacy(settings.spacy_model), extra)


def _with_table_rows(text: str, mentions: list[Mention], index_of: dict[int, int],
                     found: list[LocalRelation]) -> list[LocalRelation]:
    """Relations a table row's labelled cells state about the row's subject (the column
    header decides the type, see ``table_headers``)."""
    rows: list[LocalRelation] = []
    have: set[tuple[int, int, str]] = set()
    for hit in table_row_relations(text, [m for m in mentions if m.extractor != "speaker"]):
        s, t = index_of[id(hit.source)], index_of[id(hit.target)]
        if s == t or (s, t, hit.type) in have:
            continue
        have.add((s, t, hit.type))
        rows.append(LocalRelation(s, t, hit.type, hit.fact, 0.8, hit.start, hit.end, method=TABLE_METHOD))
    if not rows:
        return found
    # on a row it reads, a pair the row relates is the row's; other pairs keep what the
    # sentence patterns found ("Owns: DoseCheck" beside a "Manager:" cell)
    pairs = {(start, end): set[frozenset[int]]() for start, end in {(r.start, r.end) for r in rows}}
    for r in rows:
        pairs[(r.start, r.end)].add(frozenset((r.source, r.target)))
    kept = [r for r in found if not any(start <= r.start and r.end <= end
                                        and (frozenset((r.source, r.target)) in same or r.type == "RELATED_TO")
                                        for (start, end), same in pairs.items())]
    return kept + rows


def _labelled(text: str, mentions: list[Mention], index_of: dict[int, int],
              found: list[LocalRelation]) -> list[LocalRelation]:
    """Relations stated by "Owner: X" / "Stack: Y" lines about the page's heading."""
    have = {(r.source, r.target, r.type) for r in found}
    heading = text.strip().split("\n", 1)[0].strip().lstrip("#").strip()
    out: list[LocalRelation] = []
    for hit in label_relations(text, [m for m in mentions if m.extractor != "speaker"]):
        s, t = index_of[id(hit.source)], index_of[id(hit.target)]
        if s == t or (s, t, hit.type) in have:
            continue
        have.add((s, t, hit.type))
        line = _fact_text(text, hit.start, hit.end, mentions)
        out.append(LocalRelation(s, t, hit.type, f"{heading} — {line}", 0.7, hit.start, hit.end))
    return out


def _llm_relations(text: str, votes: LlmChunkVotes, entities: list[LocalEntity],
                   sentences: list[tuple[int, int]], mentions: list[Mention],
                   found: list[LocalRelation]) -> list[LocalRelation]:
    """The LLM's relations between this chunk's entities (by name or alias), method "llm"."""
    index: dict[str, int] = {}
    for i, ent in enumerate(entities):
        for name in (ent.name, *ent.aliases):
            index.setdefault(normalize_name(name), i)
    have = {(r.source, r.target, r.type): r for r in found}
    out: list[LocalRelation] = []
    for rel in votes.relations:
        s, t = index.get(normalize_name(rel.source)), index.get(normalize_name(rel.target))
        if s is None or t is None or s == t:
            continue
        same = have.get((s, t, rel.type))
        if same is not None:  # the rules found it too: one fact, more confident
            same.confidence = min(0.99, 1 - (1 - same.confidence) * (1 - rel.confidence))
            continue
        start, end = _sentence_of(entities[s], entities[t], sentences) or (0, len(text))
        fact = rel.fact.strip() if rel.fact and rel.fact.strip() else _fact_text(text, start, end, mentions)
        out.append(LocalRelation(s, t, rel.type, fact, rel.confidence, start, end, method="llm"))
        have[(s, t, rel.type)] = out[-1]
    return out


def _sentence_of(a: LocalEntity, b: LocalEntity,
                 sentences: list[tuple[int, int]]) -> tuple[int, int] | None:
    for start, end in sentences:
        if any(start <= m.start < end for m in a.mentions) and any(start <= m.start < end for m in b.mentions):
            return start, end
    return None


def _sentences(text: str, doc: Any | None) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    raw = [(s.start_char, s.end_char) for s in doc.sents] if doc is not None else [
        (m.start(), m.end()) for m in re.finditer(r"[^.!?\n]+[.!?]?", text)
    ]
    for start, end in raw:
        pos = start
        for piece in text[start:end].split("\n"):
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                spans.append((pos + lead, pos + len(piece.rstrip())))
            pos += len(piece) + 1
    return spans


def _cluster(mentions: list[Mention]) -> tuple[list[LocalEntity], dict[int, int]]:
    """Group mentions into local entities by (resolved) normalised name."""
    full_people: dict[str, str] = {}
    for m in mentions:
        name = clean_display_name(m.refers_to or m.text)
        if m.type is EntityType.PERSON and len(name.split()) >= 2 and not has_non_person_word(name):
            full_people.setdefault(normalize_name(name).split()[0], name)  # not "X Migration"
    groups: dict[str, list[Mention]] = defaultdict(list)
    display: dict[str, str] = {}
    for m in mentions:
        name = clean_display_name(m.refers_to or m.text)
        key = normalize_name(name)
        if m.type is EntityType.PERSON and " " not in key and key in full_people:
            name = full_people[key]
            key = normalize_name(name)
        if not key:
            continue
        groups[key].append(m)
        if key not in display or (m.refers_to is None and m.extractor != "coref" and len(name) > len(display[key])):
            display[key] = name
    entities: list[LocalEntity] = []
    index_of: dict[int, int] = {}
    for key, ms in groups.items():
        votes: dict[tuple[EntityType, str | None], float] = defaultdict(float)
        for m in ms:
            votes[(m.type, m.subtype)] += _WEIGHT[m.extractor] * m.confidence
        (etype, subtype), _ = max(votes.items(), key=lambda kv: kv[1])
        aliases = {clean_display_name(m.text) for m in ms
                   if (m.refers_to is None and m.extractor != "coref")
                   or m.extractor in ("acronym", "alias")}
        aliases.discard(display[key])
        ent = LocalEntity(display[key], key, etype, subtype, max(m.confidence for m in ms), ms, aliases)
        for m in ms:
            index_of[id(m)] = len(entities)
        entities.append(ent)
    return entities, index_of


def _fact_text(text: str, start: int, end: int, mentions: list[Mention]) -> str:
    """The sentence, with pronouns and 'the project' replaced by the names they refer to."""
    out: list[str] = []
    pos = start
    for m in mentions:
        if m.start < start or m.end > end or m.refers_to is None:
            continue
        if m.extractor == "speaker" and m.text.lower() in {"we", "us", "our"}:
            continue
        if m.extractor in ("known", "acronym", "alias") or (m.extractor == "rule" and m.refers_to):
            continue
        out.append(text[pos : m.start])
        word = m.text.lower()
        replacement = m.refers_to + ("'s" if word in {"my", "mine"} else "")
        out.append(replacement)
        pos = m.end
        for contraction, expansion in _CONTRACTIONS.items():
            if text.startswith(contraction, pos):
                out.append(expansion)
                pos += len(contraction)
                break
        else:
            if word == "i":
                verb = re.match(r" (am|have|was|[a-z]+)\b", text[pos:end])
                if verb:
                    out.append(" " + _third_person(verb.group(1)))
                    pos += verb.end()
    out.append(text[pos:end])
    sentence = re.sub(r"\s+", " ", "".join(out)).strip()
    sentence = _PREFIX.sub("", sentence, count=1)
    sentence = _MARKUP.sub("", sentence)
    return sentence[:1].upper() + sentence[1:] if sentence else sentence


_NO_S = {"can", "will", "would", "should", "could", "must", "might", "may", "did", "had",
         "was", "also", "just", "really", "currently", "still", "now", "never", "always",
         "recently", "then", "think", "guess", "believe"}


_IRREGULAR_PAST = frozenset(
    ["built", "wrote", "led", "made", "ran", "took", "gave", "began", "became", "brought", "bought", "sent", "spent", "met", "left", "set", "put", "read", "said", "told", "thought", "found", "got", "held", "kept", "knew", "lost", "paid", "saw", "sold", "stood", "understood", "won", "drove", "chose", "grew", "flew", "threw", "drew", "broke", "spoke", "woke", "rose", "fell", "felt", "heard", "hit", "cut", "let", "shut", "quit", "taught", "caught", "fought", "sought", "shipped", "joined", "moved", "owned"]
)


def _third_person(verb: str) -> str:
    """'I work' → 'X works', 'I am' → 'X is' (so a fact reads in the third person)."""
    irregular = {"am": "is", "have": "has", "do": "does", "go": "goes"}
    if verb in irregular:
        return irregular[verb]
    if verb in _NO_S or verb in _IRREGULAR_PAST or verb.endswith(("ed", "s")):
        return verb
    if verb.endswith(("sh", "ch", "x", "o")):
        return verb + "es"
    return verb + "s"


def _drop_weaker_duplicates(relations: list[LocalRelation]) -> list[LocalRelation]:
    """A typed relation between two entities makes RELATED_TO between them redundant."""
    typed = {(r.source, r.target) for r in relations if r.type != "RELATED_TO"}
    typed |= {(t, s) for s, t in typed}
    return [r for r in relations if r.type != "RELATED_TO" or (r.source, r.target) not in typed]
