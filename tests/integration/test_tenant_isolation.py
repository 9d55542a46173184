"""Randomized tenant isolation: 3 tenants, 1,000 queries, zero cross-tenant results.

Every tenant holds a world with the same shape and some shared names (each tenant has a
"Project Atlas", led by someone different) plus names only it uses, so a leak shows up as a
foreign document, entity, fact, name or citation. Queries ask about any tenant's names, in
every mode, with and without ``as_of``, through the Python API and the REST API.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from knotwork.core import Knotwork
from knotwork.domain.models import EpisodeSource, QueryMode, RawDocument, SourceSystem
from knotwork.services.api.app import create_app

pytestmark = [pytest.mark.integration, pytest.mark.models]

FIRST = ["Aino", "Bram", "Cleo", "Dario", "Esme", "Farid", "Greta", "Hugo", "Ines", "Jonas",
         "Kaia", "Lior", "Mila", "Nils", "Oona", "Pavel", "Quinn", "Rosa", "Soren", "Tilde"]
LAST = ["Arnesen", "Bakker", "Castell", "Dufresne", "Eklund", "Ferraro", "Gallo", "Haugen",
        "Ivanova", "Jansen", "Kowal", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov"]
PROJECTS = ["Atlas", "Kestrel", "Juniper", "Quartz", "Harbor", "Nimbus", "Falcon", "Ember"]
QUERIES = 1000
REST_QUERIES = 100


@dataclass
class World:
    group: str
    people: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    documents: list[RawDocument] = field(default_factory=list)


def _world(group: str, rng: random.Random, tenant_no: int) -> World:
    world = World(group)
    names = [f"{f} {l}" for f in FIRST for l in LAST]
    rng.shuffle(names)
    world.people = names[:12]
    # "Atlas" in every tenant; the rest drawn per tenant, plus one name only this tenant has
    world.projects = ["Atlas", *rng.sample(PROJECTS[1:], 3), f"Zephyr{tenant_no}"]
    for i, project in enumerate(world.projects):
        lead, member, manager = rng.sample(world.people, 3)
        text = (f"{lead} leads Project {project}. {member} works on Project {project} and "
                f"reports to {manager}. Project {project} uses PostgreSQL and Kafka.")
        world.documents.append(RawDocument(
            source_system=SourceSystem.CONFLUENCE, source_id=f"{group}-{i}",
            title=f"Project {project} charter", content=text,
            created_at=datetime(2026, 1 + i, 1, tzinfo=UTC),
            episode_source=EpisodeSource.TEXT))
    return world


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[
        tuple[Knotwork, list[World]]]:
    from knotwork.settings import EmbedderBackend, Settings

    rng = random.Random(20261122)
    settings = Settings(data_dir=tmp_path_factory.mktemp("tenants") / "data",  # type: ignore[arg-type]
                        group="iso_default", falkordb_url=falkordb_url,
                        embedder=EmbedderBackend.HASHING)
    with Knotwork(settings) as kw:
        made = [_world(f"iso_{i}_{rng.randrange(10**6)}", rng, i) for i in range(3)]
        for world in made:
            kw.ingest_documents(world.documents, group_id=world.group)
            kw.build_communities(world.group)
        yield kw, made


def _own(kw: Knotwork, world: World) -> tuple[set[str], set[str], set[str]]:
    documents = {d.id for d in kw.runtime.documents.list_documents(world.group)}
    entities = {e.id for e in kw.runtime.graph.list_entities(world.group)}
    facts = {f.id for f in kw.runtime.graph.list_facts(world.group)}
    return documents, entities, facts


def _foreign_tokens(world: World, others: list[World]) -> set[str]:
    own = {w for name in world.people + world.projects for w in name.split()}
    return {w for o in others for name in o.people + o.projects for w in name.split()} - own


def test_1000_random_queries_never_cross_tenants(worlds: tuple[Knotwork, list[World]]) -> None:
    kw, made = worlds
    rng = random.Random(7)
    owned = {w.group: _own(kw, w) for w in made}
    foreign = {w.group: _foreign_tokens(w, [o for o in made if o is not w]) for w in made}
    assert all(all(sets) for sets in owned.values())
    templates = ["Who leads Project {p}?", "Who does {n} report to?", "What does Project {p} use?",
                 "What is {n} working on?", "Summarize the main projects and their leads.",
                 "Who manages the people on Project {p}, and what do they use?"]
    modes = [QueryMode.LOCAL, QueryMode.LOCAL, QueryMode.AUTO, QueryMode.GLOBAL, QueryMode.DRIFT]
    answered = 0
    for i in range(QUERIES):
        world = rng.choice(made)
        about = rng.choice(made)  # often another tenant's names: must find nothing of theirs
        question = rng.choice(templates).format(p=rng.choice(about.projects),
                                                n=rng.choice(about.people))
        as_of = datetime(2026, rng.randint(1, 12), 1, tzinfo=UTC) if i % 7 == 0 else None
        result = kw.query(question, group_id=world.group, mode=rng.choice(modes), as_of=as_of)
        documents, entities, _ = owned[world.group]
        for citation in result.citations:
            assert citation.document_id in documents, (world.group, question, citation)
            assert citation.entity_id is None or citation.entity_id in entities
        text = f"{result.answer}\n{result.context or ''}"
        # a foreign name the question itself carries may be echoed ("nothing about X")
        asked = set(re.findall(r"\w+", question))
        leaked = {t for t in foreign[world.group] - asked if t in re.findall(r"\w+", text)}
        assert not leaked, (world.group, question, leaked)
        answered += bool(result.citations)
    assert answered > QUERIES // 3  # the queries did find their own tenant's data


def test_rest_queries_and_entity_reads_stay_in_their_tenant(
        worlds: tuple[Knotwork, list[World]]) -> None:
    kw, made = worlds
    rng = random.Random(11)
    owned = {w.group: _own(kw, w) for w in made}
    # the app serves the module's instance (qdrant-edge allows one opener per data dir)
    with TestClient(create_app(kw.settings, knotwork=kw)) as client:
        _rest_queries(client, made, owned, rng)


def _rest_queries(client: TestClient, made: list[World],
                  owned: dict[str, tuple[set[str], set[str], set[str]]], rng: random.Random) -> None:
    for _ in range(REST_QUERIES):
        world, about = rng.choice(made), rng.choice(made)
        project = rng.choice(about.projects)
        body = {"query": f"Who leads Project {project}?", "group_id": world.group,
                "mode": rng.choice(["LOCAL", "AUTO", "GLOBAL"])}
        response = client.post("/v1/graphrag/query", json=body)
        assert response.status_code == 200, response.text
        documents, entities, _ = owned[world.group]
        for citation in response.json()["citations"]:
            assert citation["document_id"] in documents
        communities = client.get("/v1/communities",
                                 params={"group_id": world.group, "include_members": True})
        assert communities.status_code == 200
        listed = communities.json()["communities"]
        assert listed and all(set(c["entity_ids"]) <= entities for c in listed)
