"""One query, any mode: LOCAL (with multi-hop), GLOBAL, DRIFT, and AUTO's routing.

``Knotwork.query`` and the REST routes go through :class:`QueryEngine`. GLOBAL and DRIFT need
communities: when the tenant has none they are built on demand (the ``build`` callback);
when that is impossible GLOBAL falls back to local search and says so in the trace.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import NamedTuple

import numpy as np
import structlog

from knotwork.domain.models import EntityType, QueryMode, QueryResult
from knotwork.domain.ports import CacheLayer
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.aggregate import aggregate, parse_aggregate
from knotwork.retrieval.answer_writer import AnswerStream, answer_writer
from knotwork.retrieval.answerability import calibrate
from knotwork.retrieval.chain import answer_chain
from knotwork.retrieval.chain_plan import plan as chain_plan
from knotwork.retrieval.cited import cite
from knotwork.retrieval.config import DriftConfig, GlobalSearchConfig, LocalSearchConfig
from knotwork.retrieval.drift import DriftSearch
from knotwork.retrieval.global_search import GlobalSearch
from knotwork.retrieval.incidents import incident_answer
from knotwork.retrieval.local import NO_ANSWER, LocalSearch
from knotwork.retrieval.options import QueryOptions
from knotwork.retrieval.question import wrong_surnames
from knotwork.retrieval.router import ACCOUNT_CUE, Route, route, split_parts
from knotwork.retrieval.sections import section_answer
from knotwork.retrieval.support import abstain, evidence_of, unsupported
from knotwork.retrieval.tech_stack import home_stack
from knotwork.retrieval.temporal_question import asks_about_state, question_time, without_time
from knotwork.retrieval.time_constraint import asks_two_times
from knotwork.retrieval.vector_cache import embed_cached
from knotwork.runtime import Runtime

log = structlog.get_logger(__name__)


DEFAULT_CONTEXT_TOKENS = 4000
DEFAULT_OPTIONS = QueryOptions()


class PreparedQuery(NamedTuple):
    question: str  # stripped
    options: QueryOptions  # as answered: as_of given or the question's own time; the budget
    time_note: str | None  # the trace line saying where as_of came from
    cache_key: str  # the answer's key in the QUERY cache layer (within the tenant)


class QueryEngine:
    def __init__(self, runtime: Runtime, group_id: str, *, build: Callable[[], None] | None = None,
                 local_config: LocalSearchConfig | None = None,
                 global_config: GlobalSearchConfig | None = None,
                 drift_config: DriftConfig | None = None) -> None:
        self._rt = runtime
        self._group = group_id
        self.local_search = LocalSearch(runtime, group_id, local_config)
        self.global_search = GlobalSearch(runtime, group_id, global_config,
                                          build=self._safe_build(build) if build else None)
        self._drift_config = drift_config
        self.build_error: str | None = None
        self.writer = answer_writer(runtime)  # None: extractive answers only

    def _safe_build(self, build: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                build()
            except Exception as exc:  # noqa: BLE001 - any failure: answer without communities
                self.build_error = f"{type(exc).__name__}: {exc}".splitlines()[0]
                log.warning("query.community_build_failed", group=self._group, error=self.build_error)
        return run

    # ------------------------------------------------------------------ routing
    def route(self, question: str) -> Route:
        named = self.local_search.named_in(question)
        known = [words for words, _ in named]
        keys = {k for _, e in named for k in e.name_keys}
        unknown = [n for n in self.local_search.question_names(question, known)
                   if normalize_name(n) not in keys
                   and not any(n.lower() in w.lower() or w.lower() in n.lower() for w in known)]
        return route(question, known, unknown)

    def _check_support(self, question: str, result: QueryResult,
                       account: bool = False) -> QueryResult:
        """Community answers abstain like local ones: unknown names, unmentioned focus terms.
        An ``account`` of known named things is framed in words its pages need not use ("the
        milestones", "prepare for"): its support is the named things themselves."""
        named = self.local_search.named_in(question)
        share = 1.0 if account and named else None
        keys = {k for _, e in named for k in e.name_keys}
        known = [w for w, _ in named]
        unknown = [n for n in self.local_search.question_names(question, known)
                   if normalize_name(n) not in keys
                   and not any(n.lower() in w.lower() or w.lower() in n.lower() for w in known)]
        why = unsupported(question, [e for _, e in named], unknown, evidence_of(result),
                          self.local_search.config.uncovered_share if share is None else share)
        return abstain(result, why) if why else result

    def aggregate(self, question: str, *, as_of: datetime | None) -> QueryResult | None:
        """A count/list question ("How many teams are in X?") counted from the graph."""
        asked = f" {normalize_name(question)} "
        named = [e for _, e in self.local_search.named_in(question)
                 if any(f" {k} " in asked for k in e.name_keys if not k.startswith("first:"))]
        if not named:
            return None
        return aggregate(self._rt.graph, self._rt.documents, self._group, question, named,
                         as_of=as_of) \
            or home_stack(self._rt.graph, self._rt.documents, self._group, question, named,
                          as_of=as_of) \
            or section_answer(self._rt.graph, self._rt.documents, self._group, question, named,
                              as_of=as_of)

    def wrong_surname(self, question: str, mode: QueryMode) -> QueryResult | None:
        """Abstain on "Tariq Russo" when the graph knows a Tariq, but no Tariq Russo."""
        named = self.local_search.named_in(question)
        first_only = [w for w, e in named if e.type is EntityType.PERSON
                      and normalize_name(w) not in e.name_keys
                      and f"first:{normalize_name(w)}" in e.name_keys]
        if not first_only:
            return None
        full = [w for w, e in named if normalize_name(w) in e.name_keys]
        bad = wrong_surnames(question, first_only, full)
        if not bad:
            return None
        known = ", ".join(sorted({e.name for w, e in named if w in first_only}))
        return QueryResult(
            answer=f"I found nothing about {bad[0]} in the knowledge graph.", citations=[],
            confidence=0.05, mode_used=mode if mode is not QueryMode.AUTO else QueryMode.LOCAL,
            reasoning_trace=[(f"abstained: no person named {bad[0]} is known "
                             f"(same given name: {known})")])

    # ------------------------------------------------------------------ modes
    def local(self, question: str, *, as_of: datetime | None, max_context_tokens: int,
              seed_entity_ids: tuple[str, ...] = (), calibrated: bool = False) -> QueryResult:
        """``calibrated``: a local search answer the answerability model finds unlikely to be
        right is withheld (the question's own answer; DRIFT's follow-ups are not)."""
        if not seed_entity_ids:
            result = answer_chain(self.local_search, question, as_of=as_of,
                                  max_context_tokens=max_context_tokens)
            if result is not None:
                return result
        result, support = self.local_search.answer(
            question, as_of=as_of, max_context_tokens=max_context_tokens, mode=QueryMode.LOCAL,
            seed_entity_ids=seed_entity_ids)
        return calibrate(result, support, NO_ANSWER) if calibrated else result

    def global_(self, question: str, *, as_of: datetime | None, max_context_tokens: int,
                community_level: int | None = None, top_k: int | None = None) -> QueryResult:
        named = [e.id for _, e in self.local_search.named_in(question)]
        result = self.global_search.run(question, level=community_level, top_k=top_k, as_of=as_of,
                                        max_context_tokens=max_context_tokens, entity_ids=named)
        if result is not None:
            return result
        local = self.local(question, as_of=as_of, max_context_tokens=max_context_tokens)
        why = f"the community build failed ({self.build_error})" if self.build_error else \
            "the tenant has no communities (no facts to build them from)"
        local.reasoning_trace.insert(0, f"global search unavailable: {why}; answered by local search")
        return local

    def drift(self, question: str, *, as_of: datetime | None, max_context_tokens: int,
              max_iterations: int | None = None, convergence_threshold: float | None = None,
              parts: tuple[str, ...] = ()) -> QueryResult:
        if not parts:
            parts = tuple(split_parts(question, [w for w, _ in self.local_search.named_in(question)]))
        budget = max(200, max_context_tokens // 2)
        search = DriftSearch(
            self.global_search,
            lambda q: self.local(q, as_of=as_of, max_context_tokens=budget),
            self.local_search.min_answer_score, self._drift_config)
        result = search.run(question, parts=parts, as_of=as_of, max_iterations=max_iterations,
                            convergence_threshold=convergence_threshold,
                            max_context_tokens=max_context_tokens)
        if self.build_error:
            result.reasoning_trace.insert(0, f"no primer: the community build failed ({self.build_error})")
        return result

    def query(self, question: str, options: QueryOptions = DEFAULT_OPTIONS) -> QueryResult:
        return self.query_stream(question, options).collect()

    def prepare(self, question: str, options: QueryOptions = DEFAULT_OPTIONS) -> PreparedQuery:
        """The question as answered, the options it is answered with (its as_of: the
        question's own time when none is given; the context budget) and the QUERY-layer
        cache key of its answer. The one place that key is computed: :meth:`query_stream`
        and the REST API's event-loop cache lookup both use it."""
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        if options.seed_entity_ids and options.mode is not QueryMode.LOCAL:
            raise ValueError("seed_entity_ids apply to LOCAL queries only")
        as_of, time_note = options.as_of, None
        if as_of is None:  # "Who led X in August 2023?": the question's own time is the as_of
            stated = question_time(question)
            # "where was she in 2023, and where is she now?": no one time for all of it
            if stated is not None and not asks_two_times(question) and (
                    asks_about_state(without_time(question, stated))
                    or parse_aggregate(question) is not None):
                as_of = stated.when
                time_note = (f"as_of {as_of.isoformat()} from the question ('{stated.phrase}', "
                             f"{stated.anchor} of the period)")
        budget = options.max_context_tokens or DEFAULT_CONTEXT_TOKENS
        parts: list[object] = [options.mode.value, question, as_of.isoformat() if as_of else None,
                               budget, options.community_level, options.top_k_communities,
                               options.max_iterations, options.convergence_threshold,
                               self.local_search.config.model_dump_json()]
        if options.seed_entity_ids:
            parts.append(sorted(set(options.seed_entity_ids)))
        if self.writer is not None:
            parts.append(self.writer.cache_tag)
        answered = options.with_fields(as_of=as_of, max_context_tokens=budget)
        return PreparedQuery(question, answered, time_note, json.dumps(parts))

    def query_stream(self, question: str, options: QueryOptions = DEFAULT_OPTIONS) -> AnswerStream:
        """Retrieval now; the answer as it is written (by the LLM when one is configured)
        while the stream is read. A cached answer streams at once. Every query route (REST
        query, stream, local, global, DRIFT; ``Knotwork.query``; CLI; MCP) answers through
        this method."""
        prepared = self.prepare(question, options)
        question, options, key = prepared.question, prepared.options, prepared.cache_key
        cache = self._rt.cache
        if cache is not None:
            hit = cache.get(CacheLayer.QUERY, self._group, key)
            if hit is not None:
                return AnswerStream(QueryResult.model_validate_json(hit))
        result, writable = self._answer(question, options)
        if prepared.time_note:
            result.reasoning_trace.insert(0, prepared.time_note)

        def store(final: QueryResult, cacheable: bool) -> None:
            if cache is None or not cacheable:
                return
            used = {e.id for e in final.entities} | {x for f in final.facts
                                                     for x in (f.source_id, f.target_id)}
            cache.set(CacheLayer.QUERY, self._group, key, final.model_dump_json(),
                      entity_ids=sorted(used))

        return AnswerStream(result, question=question, as_of=options.as_of,
                            writer=self.writer if writable else None, on_done=store)

    def _answer(self, question: str, options: QueryOptions) -> tuple[QueryResult, bool]:
        """The extractive answer with the citations it uses (one rule for every mode:
        retrieval/cited.py), and whether an LLM may rewrite it (not abstentions on an
        unknown name, not counts computed from the graph)."""
        result, writable = self._retrieve(question, options)
        cited = cite(result, lambda titles: self._title_relevance(question, titles),
                     computed=not writable)
        if len(cited.citations) != len(result.citations):
            cited.reasoning_trace.append(
                f"citations: {len(cited.citations)} of {len(result.citations)} kept "
                "(the evidence the answer shows, one per document, the documents about the question)")
        return cited, writable

    def _title_relevance(self, question: str, titles: Sequence[str]) -> list[float]:
        """Each document title's cosine similarity to the question."""
        vectors = embed_cached(self._rt.embedder, [question, *titles])
        asked = np.asarray(vectors[0], dtype=np.float64)
        return [float(np.dot(asked, np.asarray(v, dtype=np.float64))) for v in vectors[1:]]

    def _retrieve(self, question: str, options: QueryOptions) -> tuple[QueryResult, bool]:
        """The extractive answer as retrieval assembled it (every candidate citation), and
        whether it is written from evidence (False: an abstention on an unknown name, a count
        or list computed from the graph)."""
        mode, as_of = options.mode, options.as_of
        budget = options.max_context_tokens or DEFAULT_CONTEXT_TOKENS
        unknown = self.wrong_surname(question, mode)
        if unknown is not None:
            return unknown, False
        if mode in (QueryMode.AUTO, QueryMode.LOCAL):
            counted = self.aggregate(question, as_of=as_of)
            if counted is not None:
                return counted, False
        if mode in (QueryMode.AUTO, QueryMode.GLOBAL, QueryMode.DRIFT):
            listed = incident_answer(self._rt.documents, self._group, question, as_of=as_of,
                                     mode=QueryMode.GLOBAL)
            if listed is not None:
                return listed, False
        chosen = mode
        routed: Route | None = None
        if mode is QueryMode.AUTO:
            routed = self.route(question)
            chosen = routed.mode
        if chosen is QueryMode.GLOBAL:
            result = self.global_(question, as_of=as_of, max_context_tokens=budget,
                                  community_level=options.community_level,
                                  top_k=options.top_k_communities)
        elif chosen is QueryMode.DRIFT and mode is QueryMode.AUTO and chain_plan(question) \
                and (chained := answer_chain(self.local_search, question, as_of=as_of,
                                             max_context_tokens=budget)) is not None:
            result = chained  # "A, and B about A's answer": hop by hop, else DRIFT as before
        elif chosen is QueryMode.DRIFT:
            result = self.drift(question, as_of=as_of, max_context_tokens=budget,
                                max_iterations=options.max_iterations,
                                convergence_threshold=options.convergence_threshold,
                                parts=routed.parts if routed else ())
        else:
            result = self.local(question, as_of=as_of, max_context_tokens=budget,
                                seed_entity_ids=options.seed_entity_ids, calibrated=True)
        if result.mode_used in (QueryMode.GLOBAL, QueryMode.DRIFT) and result.answer != NO_ANSWER:
            account = routed is not None and routed.reason.startswith(ACCOUNT_CUE)
            result = self._check_support(question, result, account)
        if routed is not None:
            result.reasoning_trace.insert(0, f"auto: {routed.mode.value} ({routed.reason})")
        return result, True
