"""Export / import one tenant: documents (SQL), graph, vectors and resolution lineage.

Layout of an export directory (JSON lines, sorted, so two exports of equal data are equal
byte for byte)::

    manifest.json               format, version, tenant, counts, embedder
    graph/entities.jsonl        Entity models (aliases, merge lineage, provenance included)
    graph/facts.jsonl           Fact models (bi-temporal fields, evidence episodes)
    graph/episodes.jsonl        Episode models
    graph/mentions.jsonl        [episode_id, entity_id]
    graph/communities.jsonl     Community models (members, parent/children)
    graph/community_state.json  the last build's record, if any
    vectors/<collection>.jsonl  VectorPoint models (vector + payload)
    sql/<table>.jsonl           TableDump pages of every tenant table (audit, review queue …)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from knotwork.domain.backup import TableDump
from knotwork.domain.models import Community, CommunityState, Entity, Episode, Fact
from knotwork.domain.ports import Collection, VectorPoint
from knotwork.runtime import Runtime

FORMAT = "knotwork-export"
VERSION = 1
Progress = Callable[[str], None]


class ExportManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    version: int = VERSION
    group_id: str
    exported_at: str
    embedding_dimension: int
    counts: dict[str, int]


class BackupError(ValueError):
    """The export directory is missing, malformed, or the target tenant is not empty."""


def _write_lines(path: Path, lines: Iterator[str]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(line + "\n")
            n += 1
    return n


def _models(items: list[BaseModel]) -> Iterator[str]:
    for item in items:
        yield item.model_dump_json()


def export_tenant(rt: Runtime, group_id: str, out: Path, progress: Progress | None = None) -> ExportManifest:
    say = progress or (lambda _: None)
    if out.exists() and any(out.iterdir()):
        raise BackupError(f"{out} is not empty")
    graph, counts = rt.graph, {}
    say("graph")
    entities = sorted(graph.list_entities(group_id), key=lambda e: e.id)
    facts = sorted(graph.list_facts(group_id), key=lambda f: f.id)
    n_episodes = graph.counts(group_id).episodes
    episode_ids = sorted(graph.recent_episode_ids(group_id, max(n_episodes, 1))) if n_episodes else []
    episodes = sorted(graph.get_episodes(group_id, episode_ids), key=lambda e: e.id)
    mentions = sorted((eid, ent) for eid in episode_ids for ent in graph.episode_entity_ids(group_id, eid))
    communities = sorted(graph.list_communities(group_id), key=lambda c: c.id)
    counts["entities"] = _write_lines(out / "graph/entities.jsonl", _models(list(entities)))
    counts["facts"] = _write_lines(out / "graph/facts.jsonl", _models(list(facts)))
    counts["episodes"] = _write_lines(out / "graph/episodes.jsonl", _models(list(episodes)))
    counts["mentions"] = _write_lines(out / "graph/mentions.jsonl",
                                      (json.dumps(list(pair)) for pair in mentions))
    counts["communities"] = _write_lines(out / "graph/communities.jsonl", _models(list(communities)))
    state = graph.get_community_state(group_id)
    if state is not None:
        (out / "graph/community_state.json").write_text(state.model_dump_json(), encoding="utf-8")
    for collection in Collection:
        say(f"vectors/{collection.value}")
        points = sorted(rt.vectors.scan(collection, group_id), key=lambda p: p.id)
        counts[f"vectors.{collection.value}"] = _write_lines(
            out / f"vectors/{collection.value}.jsonl", _models(list(points)))
    say("documents")
    per_table: dict[str, list[str]] = {}
    for dump in rt.documents.dump(group_id):
        per_table.setdefault(dump.table, [])
        if dump.rows:
            per_table[dump.table].append(dump.model_dump_json())
    for table, lines in per_table.items():
        counts[f"sql.{table}"] = sum(len(TableDump.model_validate_json(x).rows) for x in lines)
        _write_lines(out / f"sql/{table}.jsonl", iter(lines))
    manifest = ExportManifest(group_id=group_id, exported_at=datetime.now(UTC).isoformat(),
                              embedding_dimension=rt.embedder.dimension, counts=counts)
    (out / "manifest.json").write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    return manifest


def _read(path: Path) -> Iterator[str]:
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield line


def read_manifest(src: Path) -> ExportManifest:
    path = src / "manifest.json"
    if not path.is_file():
        raise BackupError(f"{src} is not a Knotwork export (no manifest.json)")
    try:
        manifest = ExportManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BackupError(f"{path} is malformed: {str(exc).splitlines()[0]}") from None
    if manifest.format != FORMAT or manifest.version > VERSION:
        raise BackupError(f"{path}: unsupported format {manifest.format} v{manifest.version}")
    return manifest


def tenant_is_empty(rt: Runtime, group_id: str) -> bool:
    g, d = rt.graph.counts(group_id), rt.documents.counts(group_id)
    return g.entities == g.facts == g.episodes == 0 and d.documents == 0


def import_tenant(rt: Runtime, src: Path, *, replace: bool = False,
                  progress: Progress | None = None) -> ExportManifest:
    """Load an export into its tenant. The tenant must be empty unless ``replace``."""
    say = progress or (lambda _: None)
    manifest = read_manifest(src)
    group = manifest.group_id
    if manifest.embedding_dimension != rt.embedder.dimension:
        raise BackupError(f"the export's vectors are {manifest.embedding_dimension}-d, "
                          f"this instance embeds {rt.embedder.dimension}-d")
    try:  # parse everything before writing anything
        entities = [Entity.model_validate_json(x) for x in _read(src / "graph/entities.jsonl")]
        facts = [Fact.model_validate_json(x) for x in _read(src / "graph/facts.jsonl")]
        episodes = [Episode.model_validate_json(x) for x in _read(src / "graph/episodes.jsonl")]
        mentions = [tuple(json.loads(x)) for x in _read(src / "graph/mentions.jsonl")]
        communities = [Community.model_validate_json(x)
                       for x in _read(src / "graph/communities.jsonl")]
        state_path = src / "graph/community_state.json"
        state = (CommunityState.model_validate_json(state_path.read_text(encoding="utf-8"))
                 if state_path.is_file() else None)
        vectors = {c: [VectorPoint.model_validate_json(x)
                       for x in _read(src / f"vectors/{c.value}.jsonl")] for c in Collection}
        dumps = [TableDump.model_validate_json(x)
                 for path in sorted((src / "sql").glob("*.jsonl")) for x in _read(path)]
    except ValueError as exc:
        raise BackupError(f"{src} holds malformed records: {str(exc).splitlines()[0]}") from None
    foreign = [e.id for e in entities if e.group_id != group] + [f.id for f in facts if f.group_id != group]
    if foreign:
        raise BackupError(f"records of another tenant in the export (e.g. {foreign[0]})")
    if not tenant_is_empty(rt, group):
        if not replace:
            raise BackupError(f"tenant {group!r} already holds data; pass --replace to overwrite it")
        say("clearing the tenant")
        rt.graph.delete_group(group)
        for collection in Collection:
            rt.vectors.delete_group(collection, group)
        rt.documents.delete_group(group)
    say("documents")
    rt.documents.restore(_in_table_order(dumps))
    say("graph")
    rt.graph.ensure_schema(group)
    rt.graph.upsert_episodes(episodes)
    rt.graph.upsert_entities(entities)
    rt.graph.upsert_facts(facts)
    rt.graph.upsert_mentions(group, [(a, b) for a, b in mentions])
    if communities:
        rt.graph.replace_communities(group, communities)
    if state is not None:
        rt.graph.save_community_state(state)
    for collection, points in vectors.items():
        say(f"vectors/{collection.value}")
        for start in range(0, len(points), 512):
            rt.vectors.upsert(collection, points[start : start + 512])
    return manifest


def _in_table_order(dumps: list[TableDump]) -> list[TableDump]:
    from knotwork.infra.sql.backup import table_order

    order = table_order()
    return sorted(dumps, key=lambda d: order.get(d.table, len(order)))
