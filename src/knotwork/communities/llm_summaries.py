"""LLM community reports: map-reduce over the community's facts within a token budget.

The facts (ranked as the extractive report ranks them, at most ``max_facts``) are numbered
F1..Fn. When they fit the budget, one ``community_report_reduce`` call writes the report from
them. Otherwise ``community_report_map`` turns budget-sized slices into partial summaries
P1..Pk (each remembering the facts it cites), repeated until the partials fit, and one reduce
call writes the report. Citations follow the refs the model cites back to the facts'
episodes; refs it invents are ignored. Any failure falls back to the extractive report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import structlog
from pydantic import BaseModel

from knotwork.communities.projection import FactView
from knotwork.communities.summaries import (
    MAX_CITATIONS,
    CommunityReport,
    CommunitySummarizer,
    ExtractiveSummarizer,
    SummaryInput,
    key_topics,
    rank_facts,
)
from knotwork.domain.ports import ChatMessage, LLMClient, LLMError
from knotwork.prompts import community_report_map as map_prompt
from knotwork.prompts import community_report_reduce as reduce_prompt
from knotwork.prompts.base import estimate_tokens, one_line

log = structlog.get_logger(__name__)

MAX_ROUNDS = 4  # map rounds before giving up on fitting the budget
_MAP = f"{map_prompt.NAME}/{map_prompt.VERSION}"
_REDUCE = f"{reduce_prompt.NAME}/{reduce_prompt.VERSION}"

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class _Note:
    ref: str
    text: str
    facts: tuple[str, ...]  # ids of the facts it rests on, best first

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text) + 4


class LLMCallFailed(Exception):
    """A map or reduce call raised or returned invalid output."""


class LLMCommunitySummarizer:
    def __init__(self, client: LLMClient, *, input_tokens: int = 3000, key_facts: int = 8,
                 max_facts: int = 120, max_tokens: int | None = None,
                 fallback: CommunitySummarizer | None = None) -> None:
        self._client = client
        self._budget = input_tokens
        self._key_facts = key_facts
        self._max_facts = max_facts
        self._max_tokens = max_tokens
        self._fallback = fallback or ExtractiveSummarizer(key_facts)
        self.calls = 0
        self.fallbacks = 0

    @property
    def name(self) -> str:
        return f"llm-map-reduce/{map_prompt.VERSION}.{reduce_prompt.VERSION}"

    def summarize(self, item: SummaryInput) -> CommunityReport:
        ranked = rank_facts(item)[: self._max_facts]
        if not ranked:
            return self._fallback.summarize(item)
        try:
            return self._report(item, ranked)
        except LLMCallFailed as exc:
            self.fallbacks += 1
            log.warning("llm_report.fallback_extractive", members=len(item.members),
                        error=str(exc))
            return self._fallback.summarize(item)

    # ------------------------------------------------------------------ map-reduce
    def _report(self, item: SummaryInput, ranked: list[FactView]) -> CommunityReport:
        by_id = {f.id: f for f in ranked}
        notes = [_Note(f"F{i}", one_line(f.text, 300), (f.id,)) for i, f in enumerate(ranked, 1)]
        reduce_input = self._reduce_input(item, [])
        room = self._budget - _prompt_tokens(reduce_prompt.render(
            reduce_input.model_copy(update={"notes": [reduce_prompt.Note(ref="F0", text="")]})))
        central = [m.name for m in self._central(item)]
        rounds = 0
        while sum(n.tokens for n in notes) > room and len(notes) > 1:
            rounds += 1
            if rounds > MAX_ROUNDS:
                raise LLMCallFailed("partial summaries do not fit the token budget")
            notes = self._map(notes, central, rounds)
        out = self._call(reduce_prompt.render(reduce_input.model_copy(update={"notes": [
            reduce_prompt.Note(ref=n.ref, text=n.text) for n in notes]})),
            reduce_prompt.Output, _REDUCE)
        cited = _facts_of(out.key_refs, notes)
        key = [f for f in cited if f in by_id][: self._key_facts]
        if not key:  # the model cited nothing we gave it: the best facts behind the notes
            key = _facts_of([n.ref for n in notes], notes)[: self._key_facts]
        citations: list[str] = []
        for fact_id in key:
            for episode in by_id[fact_id].episodes:
                if episode not in citations:
                    citations.append(episode)
        fallback = self._fallback.summarize(item) if not (out.title.strip()
                                                          and out.summary.strip()) else None
        return CommunityReport(
            title=one_line(out.title, 120) if fallback is None else fallback.title,
            summary=one_line(out.summary, 1200) if fallback is None else fallback.summary,
            key_topics=tuple(t for t in (one_line(t, 60) for t in out.key_topics) if t)
            or tuple(key_topics(item)),
            key_facts=tuple(key),
            citations=tuple(citations[:MAX_CITATIONS]),
        )

    def _map(self, notes: list[_Note], central: list[str], round_no: int) -> list[_Note]:
        room = self._budget - _prompt_tokens(map_prompt.render(map_prompt.Input(
            central_entities=central, facts=[map_prompt.NumberedFact(ref="F0", text="")])))
        groups: list[list[_Note]] = [[]]
        used = 0
        for note in notes:
            if groups[-1] and used + note.tokens > room:
                groups.append([])
                used = 0
            groups[-1].append(note)
            used += note.tokens
        partials: list[_Note] = []
        for n, group in enumerate(groups, 1):
            out = self._call(map_prompt.render(map_prompt.Input(
                central_entities=central,
                facts=[map_prompt.NumberedFact(ref=g.ref, text=g.text) for g in group])),
                map_prompt.Output, _MAP)
            refs = [r for point in out.key_points for r in point.refs]
            facts = _facts_of(refs, group) or _facts_of([g.ref for g in group], group)
            points = " ".join(one_line(p.text, 300) for p in out.key_points if p.text.strip())
            text = one_line(" ".join(x for x in (out.summary, points) if x.strip()), 1200)
            if not text:  # an empty answer: the slice's best facts, shortened, stand in
                log.info("llm_report.empty_partial", facts=len(group))
                kept = _shortened(group)
                text, facts = " ".join(g.text for g in kept), [f for g in kept for f in g.facts]
            prefix = "P" if round_no == 1 else f"P{round_no}."
            partials.append(_Note(f"{prefix}{n}", text, tuple(facts)))
        return partials

    def _call(self, messages: Sequence[ChatMessage], output: type[T], name: str) -> T:
        self.calls += 1
        try:
            reply = self._client.complete(messages, output, name=name,
                                          max_tokens=self._max_tokens)
        except LLMError as exc:
            raise LLMCallFailed(f"{name}: {exc}") from exc
        if reply.value is None:
            raise LLMCallFailed(f"{name}: {reply.error}")
        return reply.value

    def _central(self, item: SummaryInput) -> list[reduce_prompt.Member]:
        by_id = {m.id: m for m in item.members}
        return [reduce_prompt.Member(name=by_id[e].name, type=by_id[e].type)
                for e in item.central[:5] if e in by_id]

    def _reduce_input(self, item: SummaryInput,
                      notes: list[reduce_prompt.Note]) -> reduce_prompt.Input:
        return reduce_prompt.Input.model_construct(
            level=item.level, central=self._central(item), member_count=len(item.members),
            children=[one_line(c, 120) for c in item.children[:8]], notes=notes)


def _shortened(group: Sequence[_Note]) -> list[_Note]:
    """The first notes of a slice, up to a third of its tokens (at least one): a partial
    summary must be shorter than what it replaces, or map rounds would not converge."""
    limit = sum(n.tokens for n in group) / 3
    kept = [group[0]]
    for note in group[1:]:
        if sum(n.tokens for n in kept) + note.tokens > limit:
            break
        kept.append(note)
    return kept


def _facts_of(refs: Sequence[str], notes: Sequence[_Note]) -> list[str]:
    """Fact ids behind the cited refs (unknown refs ignored), in citation order."""
    by_ref = {n.ref.upper(): n for n in notes}
    out: list[str] = []
    for ref in refs:
        note = by_ref.get(ref.strip().strip("[]").upper())
        for fact_id in note.facts if note else ():
            if fact_id not in out:
                out.append(fact_id)
    return out


def _prompt_tokens(messages: Sequence[ChatMessage]) -> int:
    return sum(estimate_tokens(m.content) for m in messages)


def create_summarizer(client: LLMClient | None, *, input_tokens: int,
                      key_facts: int) -> CommunitySummarizer:
    """LLM map-reduce reports when a client is configured; extractive reports otherwise."""
    extractive = ExtractiveSummarizer(key_facts)
    if client is None:
        return extractive
    return LLMCommunitySummarizer(client, input_tokens=input_tokens, key_facts=key_facts,
                                  fallback=extractive)
