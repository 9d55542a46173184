"""BatchBuilder with in-memory lookups: resolution, fact dedup, mentions, summaries."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Entity, EntityType, Episode, Fact, RelationType
from knotwork.ingestion.extraction.types import (
    ChunkExtraction,
    LocalEntity,
    LocalRelation,
    Mention,
)
from knotwork.ingestion.facts import fact_id
from knotwork.ingestion.graph_builder import BatchBuilder, BatchResult
from knotwork.resolution.exact import entity_keys
from knotwork.resolution.normalize import normalize_name

G = "g"
NOW = datetime(2025, 7, 1, tzinfo=UTC)
R = RelationType
P, O, PR = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.PRODUCT


def d(y: int, m: int = 1, day: int = 1) -> datetime:
    return datetime(y, m, day, tzinfo=UTC)


class Memory:
    """The two read callbacks over dicts; `apply` stores a batch like the pipeline would."""

    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.facts: dict[str, Fact] = {}
        self.entity_queries: list[list[str]] = []

    def find(self, keys: Sequence[str]) -> list[Entity]:
        self.entity_queries.append(list(keys))
        wanted = set(keys)
        return [e for e in self.entities.values() if wanted & set(e.name_keys)]

    def facts_of(self, ids: Sequence[str]) -> list[Fact]:
        wanted = set(ids)
        return [f for f in self.facts.values() if f.source_id in wanted or f.target_id in wanted]

    def add_entity(self, name: str, etype: EntityType, subtype: str | None = None,
                   aliases: Sequence[str] = ()) -> Entity:
        key = normalize_name(name)
        ent = Entity(id=stable_id(G, "entity", key), group_id=G, name=name, canonical_name=key,
                     type=etype, subtype=subtype, aliases=list(aliases),
                     name_keys=entity_keys(key, [normalize_name(a) for a in aliases], etype),
                     created_at=d(2024), updated_at=d(2024))
        self.entities[ent.id] = ent
        return ent

    def build(self, *items: tuple[Episode, ChunkExtraction]) -> BatchResult:
        return BatchBuilder(G, NOW, self.find, self.facts_of).build(list(items))

    def apply(self, result: BatchResult) -> None:
        self.entities.update(result.entities)
        self.facts.update(result.facts)


JUNE_2025 = d(2025, 6)


def episode(eid: str, when: datetime = JUNE_2025) -> Episode:
    return Episode(id=eid, group_id=G, name=eid, content="...", document_id="doc",
                   valid_at=when, created_at=NOW)


def local(name: str, etype: EntityType, subtype: str | None = None, at: int = 0,
          aliases: Sequence[str] = ()) -> LocalEntity:
    mention = Mention(at, at + len(name), name, etype, 0.85, "rule", subtype)
    return LocalEntity(name, normalize_name(name), etype, subtype, 0.85, [mention],
                       set(aliases))


def extraction(entities: list[LocalEntity],
               relations: Sequence[tuple[int, int, RelationType, str]] = ()) -> ChunkExtraction:
    return ChunkExtraction(entities, [LocalRelation(s, t, rt, fact, 0.8, 0, len(fact))
                                      for s, t, rt, fact in relations])


def names(result: BatchResult) -> dict[str, Entity]:
    return {e.name: e for e in result.entities.values()}


@pytest.fixture
def mem() -> Memory:
    return Memory()


# ---------------------------------------------------------------- entity resolution
def test_new_entities_are_created_with_keys(mem: Memory) -> None:
    result = mem.build((episode("ep1", d(2025, 3)),
                        extraction([local("Priya Raman", P), local("Acme Corp", O, at=20)])))
    priya = names(result)["Priya Raman"]
    assert priya.id == stable_id(G, "entity", "priya raman")
    assert priya.canonical_name == "priya raman"
    assert set(priya.name_keys) == {"priya raman", "first:priya"}
    assert priya.created_at == d(2025, 3)  # the episode's time, not the batch time
    # a company is also found without its legal/industry suffix
    assert names(result)["Acme Corp"].name_keys == ["acme corp", "acme"]


def test_resolution_by_exact_key(mem: Memory) -> None:
    existing = mem.add_entity("Priya Raman", P)
    result = mem.build((episode("ep1"), extraction([local("Dr. Priya Raman", P)])))
    assert list(result.entities) == [existing.id]
    resolved = result.entities[existing.id]
    assert resolved.evidence_count == existing.evidence_count + 1
    assert resolved.updated_at == NOW
    assert resolved.name == "Priya Raman"


def test_resolution_by_alias(mem: Memory) -> None:
    existing = mem.add_entity("Globex Corporation", O, aliases=["Globex"])
    result = mem.build((episode("ep1"), extraction([local("Globex", O)])))
    assert list(result.entities) == [existing.id]
    assert any("globex" in q for q in mem.entity_queries)  # looked up by key, not scanned


def test_project_resolves_from_its_bare_name(mem: Memory) -> None:
    existing = mem.add_entity("Project Atlas", PR, "PROJECT")
    result = mem.build((episode("ep1"), extraction([local("Atlas", PR)])))
    assert list(result.entities) == [existing.id]
    assert "Atlas" in result.entities[existing.id].aliases


def test_unique_given_name_resolves_to_the_person(mem: Memory) -> None:
    priya = mem.add_entity("Priya Raman", P)
    mem.add_entity("Tom Becker", P)
    result = mem.build((episode("ep1"), extraction([local("Priya", P)])))
    assert list(result.entities) == [priya.id]
    assert "Priya" in result.entities[priya.id].aliases


def test_given_name_does_not_resolve_to_a_non_person(mem: Memory) -> None:
    mem.add_entity("Priya Labs", O)  # no first: key for organisations
    result = mem.build((episode("ep1"), extraction([local("Priya", P)])))
    (created,) = result.entities.values()
    assert created.canonical_name == "priya" and created.type is P


def test_ambiguous_given_name_creates_a_new_entity(mem: Memory) -> None:
    raman = mem.add_entity("Priya Raman", P)
    shah = mem.add_entity("Priya Shah", P)
    result = mem.build((episode("ep1"), extraction([local("Priya", P)])))
    (created,) = result.entities.values()
    assert created.id not in {raman.id, shah.id}
    assert created.canonical_name == "priya"
    # the two full-name people are left untouched
    assert "Priya" not in mem.entities[raman.id].aliases


def test_ambiguous_given_name_goes_to_the_person_the_document_names(mem: Memory) -> None:
    mem.add_entity("Priya Raman", P)
    shah = mem.add_entity("Priya Shah", P)
    # a thread where Priya Shah speaks, then "Priya" in a later chunk of the same document
    result = mem.build((episode("ep1"), extraction([local("Priya Shah", P)])),
                       (episode("ep2"), extraction([local("Priya", P)])))
    assert set(result.entities) == {shah.id}
    assert "Priya" in result.entities[shah.id].aliases


def test_given_name_context_is_per_document(mem: Memory) -> None:
    raman = mem.add_entity("Priya Raman", P)
    shah = mem.add_entity("Priya Shah", P)
    other_doc = episode("ep2").model_copy(update={"document_id": "other"})
    result = mem.build((episode("ep1"), extraction([local("Priya Shah", P)])),
                       (other_doc, extraction([local("Priya", P)])))
    assert not {raman.id} & set(result.entities)  # no context for ep2: no guess
    assert len(result.entities) == 2 and shah.id in result.entities


def test_nickname_resolves_to_the_formal_given_name(mem: Memory) -> None:
    rebecca = mem.add_entity("Rebecca Larsen", P)
    mem.add_entity("Tom Becker", P)
    result = mem.build((episode("ep1"), extraction([local("Becky", P)])))
    assert list(result.entities) == [rebecca.id]
    assert "Becky" in result.entities[rebecca.id].aliases


def test_given_name_only_entity_yields_to_the_full_name_in_context(mem: Memory) -> None:
    placeholder = mem.add_entity("Priya", P)
    mem.add_entity("Priya Raman", P)
    shah = mem.add_entity("Priya Shah", P)
    result = mem.build((episode("ep1"), extraction([local("Priya Shah", P), local("Priya", P, at=40)])))
    assert placeholder.id not in result.entities
    assert set(result.entities) == {shah.id}


def test_same_name_twice_in_one_batch_is_one_entity(mem: Memory) -> None:
    result = mem.build(
        (episode("ep1"), extraction([local("Sarah Lin", P)])),
        (episode("ep2"), extraction([local("Sarah Lin", P, at=5)])),
    )
    assert len(result.entities) == 1
    (sarah,) = result.entities.values()
    assert sarah.evidence_count == 1  # created once in this batch
    assert result.entities_per_episode == {"ep1": {sarah.id}, "ep2": {sarah.id}}


# ---------------------------------------------------------------- mentions
def test_graph_mentions_are_unique_per_episode(mem: Memory) -> None:
    atlas = mem.add_entity("Project Atlas", PR, "PROJECT")
    ex = extraction([local("Project Atlas", PR, "PROJECT", at=0), local("Atlas", PR, at=40)])
    result = mem.build((episode("ep1"), ex))
    assert result.graph_mentions == [("ep1", atlas.id)]
    assert result.entities_per_episode == {"ep1": {atlas.id}}
    # every span is still recorded, each with its own id
    assert sorted((m.span_start, m.text) for m in result.mentions) == [
        (0, "Project Atlas"), (40, "Atlas")]
    assert len({m.id for m in result.mentions}) == 2
    assert all(m.entity_id == atlas.id and m.chunk_id == "ep1" for m in result.mentions)


def test_relation_between_two_names_of_one_entity_is_dropped(mem: Memory) -> None:
    mem.add_entity("Project Atlas", PR, "PROJECT")
    ex = extraction([local("Project Atlas", PR, "PROJECT"), local("Atlas", PR, at=40)],
                    [(0, 1, R.RELATED_TO, "Project Atlas, also called Atlas.")])
    assert mem.build((episode("ep1"), ex)).facts == {}


# ---------------------------------------------------------------- facts
def _works_at(fact: str, company: str = "Acme Corp") -> ChunkExtraction:
    return extraction([local("Alice Chen", P), local(company, O, at=20)],
                      [(0, 1, R.WORKS_AT, fact)])


def test_fact_takes_validity_from_its_sentence_or_the_episode(mem: Memory) -> None:
    result = mem.build((episode("ep1", d(2025, 6)),
                        _works_at("Alice Chen works at Acme Corp since March 2024.")))
    (fact,) = result.facts.values()
    assert fact.valid_at == d(2024, 3)
    assert fact.episodes == ["ep1"]
    alice = names(result)["Alice Chen"].id
    acme = names(result)["Acme Corp"].id
    assert (fact.source_id, fact.target_id, fact.type) == (alice, acme, R.WORKS_AT)
    assert fact.id == fact_id(G, alice, acme, R.WORKS_AT, fact.fact)

    mem2 = Memory()
    (undated,) = mem2.build((episode("ep1", d(2025, 6)),
                             _works_at("Alice Chen works at Acme Corp."))).facts.values()
    assert undated.valid_at == d(2025, 6)


def test_repeated_fact_appends_the_episode(mem: Memory) -> None:
    mem.apply(mem.build((episode("ep1", d(2025, 1)), _works_at("Alice Chen works at Acme Corp."))))
    (first,) = mem.facts.values()
    result = mem.build((episode("ep2", d(2025, 2)),
                        _works_at("Alice Chen is employed by Acme Corp.")))
    assert list(result.facts) == [first.id]
    again = result.facts[first.id]
    assert again.episodes == ["ep1", "ep2"]
    assert again.fact == first.fact  # the first wording is kept
    assert again.confidence > first.confidence


def test_repeated_fact_within_one_batch_is_one_fact(mem: Memory) -> None:
    result = mem.build(
        (episode("ep1", d(2025, 1)), _works_at("Alice Chen works at Acme Corp.")),
        (episode("ep2", d(2025, 2)), _works_at("Alice Chen works at Acme Corp.")),
        (episode("ep2", d(2025, 2)), _works_at("Alice Chen works at Acme Corp.")),
    )
    (fact,) = result.facts.values()
    assert fact.episodes == ["ep1", "ep2"]


def test_new_employer_ends_the_old_one(mem: Memory) -> None:
    mem.apply(mem.build((episode("ep1", d(2023, 1)), _works_at("Alice Chen works at Acme Corp."))))
    (old,) = mem.facts.values()
    result = mem.build((episode("ep2", d(2025, 2)),
                        _works_at("Alice Chen works at Globex Corp.", "Globex Corp")))
    assert len(result.facts) == 2
    ended = result.facts[old.id]
    assert ended.invalid_at == d(2025, 2)
    assert ended.expired_at == NOW
    current = next(f for f in result.facts.values() if f.id != old.id)
    assert current.invalid_at is None


def test_older_news_in_a_later_batch_ends_as_in_one_batch(mem: Memory) -> None:
    """The later batch's fact started earlier (2019): the stored newer one (Globex, 2025)
    does not end, and it ends the older one, as when both come in one batch (issue 18:
    the outcome was the order of ingestion's, not the evidence's)."""
    globex = (episode("ep1", d(2025, 1)), _works_at("Alice Chen works at Globex Corp.",
                                                    "Globex Corp"))
    acme = (episode("ep2", d(2025, 6)), _works_at("Alice Chen works at Acme Corp since 2019."))
    mem.apply(mem.build(globex))
    later = mem.build(acme)
    together = Memory().build(globex, acme)

    def ends(facts: dict[str, Fact]) -> dict[str, datetime | None]:
        return {f.fact: f.invalid_at for f in facts.values()}

    assert ends({**mem.facts, **later.facts}) == ends(together.facts)
    assert ends(together.facts) == {"Alice Chen works at Globex Corp.": None,
                                    "Alice Chen works at Acme Corp since 2019.": d(2025, 1)}


def test_a_fact_that_already_ended_does_not_end_the_current_one(mem: Memory) -> None:
    mem.apply(mem.build((episode("ep1", d(2024, 4)),
                         _works_at("Alice Chen works at Globex Corp since March 2024.",
                                   "Globex Corp"))))
    (globex,) = mem.facts.values()
    result = mem.build((episode("ep2", d(2025, 6)),
                        _works_at("Alice Chen worked at Acme Corp until 2023.")))
    assert result.facts.get(globex.id, globex).invalid_at is None


# ---------------------------------------------------------------- summaries
def test_summaries_are_built_from_current_facts(mem: Memory) -> None:
    ex = extraction(
        [local("Dana Whitfield", P), local("Project Atlas", PR, "PROJECT", at=20),
         local("Kafka", EntityType.TECHNOLOGY, at=40)],
        [(0, 1, R.LEADS, "Dana Whitfield leads Project Atlas."),
         (1, 2, R.DEPENDS_ON, "Project Atlas depends on Kafka.")],
    )
    result = mem.build((episode("ep1"), ex))
    by_name = names(result)
    assert by_name["Dana Whitfield"].summary == "Dana Whitfield leads Project Atlas."
    atlas_summary = by_name["Project Atlas"].summary
    assert "Dana Whitfield leads Project Atlas." in atlas_summary
    assert "Project Atlas depends on Kafka." in atlas_summary
    assert by_name["Kafka"].summary == "Project Atlas depends on Kafka."


def test_summary_keeps_existing_sentences_and_is_bounded(mem: Memory) -> None:
    existing = mem.add_entity("Billing Service", PR, "SYSTEM")
    mem.entities[existing.id] = existing.model_copy(
        update={"summary": "Billing Service issues invoices."})
    techs = ["Kafka", "Redis", "PostgreSQL", "Elasticsearch", "Vault"]
    ents = [local("Billing Service", PR, "SYSTEM")] + [
        local(t, EntityType.TECHNOLOGY, at=20 * (i + 1)) for i, t in enumerate(techs)]
    rels = [(0, i + 1, R.DEPENDS_ON, f"Billing Service depends on {t}.")
            for i, t in enumerate(techs)]
    result = mem.build((episode("ep1"), extraction(ents, rels)))
    summary = result.entities[existing.id].summary
    assert summary.startswith("Billing Service issues invoices.")
    assert summary.count("depends on") == 3  # four sentences at most
    assert len(summary) <= 600


def test_summary_leaves_out_ended_facts(mem: Memory) -> None:
    result = mem.build(
        (episode("ep1", d(2023, 1)), _works_at("Alice Chen works at Acme Corp.")),
        (episode("ep2", d(2025, 2)), _works_at("Alice Chen works at Globex Corp.", "Globex Corp")),
    )
    by_name = names(result)
    assert by_name["Alice Chen"].summary == "Alice Chen works at Globex Corp."
    assert by_name["Acme Corp"].summary == ""


def test_summary_drops_a_sentence_whose_fact_ended_later(mem: Memory) -> None:
    mem.apply(mem.build((episode("ep1", d(2023, 1)), _works_at("Alice Chen works at Acme Corp."))))
    result = mem.build((episode("ep2", d(2025, 2)),
                        _works_at("Alice Chen works at Globex Corp.", "Globex Corp")))
    assert names(result)["Alice Chen"].summary == "Alice Chen works at Globex Corp."


def test_vendor_prefixed_technology_resolves_to_the_plain_name(mem: Memory) -> None:
    kafka = mem.add_entity("Kafka", EntityType.TECHNOLOGY)
    result = mem.build((episode("ep1"), extraction([local("Apache Kafka", EntityType.TECHNOLOGY)])))
    assert list(result.entities) == [kafka.id]
    assert "Apache Kafka" in result.entities[kafka.id].aliases


def test_summary_closes_a_stopless_fact_and_never_repeats_it(mem: Memory) -> None:
    roster = "CTO: Elena Kang"  # a table row or a label line: no closing stop
    ents = [local("Elena Kang", P), local("Globex Corp", O, at=30), local("Atlas", PR, at=50)]
    rels = [(0, 1, R.WORKS_AT, roster), (0, 2, R.LEADS, "Elena Kang leads Atlas.")]
    mem.apply(mem.build((episode("ep1"), extraction(ents, rels))))
    result = mem.build((episode("ep2"), extraction(ents, rels[:1])))
    summary = names(result)["Elena Kang"].summary
    assert summary == "CTO: Elena Kang. Elena Kang leads Atlas."


def test_summary_text_adds_and_withdraws_whole_sentences() -> None:
    from knotwork.ingestion.summary_text import summary_with, summary_without

    s = summary_with("", ["Dr. Ruiz leads Atlas", "Atlas uses Kafka."], 4, 600)
    assert s == "Dr. Ruiz leads Atlas. Atlas uses Kafka."
    assert summary_with(s, ["Dr. Ruiz leads Atlas", "Atlas uses Kafka."], 4, 600) == s
    # a sentence inside a longer one is not a whole sentence of the summary
    assert summary_without("Ann leads Atlas and Vega. Bo uses it.", ["Ann leads Atlas"]) \
        == "Ann leads Atlas and Vega. Bo uses it."
    assert summary_without(s, ["Dr. Ruiz leads Atlas"]) == "Atlas uses Kafka."
    assert summary_with("One. Two. Three.", ["Four", "Five"], 4, 600) == "One. Two. Three. Four."


def test_a_summary_cut_at_its_length_bound_is_still_recomputed_from_the_facts() -> None:
    """A machine summary cut mid-sentence at ``max_chars`` is still machine-written: it is
    recomputed from the facts (a crash's redo then equals a clean ingest), not kept and added to
    as a person's text would be."""
    from knotwork.ingestion.summary_text import extractive_summary, machine_written, resummarized

    when = datetime(2025, 1, 1, tzinfo=UTC)
    sentences = [f"Team {c} is led by a person whose long title is written out in full here"
                 for c in "ABCD"]
    facts = [Fact(id=f"f{i}", group_id="g", source_id="e", target_id=f"t{i}",
                  type=RelationType.LEADS, fact=s, episodes=[f"ep{i}"], created_at=when,
                  valid_at=when) for i, s in enumerate(sentences)]
    cut = extractive_summary(facts, max_chars=150)
    assert not cut.endswith(".")  # the bound cut the second sentence
    assert machine_written(cut, sentences)
    assert resummarized(cut, facts) == extractive_summary(facts)
    # a person's own words are kept, and the current fact sentences follow them
    own = "Runs the platform group since the reorganisation."
    assert not machine_written(own, sentences)
    assert resummarized(own, facts).startswith(own)


def test_a_sentence_that_ends_a_longer_one_is_not_taken_out_of_it() -> None:
    from knotwork.ingestion.summary_text import summary_without

    long = "Staff list — Ann Vo; Role: CTO."
    assert summary_without(f"{long} Ann Vo leads Atlas.", ["Ann Vo; Role: CTO"]) \
        == f"{long} Ann Vo leads Atlas."
    assert summary_without("Ann Vo leads Atlas. Ann Vo; Role: CTO.", ["Ann Vo; Role: CTO"]) \
        == "Ann Vo leads Atlas."
