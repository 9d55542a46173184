"""LLM-written entity summaries (when an LLM is configured; extractive otherwise).

After a batch is built, the entities whose facts changed get a summary written from their
current facts (and their previous summary), several entities per call. The extractive summary
the graph builder wrote stays wherever the call fails or the model names no summary.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import structlog

from knotwork.domain.models import Entity, Fact
from knotwork.domain.ports import LLMClient, LLMError
from knotwork.ingestion.graph_builder import BatchResult
from knotwork.prompts import entity_summary
from knotwork.prompts.base import estimate_tokens, one_line

log = structlog.get_logger(__name__)

_PROMPT = f"{entity_summary.NAME}/{entity_summary.VERSION}"


@dataclass(slots=True)
class EntitySummaryStats:
    calls: int = 0
    failed_calls: int = 0
    written: int = 0


class LLMEntitySummarizer:
    def __init__(self, client: LLMClient, *, batch_size: int = 8, max_facts: int = 10,
                 input_tokens: int = 3000) -> None:
        self._client = client
        self._batch = max(1, min(batch_size, entity_summary.MAX_ENTITIES))
        self._max_facts = max_facts
        self._budget = input_tokens
        self.stats = EntitySummaryStats()

    def summarize(self, entities: Sequence[Entity], facts: Iterable[Fact],
                  previous: Mapping[str, str] | None = None) -> dict[str, str]:
        """entity id -> new summary, for the entities with at least one current fact."""
        previous = previous or {}
        by_entity: dict[str, list[Fact]] = {}
        for fact in facts:
            if fact.invalid_at is None and fact.expired_at is None:
                for endpoint in (fact.source_id, fact.target_id):
                    by_entity.setdefault(endpoint, []).append(fact)
        subjects: list[tuple[Entity, entity_summary.Subject]] = []
        for entity in entities:
            own = sorted(by_entity.get(entity.id, []), key=lambda f: (-f.confidence, f.fact))
            lines = list(dict.fromkeys(one_line(f.fact, 240) for f in own))[: self._max_facts]
            if lines:
                subjects.append((entity, entity_summary.Subject(
                    ref="", name=entity.name, type=str(entity.type), facts=lines,
                    previous_summary=one_line(previous.get(entity.id, ""), 400))))
        out: dict[str, str] = {}
        for group in self._groups(subjects):
            out.update(self._call(group))
        return out

    def _groups(self, subjects: list[tuple[Entity, entity_summary.Subject]]
                ) -> list[list[tuple[Entity, entity_summary.Subject]]]:
        groups: list[list[tuple[Entity, entity_summary.Subject]]] = [[]]
        used = 0
        for entity, subject in subjects:
            cost = estimate_tokens(" ".join([subject.previous_summary, *subject.facts])) + 12
            if groups[-1] and (len(groups[-1]) >= self._batch or used + cost > self._budget):
                groups.append([])
                used = 0
            groups[-1].append((entity, subject))
            used += cost
        return [g for g in groups if g]

    def _call(self, group: list[tuple[Entity, entity_summary.Subject]]) -> dict[str, str]:
        refs = {f"E{i}": entity for i, (entity, _) in enumerate(group, 1)}
        prompt = entity_summary.Input(entities=[
            subject.model_copy(update={"ref": ref})
            for ref, (_, subject) in zip(refs, group, strict=True)])
        self.stats.calls += 1
        try:
            reply = self._client.complete(entity_summary.render(prompt), entity_summary.Output,
                                          name=_PROMPT)
        except LLMError as exc:
            self.stats.failed_calls += 1
            log.warning("llm_entity_summary.failed", entities=len(group), error=str(exc))
            return {}
        if reply.value is None:
            self.stats.failed_calls += 1
            return {}
        out: dict[str, str] = {}
        for item in reply.value.summaries:
            entity = refs.get(item.ref.strip().strip("[]").upper())
            text = one_line(item.summary, 500)
            if entity is not None and text and entity.id not in out:
                out[entity.id] = text
        self.stats.written += len(out)
        return out


def apply_llm_summaries(client: LLMClient, result: BatchResult, *, batch_size: int = 8,
                        input_tokens: int = 3000) -> EntitySummaryStats:
    """Rewrite, in place, the summaries of the batch's entities whose facts changed."""
    touched = {e for f in result.facts.values() for e in (f.source_id, f.target_id)}
    entities = [result.entities[i] for i in sorted(touched) if i in result.entities]
    if not entities:
        return EntitySummaryStats()
    previous = {i: e.summary for i, e in result.previous_entities.items() if e.summary}
    summarizer = LLMEntitySummarizer(client, batch_size=batch_size, input_tokens=input_tokens)
    written = summarizer.summarize(entities, result.facts.values(), previous)
    for entity_id, summary in written.items():
        result.entities[entity_id] = result.entities[entity_id].model_copy(
            update={"summary": summary})
    return summarizer.stats
