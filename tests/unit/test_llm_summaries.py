"""LLM community reports (map-reduce within a token budget) and LLM entity summaries."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from knotwork.communities.llm_summaries import LLMCommunitySummarizer, create_summarizer
from knotwork.communities.projection import EntityView, FactView
from knotwork.communities.summaries import ExtractiveSummarizer, SummaryInput
from knotwork.domain.models import Entity, EntityType, Fact, RelationType
from knotwork.domain.ports import LLMError
from knotwork.infra.llm.fake import FakeCall, FakeLLMClient
from knotwork.ingestion.entity_summaries import LLMEntitySummarizer, apply_llm_summaries
from knotwork.ingestion.graph_builder import BatchResult
from knotwork.prompts import community_report_map, community_report_reduce, entity_summary


def _community(n_facts: int) -> SummaryInput:
    members = [EntityView(f"e{i}", f"Service {i:02d}", "PRODUCT") for i in range(n_facts + 1)]
    facts = [FactView(f"f{i}", f"e{i}", f"e{i + 1}", "DEPENDS_ON",
                      f"Service {i:02d} depends on Service {i + 1:02d} for billing events.",
                      0.9, (f"ep{i}",)) for i in range(n_facts)]
    centrality = {m.id: 1.0 / (i + 1) for i, m in enumerate(members)}
    return SummaryInput(level=0, members=members, central=[m.id for m in members[:3]],
                        centrality=centrality, facts=facts)


def _refs(prompt: str) -> list[str]:
    return re.findall(r"^\[([FP]\d[\d.]*)\]", prompt, re.MULTILINE)


def _responder(call: FakeCall) -> community_report_map.Output | community_report_reduce.Output:
    refs = _refs(call.prompt)
    if call.output is community_report_map.Output:
        return community_report_map.Output(summary=f"Slice of {len(refs)} facts.", key_points=[
            community_report_map.KeyPoint(text="Billing chain.", refs=refs[:2])])
    return community_report_reduce.Output(
        title="Billing services", summary="Services that pass billing events along.",
        key_topics=["billing"], key_refs=[*refs[:2], "F999"])  # F999: an invented ref


def test_one_call_when_the_facts_fit_with_cited_facts_kept() -> None:
    fake = FakeLLMClient(responder=_responder)
    summarizer = LLMCommunitySummarizer(fake, input_tokens=3000, key_facts=5)
    item = _community(6)
    report = summarizer.summarize(item)
    assert len(fake.calls) == 1 and fake.calls[0].output is community_report_reduce.Output
    assert report.title == "Billing services" and report.key_topics == ("billing",)
    cited = _refs(fake.calls[0].prompt)[:2]
    facts = {f"F{i}": f for i, f in enumerate(
        sorted(item.facts, key=lambda f: -(item.centrality[f.source] + item.centrality[f.target])), 1)}
    assert report.key_facts == tuple(facts[r].id for r in cited)  # the invented ref is ignored
    assert report.citations == tuple(facts[r].episodes[0] for r in cited)
    assert summarizer.name.startswith("llm-map-reduce/")


def test_map_reduce_when_over_budget_and_citations_follow_partials() -> None:
    fake = FakeLLMClient(responder=_responder)
    item = _community(40)
    summarizer = LLMCommunitySummarizer(fake, input_tokens=450, key_facts=8)
    report = summarizer.summarize(item)
    maps = [c for c in fake.calls if c.output is community_report_map.Output]
    reduces = [c for c in fake.calls if c.output is community_report_reduce.Output]
    assert len(maps) >= 2 and len(reduces) == 1
    assert fake.calls[-1] is reduces[0]  # reduce last
    # every fact went into exactly one map call
    mapped = [r for c in maps for r in _refs(c.prompt)]
    assert sorted(mapped) == sorted(f"F{i}" for i in range(1, 41))
    # the reduce saw the partials, and the report cites the facts behind P1 and P2
    assert _refs(reduces[0].prompt)[:2] == ["P1", "P2"]
    first_two = [_refs(maps[0].prompt)[:2], _refs(maps[1].prompt)[:2]]
    by_ref = {}
    for call in maps:
        for line in call.prompt.splitlines():
            m = re.match(r"^\[(F\d+)\] (.*)$", line)
            if m:
                by_ref[m.group(1)] = m.group(2)
    texts = {f.id: f.text for f in item.facts}
    assert [texts[f] for f in report.key_facts] == [by_ref[r] for r in first_two[0] + first_two[1]]
    assert len(report.citations) == 4
    # each call stayed within the budget (estimated the same way)
    from knotwork.prompts.base import estimate_tokens
    assert all(estimate_tokens(c.prompt) <= 450 for c in fake.calls)


def test_failures_fall_back_to_the_extractive_report() -> None:
    item = _community(5)
    for failure in (LLMError("HTTP 500"), "garbage, not JSON"):
        summarizer = LLMCommunitySummarizer(FakeLLMClient([failure]))
        report = summarizer.summarize(item)
        assert report == ExtractiveSummarizer(8).summarize(item)
        assert summarizer.fallbacks == 1


def test_empty_title_falls_back_but_llm_citations_stay() -> None:
    fake = FakeLLMClient([community_report_reduce.Output(
        title=" ", summary="", key_topics=[], key_refs=["F1"])])
    item = _community(3)
    report = LLMCommunitySummarizer(fake).summarize(item)
    extractive = ExtractiveSummarizer(8).summarize(item)
    assert report.title == extractive.title and report.summary == extractive.summary
    assert len(report.key_facts) == 1


def test_create_summarizer_is_extractive_without_an_llm() -> None:
    assert isinstance(create_summarizer(None, input_tokens=3000, key_facts=8),
                      ExtractiveSummarizer)
    assert isinstance(create_summarizer(FakeLLMClient(), input_tokens=3000, key_facts=8),
                      LLMCommunitySummarizer)


# --------------------------------------------------------------------------- entity summaries

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _entity(i: str, name: str, summary: str = "") -> Entity:
    return Entity(id=i, group_id="g", name=name, canonical_name=name, type=EntityType.PERSON,
                  summary=summary, created_at=NOW, updated_at=NOW)


def _fact(i: str, src: str, tgt: str, text: str, ended: bool = False) -> Fact:
    return Fact(id=i, group_id="g", source_id=src, target_id=tgt, type=RelationType.LEADS,
                fact=text, created_at=NOW, invalid_at=NOW if ended else None)


def test_entity_summaries_batch_entities_and_keep_extractive_on_failure() -> None:
    def responder(call: FakeCall) -> entity_summary.Output:
        refs = re.findall(r"^\[(E\d+)\]", call.prompt, re.MULTILINE)
        return entity_summary.Output(summaries=[
            entity_summary.Summary(ref=r, summary=f"Summary of {r}.") for r in refs])

    result = BatchResult()
    result.entities = {"a": _entity("a", "Dana", "extractive a"),
                       "b": _entity("b", "Atlas", "extractive b"),
                       "c": _entity("c", "Idle", "extractive c")}
    result.facts = {"f1": _fact("f1", "a", "b", "Dana leads Atlas."),
                    "f2": _fact("f2", "a", "b", "Old fact.", ended=True)}
    result.previous_entities = {"a": _entity("a", "Dana", "Dana was new.")}
    fake = FakeLLMClient(responder=responder)
    stats = apply_llm_summaries(fake, result)
    assert stats.calls == 1 and stats.written == 2
    assert result.entities["a"].summary.startswith("Summary of E")
    assert result.entities["c"].summary == "extractive c"  # no fact changed
    prompt = fake.calls[0].prompt
    assert "Dana leads Atlas." in prompt and "Old fact." not in prompt
    assert "Previous summary: Dana was new." in prompt

    failing = BatchResult(entities=dict(result.entities), facts=dict(result.facts))
    failing.entities["a"] = _entity("a", "Dana", "extractive a")
    stats = apply_llm_summaries(FakeLLMClient([LLMError("down")]), failing)
    assert stats.failed_calls == 1 and failing.entities["a"].summary == "extractive a"


def test_entity_summaries_split_by_batch_size() -> None:
    entities = [_entity(f"e{i}", f"Person {i}") for i in range(5)]
    facts = [_fact(f"f{i}", f"e{i}", f"e{(i + 1) % 5}", f"Person {i} leads Person {i + 1}.")
             for i in range(5)]
    fake = FakeLLMClient()
    summarizer = LLMEntitySummarizer(fake, batch_size=2)
    assert summarizer.summarize(entities, facts) == {}  # the fake names no summary
    assert len(fake.calls) == 3
