"""DRIFT search: a global primer over the top communities, then local follow-ups.

The primer's key points and key entities shape the follow-up sub-queries (rule-based): the
parts of a multi-part question first, then "<key entity> <uncovered question words>" for
the entities the primer surfaced. Each follow-up is answered by local search (with the
multi-hop decomposition); after each step the coverage of the question's terms by the
gathered evidence is measured, and the loop stops at ``convergence_threshold`` or after
``max_iterations`` follow-ups.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from knotwork.domain.models import Citation, DriftIteration, Entity, QueryMode, QueryResult
from knotwork.ingestion.chunking import count_tokens
from knotwork.retrieval.citations import CitationResolver
from knotwork.retrieval.config import DriftConfig
from knotwork.retrieval.global_rank import TOPIC_WORDS
from knotwork.retrieval.global_search import GlobalOutcome, GlobalSearch
from knotwork.retrieval.lexical import STOPWORDS, stem, terms
from knotwork.retrieval.local import NO_ANSWER
from knotwork.retrieval.router import corpus_cue
from knotwork.retrieval.sentences import as_sentence, split_sentences

# question words that say how to answer, not what about: never counted for coverage
GENERIC = frozenset(stem(w) for w in (
    "main", "key", "major", "overall", "across", "summarize", "summarise", "summary", "overview",
    "theme", "themes", "topic", "topics", "general", "list", "all", "tell", "give", "describe",
    "explain", "kind", "kinds", "type", "types", "thing", "things", "happen", "happened",
    "anything", "everything", "much", "many", "also", "currently", "now"))
_WORD = re.compile(r"[A-Za-z0-9][\w'’-]*")

LocalAnswer = Callable[[str], QueryResult]  # a follow-up sub-query -> its local answer


def question_terms(question: str) -> list[str]:
    """The stems coverage is measured on: informative, not generic, no duplicates."""
    return list(dict.fromkeys(t for t in terms(question) if len(t) >= 2 and t not in GENERIC))


def _seen(evidence: Sequence[str]) -> set[str]:
    return {t for text in evidence for t in terms(text)}


def _covered(stem_: str, seen: set[str]) -> bool:
    """A stem is covered by itself or, for an analyst topic ("risk"), by its evidence words."""
    if stem_ in seen:
        return True
    return any(seen & set(terms(words)) for topic, words in TOPIC_WORDS.items()
               if terms(topic)[0] == stem_)


def coverage(question_stems: Sequence[str], evidence: Sequence[str]) -> float:
    """Share of the question's stems that the evidence texts cover."""
    if not question_stems:
        return 1.0
    seen = _seen(evidence)
    return round(sum(1 for t in question_stems if _covered(t, seen)) / len(question_stems), 4)


def uncovered_words(question: str, evidence: Sequence[str]) -> list[str]:
    """The question's own words (as written) whose stems the evidence does not cover."""
    seen = _seen(evidence)
    out: list[str] = []
    for word in _WORD.findall(question):
        if word.lower() in STOPWORDS:
            continue
        stems = terms(word)
        if stems and all(s not in GENERIC and not _covered(s, seen) for s in stems) \
                and word not in out:
            out.append(word)
    return out


@dataclass(frozen=True, slots=True)
class FollowUp:
    query: str
    subject: str = ""  # the primer entity it is about ("" for a part of the question)


def follow_ups(question: str, parts: Sequence[str], entities: Sequence[Entity],
               evidence: Sequence[str], asked: set[str], limit: int) -> list[FollowUp]:
    """The next sub-queries: the question's parts, then primer entities with what is missing."""
    out = [FollowUp(p) for p in parts if p.lower() not in asked]
    missing = uncovered_words(question, evidence)
    low_q = question.lower()
    for entity in entities[:limit]:
        words = [w for w in missing if w.lower() not in entity.name.lower()]
        if not words and entity.name.lower() in low_q:
            continue
        query = f"{entity.name} {' '.join(words)}".strip() if words else \
            f"{question.rstrip(' ?')} {entity.name}?"
        if query.lower() not in asked and all(f.query != query for f in out):
            out.append(FollowUp(query, entity.name))
    return out


def relevant(sentences: Sequence[str], stems: Sequence[str], subject: str = "") -> list[str]:
    """The sentences covering a question stem other than those of the follow-up's subject."""
    own = set(terms(subject))
    wanted = [t for t in stems if t not in own]
    return [s for s in sentences if any(_covered(t, set(terms(s))) for t in wanted)]


def _results(result: QueryResult, min_score: float) -> list[str]:
    """The sentences of a supported local answer ([] when it abstained)."""
    if result.confidence < min_score or result.answer == NO_ANSWER or not result.citations:
        return []
    return [s for s in split_sentences(result.answer) if s]


