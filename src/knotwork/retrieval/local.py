"""Local (entity-centric) search: seeds → k-hop facts + source sentences → ranked → answer.

With no LLM the answer is extractive: the best-supported fact or source sentence,
verbatim, with its citations. Without support it abstains with low confidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from knotwork.domain.models import (
    DERIVED_METHODS,
    Citation,
    Entity,
    EntityType,
    Episode,
    QueryMode,
    QueryResult,
)
from knotwork.domain.ports import Collection
from knotwork.domain.timeutil import holds_at, to_iso, utcnow
from knotwork.ingestion.chunking import count_tokens
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.acronyms import spell_out_acronyms
from knotwork.retrieval.answer_rank import model_order, runner_up
from knotwork.retrieval.answerability import AnswerSupport, measure
from knotwork.retrieval.citations import CitationResolver
from knotwork.retrieval.config import LocalSearchConfig
from knotwork.retrieval.coverage import focus_terms, uncovered_terms
from knotwork.retrieval.definitions import definition_bonus
from knotwork.retrieval.evidence_text import (
    continues,
    pair_display,
    pair_text,
    scored_text,
    sentence_vector_id,
    sentences,
    stored_or_embedded,
)
from knotwork.retrieval.hints import hint_bonus
from knotwork.retrieval.lexical import STOPWORDS, bm25_with_context, overlap, term_set, terms
from knotwork.retrieval.list_items import asked_count, asks_plural, best_block, matching_rows
from knotwork.retrieval.open_questions import open_question, without_question_verb
from knotwork.retrieval.question import analyze, answer_kind, is_question_phrase, unshadowed
from knotwork.retrieval.reasons import duration_bonus, reason_bonus, reason_first
from knotwork.retrieval.sentences import join_answer
from knotwork.retrieval.siblings import siblings as same_relation
from knotwork.retrieval.table_rows import prose_over_rows
from knotwork.retrieval.tech_category import category_first, unsupported_category
from knotwork.retrieval.tech_stack import is_home_company
from knotwork.retrieval.temporal_question import held_then, undated_when, when_note
from knotwork.retrieval.time_constraint import TimeConstraint, resolve_event
from knotwork.retrieval.time_fit import answer_time, time_bonus
from knotwork.retrieval.typed_first import typed_first
from knotwork.retrieval.typed_support import unsupported_relation, unsupported_title
from knotwork.retrieval.units import Unit, choose, dedupe, recency_bonus, with_follow_ups
from knotwork.runtime import Runtime

NO_ANSWER = "I could not find support for this in the knowledge graph."


class LocalSearch:
    def __init__(self, runtime: Runtime, group_id: str, config: LocalSearchConfig | None = None) -> None:
        self._rt = runtime
        self._group = group_id
        self._cfg = config or LocalSearchConfig()
        self._names: dict[str, list[str]] = {}
        self._by_keys: dict[tuple[str, ...], list[Entity]] = {}

    def question_names(self, question: str, known: Sequence[str] = ()) -> list[str]:
        """Proper names the question states (spaCy + rules), memoised per question. Skipped
        when every capitalised word after the first is part of a known name."""
        if question in self._names:
            return self._names[question]
        words = re.findall(r"[\w'’.-]+", question)
        known_words = {w.lower() for name in known for w in re.findall(r"[\w'’.-]+", name)}
        if not any(w[:1].isupper() and w.lower() not in known_words for w in words[1:]):
            return []
        names = (without_question_verb(n, question) for n in self._rt.extractor.names_in(question))
        self._names[question] = [n for n in names if n and not is_question_phrase(n)]
        return self._names[question]

    @property
    def config(self) -> LocalSearchConfig:
        return self._cfg

    @property
    def min_answer_score(self) -> float:
        return self._cfg.min_answer_score

    def entities(self, ids: Sequence[str]) -> list[Entity]:
        return self._rt.graph.get_entities(self._group, ids)

    def find_by_keys(self, keys: Sequence[str]) -> list[Entity]:
        """Entities with any of these name keys; memoised for the life of this search (one
        query asks it for the same question from the surname check, the aggregate check,
        routing and the seeds)."""
        wanted = tuple(sorted(set(keys)))
        if not wanted:
            return []
        if wanted not in self._by_keys:
            self._by_keys[wanted] = self._rt.graph.find_entities_by_keys(self._group, list(wanted))
        return list(self._by_keys[wanted])

    # ------------------------------------------------------------------ seeds
    def anchors(self, question: str) -> list[Entity]:
        """The known entities the question names in capitalised words (not "report", "first")."""
        return [e for words, e in self.named_in(question)
                if any(w[:1].isupper() or w[:1].isdigit() for w in words.split())]

    def episodes_mentioning(self, entity_ids: Sequence[str], limit: int = 40) -> list[Episode]:
        """The episodes (chunks) that mention any of the entities, most mentions first."""
        ids = self._rt.documents.chunks_mentioning(self._group, list(entity_ids), limit=limit)
        return self._rt.graph.get_episodes(self._group, ids) if ids else []

    def cite(self, evidence: Sequence[tuple[str, Sequence[str]]], limit: int) -> list[Citation]:
        """Citations for (evidence text, chunk ids) pairs."""
        return CitationResolver(self._rt.documents).resolve(evidence, limit)

    def named_in(self, question: str) -> list[tuple[str, Entity]]:
        """(the words, the entity) for each known entity the question names (name, alias or
        first name), longest words first."""
        surfaces = question_keys(question)
        found = unshadowed(self.find_by_keys(list(surfaces)), surfaces)
        out: list[tuple[str, Entity]] = []
        for entity in found:
            words = [surfaces[k] for k in entity.name_keys if k in surfaces]
            if words:
                out.append((max(words, key=len), entity))
        return sorted(out, key=lambda we: (-len(we[0]), we[1].name))

    def seed_entities(self, question: str, qvec: Sequence[float]) -> dict[str, tuple[Entity, float]]:
        keys = question_keys(question)
        seeds: dict[str, tuple[Entity, float]] = {}
        named = unshadowed(self.find_by_keys(list(keys)), keys)
        for entity in named:
            exact = any(k in keys for k in entity.name_keys if not k.startswith("first:"))
            seeds[entity.id] = (entity, 1.0 if exact else 0.8)
        hits = self._rt.vectors.search(Collection.ENTITIES, qvec, group_id=self._group,
                                       limit=self._cfg.seed_vector_limit,
                                       min_score=self._cfg.seed_min_score)
        missing = [h.id for h in hits if h.id not in seeds]
        by_id = {e.id: e for e in self._rt.graph.get_entities(self._group, missing)}
        for hit in hits:
            if hit.id in by_id:
                seeds[hit.id] = (by_id[hit.id], hit.score)
        return seeds

    # ------------------------------------------------------------------ units
    def _fact_units(self, seeds: dict[str, tuple[Entity, float]], qvec: Sequence[float],
                    as_of: datetime | None, ended: bool = False) -> list[Unit]:
        """``ended``: facts that no longer hold too (the time term ranks them)."""
        cfg = self._cfg
        units: dict[str, Unit] = {}
        strong = [eid for eid, (_, s) in seeds.items() if s >= 0.8] or list(seeds)
        for hit in self._rt.graph.expand_facts(self._group, strong, depth=cfg.max_hops,
                                               as_of=as_of, include_invalid=ended,
                                               limit=cfg.fact_limit, skip_methods=DERIVED_METHODS):
            bonus = cfg.bonus_seed_fact if hit.hop == 0 else cfg.bonus_near_fact / hit.hop
            bonus += min(cfg.bonus_evidence_max, cfg.bonus_per_evidence * (len(hit.fact.episodes) - 1))
            units[hit.fact.id] = Unit(hit.fact.fact, list(hit.fact.episodes), hit.fact, bonus,
                                      time=hit.fact.valid_at)
        hits = self._rt.vectors.search(Collection.FACTS, qvec, group_id=self._group,
                                       limit=cfg.fact_vector_limit)
        extra = [h.id for h in hits if h.id not in units]
        for fact in self._rt.graph.get_facts(self._group, extra):
            if fact.derived:
                continue
            if (ended and as_of is None) or holds_at(fact.valid_at, fact.invalid_at, as_of):
                units[fact.id] = Unit(fact.fact, list(fact.episodes), fact, time=fact.valid_at)
        for hit in hits:  # the stored vector encodes the fact sentence: its cosine is exact
            if hit.id in units:
                units[hit.id].cosine = hit.score
        return list(units.values())

    def _sentence_units(self, qvec: Sequence[float], facts: list[Unit],
                        seeds: dict[str, tuple[Entity, float]], as_of: datetime | None) -> list[Unit]:
        hits = self._rt.vectors.search(Collection.CHUNKS, qvec, group_id=self._group,
                                       limit=self._cfg.chunk_vector_limit)
        hit_chunks = [str(h.payload.get("chunk_id") or h.id) for h in hits]
        named_seeds = [eid for eid, (_, score) in seeds.items() if score >= 1.0]
        mention_chunks = self._rt.documents.chunks_mentioning(
            self._group, named_seeds, limit=self._cfg.chunk_mention_limit) if named_seeds else []
        near = sorted(facts, key=lambda u: -u.bonus)[: self._cfg.fact_chunk_facts]
        fact_chunks = [c for u in near for c in u.chunk_ids[-2:]]
        chunk_ids = list(dict.fromkeys(hit_chunks + mention_chunks + fact_chunks))
        episodes = self._rt.graph.get_episodes(self._group, chunk_ids)
        names = [n for e, s in seeds.values() if s >= 0.8 for n in [e.name, *e.aliases]]
        units: list[Unit] = []
        for ep in episodes:
            # a later document only speaks for as_of where a sentence dates what it says
            later = as_of is not None and ep.valid_at > as_of
            previous: Unit | None = None
            for s in sentences(ep):
                text, shown = s.text, s.shown
                if later and not held_then(text, ep.valid_at, as_of):
                    continue
                # under a title or heading that names the subject counts as naming it
                where = f"{text} {s.context}".lower()
                named = any(n.lower() in where for n in names)
                bonus = self._cfg.bonus_seed_named if named else 0.0
                if s.heading:
                    bonus -= self._cfg.penalty_heading
                unit = Unit(text, [ep.id], None, bonus, context=s.context, time=ep.valid_at,
                            display=shown)
                units.append(unit)
                if previous is not None and continues(text):
                    # "ADR-021: the team adopts Dagster." + "Luis Ortega leads the migration.":
                    # a short follow-up completes the sentence before it; scored together too
                    units.append(Unit(pair_text(previous.text, text), [ep.id], None,
                                      max(previous.bonus, bonus) - self._cfg.penalty_pair,
                                      context=s.context, time=ep.valid_at,
                                      display=pair_display(previous.display, shown)))
                previous = None if s.heading else unit
        return units

    def _score(self, question: str, qvec: Sequence[float], units: list[Unit]) -> list[Unit]:
        cfg = self._cfg
        lexical, in_context = bm25_with_context(question, [u.text for u in units],
                                                [u.context for u in units])
        for u, lex, ctx in zip(units, lexical, in_context, strict=True):
            u.parts["lexical"] = max(lex, cfg.weight_context * ctx + (1 - cfg.weight_context) * lex)
        recency_bonus(units, cfg.bonus_recency)
        shortlist = sorted(units, key=lambda u: -(u.parts["lexical"] + u.bonus))[: cfg.max_units_scored]
        todo = [u for u in shortlist if u.cosine is None or u.context.strip()]
        texts = [scored_text(u.text, u.context) for u in todo]
        # a source sentence's vector stored at ingest is read by id (a fact read verbatim from
        # a sentence of its first episode too: the bare sentence is stored); the rest is embedded
        ids = [sentence_vector_id(u.chunk_ids[0], t) if u.chunk_ids else ""
               for u, t in zip(todo, texts, strict=True)]
        vectors = stored_or_embedded(self._rt, self._group, texts, ids)
        question_vector = np.asarray(qvec, dtype=np.float64)
        for u, vec in zip(todo, vectors, strict=True):
            u.cosine = float(np.dot(question_vector, np.asarray(vec, dtype=np.float64)))
        for u in shortlist:
            sem = u.cosine or 0.0
            # a three-word sentence that names the subject is similar to anything about it
            sem *= min(1.0, len(terms(u.text)) / cfg.min_informative_terms)
            u.parts["semantic"] = sem
            u.score = cfg.weight_semantic * sem + cfg.weight_lexical * u.parts["lexical"] + u.bonus
        return sorted(shortlist, key=lambda u: -u.score)

    # ------------------------------------------------------------------ run
    def run(self, question: str, *, as_of: datetime | None = None,
            max_context_tokens: int = 4000, mode: QueryMode = QueryMode.LOCAL,
            seed_entity_ids: Sequence[str] = ()) -> QueryResult:
        """``seed_entity_ids``: starting points given by the caller, added to the found ones."""
        return self.answer(question, as_of=as_of, max_context_tokens=max_context_tokens,
                           mode=mode, seed_entity_ids=seed_entity_ids)[0]

    def answer(self, question: str, *, as_of: datetime | None = None,
               max_context_tokens: int = 4000, mode: QueryMode = QueryMode.LOCAL,
               seed_entity_ids: Sequence[str] = ()) -> tuple[QueryResult, AnswerSupport | None]:
        """The answer and its support for the answerability model (None: abstained here)."""
        cfg = self._cfg
        qvec = self._rt.embedder.embed([question])[0]
        seeds = self.seed_entities(question, qvec)
        for entity in self.entities(list(seed_entity_ids)):
            seeds[entity.id] = (entity, 1.0)
        now = utcnow()
        when = answer_time(question, now) if cfg.weight_time > 0 else None
        facts = self._fact_units(seeds, qvec, as_of, ended=as_of is None and when is not None
                                 and when.kind in ("dated", "past", "event"))
        hint_bonus(question, seeds, facts, self._cfg)
        self._answer_kind_bonus(question, seeds, facts)
        pool = dedupe(facts + self._sentence_units(qvec, facts, seeds, as_of))
        time_trace = self._time_term(when, pool, facts, now)
        reason_bonus(question, pool, cfg.bonus_reason)
        duration_bonus(question, pool, cfg.bonus_reason)
        definition_bonus(question, pool, [n for e, _ in seeds.values() for n in (e.name, *e.aliases)],
                         cfg.bonus_definition)
        ranked = self._score(question, qvec, pool)
        prose_over_rows(ranked, self.entities)
        trace = [f"seeds: {', '.join(e.name for e, _ in seeds.values()) or 'none'}",
                 f"candidates: {len(facts)} facts, {len(ranked)} units scored", *time_trace]
        resolver = CitationResolver(self._rt.documents)
        if not any(len(t) >= 2 for t in terms(question)):
            trace.append("abstained: the question names nothing to look up")
            ranked = []
        unknown = self._unknown_names(question, seeds, ranked)
        if unknown:
            trace.append(f"abstained: nothing is known about {', '.join(unknown)}")
            return QueryResult(answer=f"I found nothing about {unknown[0]} in the knowledge graph.",
                               citations=[], confidence=0.05, mode_used=mode, context="",
                               reasoning_trace=trace), None
        missing = uncovered_terms(question, seeds, pool)
        why: str | None = None
        before: list[Unit] | None = None
        close: Unit | None = None
        if ranked and missing and not analyze(question).types and \
                ranked[0].parts.get("semantic", 0.0) < cfg.uncovered_semantic_guard and \
                len(missing) > cfg.uncovered_share * len(focus_terms(question, seeds)):
            why = f"the evidence never mentions {', '.join(missing)}"
        elif ranked:
            named = {eid: e for eid, (e, score) in seeds.items() if score >= 0.8}
            why = unsupported_relation(question, named, (u.fact for u in facts if u.fact is not None),
                                       [f"{u.context} {u.text}" for u in ranked[:5]]) \
                or unsupported_title(question, [u.text for u in ranked[:3]],
                                     [e for e in named.values() if e.type is EntityType.ORGANIZATION],
                                     lambda e: is_home_company(self._rt.graph, self._group, e)) \
                or unsupported_category(question, named, [u.text for u in [*ranked[:10], *facts]])
            if why is None and (k := category_first(question, named, [u.text for u in ranked])
                                or reason_first(question, [(u.display or u.text, u.context, u.score)
                                                           for u in ranked])):
                ranked.insert(0, ranked.pop(k))  # "What database …" / "Why …": names one
            if why is None and (k := typed_first(question, ranked, self.anchors(question),
                                                 self.find_by_keys)):
                before = list(ranked)  # answerability is judged on the ranking as it was
                ranked.insert(0, ranked.pop(k))
            ordered = model_order(question, ranked, self.anchors(question),
                                  focus_terms(question, seeds), self.find_by_keys) \
                if why is None else []
            if (second := runner_up(ordered, cfg.runner_up_share)) is not None:
                close = ranked[second]  # the model's second choice, nearly as likely
            if ordered and (k := ordered[0][0]) > 0:
                before = before or list(ranked)  # the learned choice among the best few
                ranked.insert(0, ranked.pop(k))
        if why is not None:
            trace.append(f"abstained: {why}")
            return QueryResult(answer=NO_ANSWER, citations=[], confidence=0.1, mode_used=mode,
                               context="", reasoning_trace=trace), None
        if not ranked or ranked[0].score < cfg.min_answer_score:
            best = ranked[0].score if ranked else 0.0
            trace.append(f"abstained: best support {best:.2f} < {cfg.min_answer_score}")
            return QueryResult(answer=NO_ANSWER, citations=[], confidence=round(min(0.2, max(best, 0.0)), 3),
                               mode_used=mode, context="", reasoning_trace=trace), None
        top = ranked[0]
        opened = open_question(question)
        chosen = choose(ranked, cfg, opened)
        if opened and len(chosen) > 1:
            trace.append(f"open question ({opened}): {len(chosen)} sentences")
        if undated_when(question, [u.display or u.text for u in chosen],
                        top.fact is not None and top.fact.type in analyze(question).types):
            trace.append("abstained: the evidence states no date")
            return QueryResult(answer=NO_ANSWER, citations=[], confidence=0.1, mode_used=mode,
                               context="", reasoning_trace=trace), None
        # the model's close second choice shows too (after the answer's own units): the
        # answerability model judges the answer without it
        siblings = same_relation(question, top, chosen, facts, seeds, cfg.list_answer_max)
        extra = [close] if close is not None and not opened and \
            all(close is not c and overlap(close.text, c.text) < 0.5 for c in [*chosen, *siblings]) \
            else []
        if extra:
            trace.append("also shown: the answer choice's close second")
        if siblings:
            trace.append(f"listed {len(siblings)} more facts of the same relation")
        # siblings are found against the chosen units themselves (so none repeats one); then a
        # chosen unit may show with its next sentence, for "who …" even from a weaker pair
        cutoff = cfg.follow_up_cutoff_who if _WHO.match(question) else cfg.answer_relative_cutoff
        chosen = with_follow_ups(chosen, ranked[: cfg.max_units_scored], cutoff) + siblings
        judged = chosen
        if (listed := self._listed_items(question, ranked)):
            # the answerability model judges the ranked answer; the answer shows the block
            trace.append(f"listed {len(listed)} items of one block: as many as asked, or the rows "
                         "holding a value the question states")
            chosen, extra = listed, []
            trace[:] = [t for t in trace if not t.startswith("also shown:")]
        if extra:
            chosen = chosen + with_follow_ups(extra, ranked[: cfg.max_units_scored], cutoff)
        answer = spell_out_acronyms(join_answer([u.display or u.text for u in chosen]),
                                    [e for e, _ in seeds.values()],
                                    [u.fact for u in chosen if u.fact is not None], self.entities)
        if top.fact is not None and (note := when_note(question, top.text, top.fact.valid_at,
                                                       top.fact.invalid_at)):
            answer = f"{answer} {note}"
        # the answer's chunks and the context's sources in one read
        resolver.prefetch([c for u in [*chosen, *ranked[:10]] for c in u.chunk_ids])
        citations = resolver.resolve([(u.display or u.text, u.chunk_ids) for u in chosen],
                                     limit=max(cfg.citations, len(chosen)))
        context = self._context(seeds, ranked, resolver, max_context_tokens)
        confidence = round(max(0.0, min(1.0, top.score)), 3)
        trace.append(f"answer from {'fact' if top.fact else 'source sentence'} (score {top.score:.2f})")
        support = measure(question, before or ranked, choose(before, cfg, opened) if before else judged,
                          self.anchors(question), focus_terms(question, seeds),
                          term_set(*(x for u in pool for x in (u.text, u.context))),
                          top.fact is not None and top.fact.type in analyze(question).types,
                          self.find_by_keys)
        return QueryResult(answer=answer, citations=citations, confidence=confidence, mode_used=mode,
                           context=context, reasoning_trace=trace,
                           entities=[e for e, _ in seeds.values()],
                           facts=[u.fact for u in ranked if u.fact is not None][:20]), support

    def _listed_items(self, question: str, ranked: list[Unit]) -> list[Unit]:
        """"Which two …" / "Which Xs are <value>?": the items of one block of bullets or table
        rows in the best candidates' pages (:mod:`list_items`), one unit each, or [] when the
        question asks for no list or no block fits; the answerability model still judges the
        ranked answer."""
        ids = list(dict.fromkeys(c for u in ranked[: self._cfg.list_block_sources]
                                 if u.fact is None for c in u.chunk_ids))
        if not ids or (asked_count(question) is None and not asks_plural(question)):
            return []
        by_id = {ep.id: ep for ep in self._rt.graph.get_episodes(self._group, ids)}
        episodes = [by_id[i] for i in ids if i in by_id]
        block = best_block(question, episodes) or matching_rows(question, episodes)
        if block is None:
            return []
        return [Unit(item, [block.episode_id], None) for item in block.items]

    def _time_term(self, when: TimeConstraint | None, pool: list[Unit], facts: list[Unit],
                   now: datetime) -> list[str]:
        """The question's time constraint (its event dated from the evidence) as a term of
        each candidate's score; the trace line saying which pattern fired. An event the
        evidence does not date weighs nothing, and facts that ended are no candidates then."""
        if when is None:
            return []
        when = resolve_event(when, [(u.text, u.time) for u in pool])
        if when.kind == "event" and when.when is None:
            for units in (pool, facts):
                units[:] = [u for u in units if u.fact is None or u.fact.invalid_at is None]
            return [f"{when.describe()}: event not dated by the evidence, not used"]
        moved = time_bonus(when, pool, self._cfg.weight_time, now,
                           self._cfg.penalty_time_contradiction)
        return [f"{when.describe()}: {moved} candidates weighed by time"]

    def _answer_kind_bonus(self, question: str, seeds: dict[str, tuple[Entity, float]],
                           facts: list[Unit]) -> None:
        """A fact from a named entity to one of the kind the question asks for ("Which team
        was X on" → a team, "Where is X based" → a place) gains: the other end is the answer."""
        kind = answer_kind(question)
        named = {eid for eid, (_, score) in seeds.items() if score >= 0.8}
        if kind is None or not named or self._cfg.bonus_answer_kind <= 0:
            return
        linked = [(u, u.fact.target_id if u.fact.source_id in named else u.fact.source_id)
                  for u in facts if u.fact is not None
                  and (u.fact.source_id in named) != (u.fact.target_id in named)]
        ends = {e.id: e for e in self.entities(sorted({other for _, other in linked}))}
        for unit, other in linked:
            entity = ends.get(other)
            if entity is not None and kind.fits(entity.type, entity.name):
                unit.bonus += self._cfg.bonus_answer_kind

    def _unknown_names(self, question: str, seeds: dict[str, tuple[Entity, float]],
                       ranked: list[Unit]) -> list[str]:
        """Names the question states that neither the graph nor any evidence contains."""
        known = {k for e, score in seeds.values() if score >= 0.8 for k in e.name_keys}
        evidence = " ".join(u.text.lower() for u in ranked[:40])
        shown = [n for e, score in seeds.values() if score >= 0.8 for n in [e.name, *e.aliases]]
        return [name for name in self.question_names(question, shown)
                if normalize_name(name) not in known and name.lower() not in evidence]

    def _context(self, seeds: dict[str, tuple[Entity, float]], ranked: list[Unit],
                 resolver: CitationResolver, budget: int) -> str:
        parts: list[str] = []
        used = 0

        def add(line: str) -> bool:
            nonlocal used
            cost = count_tokens(line)
            if used + cost > budget:
                return False
            parts.append(line)
            used += cost
            return True

        if seeds:
            add("Entities:")
            for entity, _ in sorted(seeds.values(), key=lambda es: -es[1])[:10]:
                add(f"- {entity.name} ({entity.type.value}): {entity.summary}".rstrip(": "))
        facts = [u for u in ranked if u.fact is not None][:25]
        if facts:
            add("Facts:")
            for u in facts:
                fact = u.fact
                assert fact is not None
                since = f" [valid from {to_iso(fact.valid_at)}]" if fact.valid_at else ""
                if not add(f"- {fact.fact}{since}"):
                    break
        chunk_ids = list(dict.fromkeys(c for u in ranked[:10] for c in u.chunk_ids))
        sources = resolver.chunks(chunk_ids)
        if sources:
            add("Sources:")
            for chunk, doc in sources:
                if not add(f"[{doc.source_system}:{doc.source_id}] {doc.title}\n{chunk.content}"):
                    break
        return "\n".join(parts)


_WHO = re.compile(r"^\s*(?:who|whom|whose)\b", re.IGNORECASE)


def question_keys(question: str) -> dict[str, str]:
    """Name keys of the question's 1-4 word spans (single words also as ``first:``) -> words."""
    words = re.findall(r"[\w.+#&'’-]+", question)
    keys: dict[str, str] = {}
    for n in range(1, 5):
        for i in range(len(words) - n + 1):
            surface = " ".join(words[i : i + n])
            key = normalize_name(surface)
            if key and not (n == 1 and (key in STOPWORDS or len(key) < 3)):
                keys.setdefault(key, surface)
                if n == 1:
                    keys.setdefault(f"first:{key}", surface)
    return keys