class DriftSearch:
    def __init__(self, global_search: GlobalSearch, local_answer: LocalAnswer,
                 min_answer_score: float, config: DriftConfig | None = None) -> None:
        self._global = global_search
        self._local = local_answer
        self._min = min_answer_score
        self._cfg = config or DriftConfig()

    def run(self, question: str, *, parts: Sequence[str] = (), as_of: datetime | None = None,
            max_iterations: int | None = None, convergence_threshold: float | None = None,
            max_context_tokens: int = 4000) -> QueryResult:
        cfg = self._cfg
        limit = cfg.max_iterations if max_iterations is None else max_iterations
        threshold = cfg.convergence_threshold if convergence_threshold is None else convergence_threshold
        stems = question_terms(question)
        trace = [(f"drift: coverage of {', '.join(stems) or 'no terms'}; "
                  f"up to {limit} follow-ups, converge at {threshold:.2f}")]
        primer = self._global.search(question, top_k=cfg.primer_communities, as_of=as_of,
                                     max_points=cfg.primer_points)
        trace += [f"primer: {line}" for line in primer.trace]
        evidence: list[str] = [p.text for p in primer.points]
        chunk_ids = [c for p in primer.points for c in p.chunk_ids]
        iterations = [DriftIteration(query=question, mode=QueryMode.GLOBAL, results=list(evidence),
                                     coverage=coverage(stems, evidence),
                                     confidence=round(primer.points[0].score, 3) if primer.points else 0.0,
                                     chunk_ids=list(dict.fromkeys(chunk_ids)))]
        entities = self._global.key_entities(primer) if primer.available else []
        entities = _rank_entities(entities, primer)
        answers: list[tuple[str, QueryResult, list[str]]] = []
        # a one-part question is its own first follow-up: local search answers it directly
        parts = list(parts) if len(parts) > 1 else [question]
        asked: set[str] = set()
        while len(iterations) - 1 < limit:
            pending = follow_ups(question, parts, entities, evidence, asked, cfg.follow_up_entities)
            parts_left = any(not f.subject for f in pending)
            if iterations[-1].coverage >= threshold and not parts_left:
                break
            if not pending:
                trace.append("no follow-up left")
                break
            step = pending[0]
            asked.add(step.query.lower())
            result = self._local(step.query)
            found = relevant(_results(result, self._min), stems, step.subject)
            if found:
                answers.append((step.query, result, found))
                evidence.extend(found)
            iterations.append(DriftIteration(
                query=step.query, mode=result.mode_used, results=found,
                coverage=coverage(stems, evidence), confidence=result.confidence,
                chunk_ids=[c.chunk_id for c in result.citations] if found else []))
            trace.append(f"follow-up {len(iterations) - 1}: {step.query} → "
                         f"{'; '.join(found)[:160] or 'nothing relevant'} "
                         f"(coverage {iterations[-1].coverage:.2f})")
        final = iterations[-1].coverage
        if final >= threshold:
            trace.append(f"converged: coverage {final:.2f} >= {threshold:.2f}")
        cue = corpus_cue(question)
        if cue:
            trace.append(f"corpus-wide question ({cue}): primer key points first")
        return self._result(primer, answers, iterations, trace, stems, max_context_tokens,
                            primer_first=cue is not None)

    def _result(self, primer: GlobalOutcome, answers: list[tuple[str, QueryResult, list[str]]],
                iterations: list[DriftIteration], trace: list[str], stems: Sequence[str],
                max_context_tokens: int, *, primer_first: bool = False) -> QueryResult:
        """Follow-up findings first; a primer point only when it covers something they miss.
        A corpus-wide question is answered by the primer's key points first instead."""
        cfg = self._cfg
        final = iterations[-1].coverage
        lines: list[str] = []
        used_points = []
        if primer_first:
            for point in primer.points:
                if point.text not in lines:
                    lines.append(point.text)
                    used_points.append(point)
        for _, _, found in answers:
            lines.extend(f for f in found if f not in lines)
        for point in ([] if primer_first else primer.points):
            covered = _seen(lines)
            if any(not _covered(t, covered) and _covered(t, _seen([point.text])) for t in stems) \
                    and point.text not in lines:
                lines.append(point.text)
                used_points.append(point)
        lines = lines[: cfg.answer_points]
        resolver = CitationResolver(self._global.documents)
        citations: list[Citation] = []
        seen: set[str] = set()
        primer_citations = resolver.resolve([(p.text, p.chunk_ids) for p in used_points], cfg.citations)
        for c in [c for _, r, _ in answers for c in r.citations] + primer_citations:
            if c.chunk_id not in seen:
                seen.add(c.chunk_id)
                citations.append(c)
        if not lines:
            trace.append("abstained: neither the primer nor a follow-up found support")
            return QueryResult(answer=NO_ANSWER, citations=[], confidence=0.1,
                               mode_used=QueryMode.DRIFT, reasoning_trace=trace,
                               key_points=primer.key_points(),
                               communities=[c for c, _ in primer.communities],
                               iterations=iterations, final_coverage=final,
                               community_level=primer.level)
        scores = [r.confidence for _, r, _ in answers] + [p.score for p in used_points]
        confidence = round(min(1.0, max(scores) * (0.6 + 0.4 * final)), 3)
        context = "\n".join(
            [f"Primer: {p.text}" for p in primer.points]
            + [f"Follow-up: {q}\n{r.context}" for q, r, _ in answers])
        entities = {e.id: e for _, r, _ in answers for e in r.entities}
        trace.append(f"answer: {len(lines)} findings ({len(used_points)} from the primer), "
                     f"{len(citations)} citations")
        return QueryResult(
            answer="\n".join(f"- {as_sentence(line)}" for line in lines),
            citations=citations[: cfg.citations], confidence=confidence, mode_used=QueryMode.DRIFT,
            context=_clip(context, max_context_tokens), reasoning_trace=trace,
            entities=list(entities.values()),
            facts=[f for _, r, _ in answers for f in r.facts][:20],
            key_points=primer.key_points(), communities=[c for c, _ in primer.communities],
            community_level=primer.level, iterations=iterations, final_coverage=final)


def _rank_entities(entities: Sequence[Entity], primer: GlobalOutcome) -> list[Entity]:
    """Entities named by the primer's key points first (best point first), then the rest."""
    def first_point(entity: Entity) -> int:
        for i, point in enumerate(primer.points):
            if entity.name.lower() in point.text.lower():
                return i
        return len(primer.points)

    return sorted(entities, key=first_point)




def _clip(text: str, budget: int) -> str:
    out: list[str] = []
    used = 0
    for line in text.splitlines():
        cost = count_tokens(line)
        if used + cost > budget:
            break
        out.append(line)
        used += cost
    return "\n".join(out)
