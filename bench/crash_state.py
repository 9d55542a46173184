"""What a tenant holds in its three stores, in a form two runs can be compared by.

``snapshot`` reads the graph (entities, facts with confidences and evidence, episodes, MENTIONS),
the vectors (every point's id, payload and vector, rounded) and the SQL tables of the tenant.
Ids are deterministic (tenant, source and extraction keys), so two data directories ingested
under the same tenant name compare id by id. Left out: what records *when* or *how often*
something was written rather than what is stored (run times, the entity upsert counter, the
audit log, which a crash legitimately lengthens); a merge record is compared by what it merged
(its id and snapshot hold the time it was taken).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knotwork.domain.ports import Collection

if TYPE_CHECKING:
    from knotwork.core import Knotwork

# one store's objects: id -> a canonical JSON text of what is compared
Part = dict[str, str]
Snapshot = dict[str, Part]

_RUN_TIMES = frozenset({"last_processed_at", "updated_at", "expired_at"})
_SQL_SKIP = frozenset({"audit_log"})  # a log of what happened, crashes included
_SQL_ROW_TIMES = frozenset({"chunks", "entity_mentions", "resolution_reviews", "entity_merges"})


def _canon(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _row_key(table: str, row: Mapping[str, object]) -> str:
    if "id" in row:
        return f"{table}:{row['id']}"
    return f"{table}:" + _canon({k: row[k] for k in sorted(row)})


def _sql(kw: Knotwork, group: str) -> Part:
    out: Part = {}
    for dump in kw.runtime.documents.dump(group):
        if dump.table in _SQL_SKIP:
            continue
        for row in dump.rows:
            if dump.table == "entity_merges":  # its id and snapshot carry the run's clock
                merge = {"target_id": row.get("target_id"), "source_ids": row.get("source_ids"),
                         "actor": row.get("actor"), "undone": row.get("undone_at") is not None}
                out[f"entity_merges:{_canon(merge)}"] = _canon(merge)
                continue
            kept = {k: v for k, v in row.items() if k not in _RUN_TIMES
                    and not (k == "created_at" and dump.table in _SQL_ROW_TIMES)}
            out[_row_key(dump.table, kept)] = _canon(kept)
    return out


def _vectors(kw: Knotwork, group: str) -> Part:
    out: Part = {}
    for collection in (Collection.ENTITIES, Collection.FACTS, Collection.CHUNKS,
                       Collection.SENTENCES):
        for point in kw.runtime.vectors.scan(collection, group, 512, with_vectors=True):
            payload = {k: v for k, v in dict(point.payload).items() if k not in _RUN_TIMES}
            vector = [round(x, 3) for x in (point.vector or [])]
            out[f"{collection.value}:{point.id}"] = _canon({"payload": payload, "vector": vector})
    return out


def snapshot(kw: Knotwork) -> Snapshot:
    group, graph = kw.settings.group, kw.runtime.graph
    entities = graph.list_entities(group)
    ents: Part = {}
    for e in entities:
        ents[e.id] = _canon({
            "name": e.name, "canonical": e.canonical_name, "type": e.type.value,
            "subtype": e.subtype, "aliases": sorted(e.aliases), "keys": sorted(e.name_keys),
            "summary": e.summary, "confidence": round(e.confidence, 6),
            "evidence": e.evidence_count, "properties": e.properties,
            "merged_from": sorted(e.merged_from), "created_at": e.created_at})
    facts: Part = {}
    for f in graph.list_facts(group):
        facts[f.id] = _canon({
            "source": f.source_id, "target": f.target_id, "type": f.type.value, "fact": f.fact,
            "confidence": round(f.confidence, 6), "episodes": sorted(f.episodes),
            "valid_at": f.valid_at, "invalid_at": f.invalid_at, "method": f.extraction_method})
    total = graph.counts(group).episodes
    episode_ids = graph.recent_episode_ids(group, total) if total else []
    episodes: Part = {e.id: _canon({"document": e.document_id, "name": e.name,
                                    "content": e.content, "valid_at": e.valid_at})
                      for e in graph.get_episodes(group, episode_ids)}
    mentions: Part = {f"{ep}>{e.id}": "" for e in entities
                      for ep in graph.entity_episode_ids(group, e.id)}
    return {"entities": ents, "facts": facts, "episodes": episodes, "graph_mentions": mentions,
            "vectors": _vectors(kw, group), "sql": _sql(kw, group)}


@dataclass
class Difference:
    part: str
    key: str
    kind: str  # "missing" (in the clean run only), "extra" (in the crashed run only), "changed"
    clean: str | None
    crashed: str | None

    def line(self) -> str:
        if self.kind != "changed":
            return f"{self.part} {self.kind} {self.key}: {_short(self.clean or self.crashed)}"
        before, after = json.loads(self.clean or "null"), json.loads(self.crashed or "null")
        if isinstance(before, dict) and isinstance(after, dict):  # only the fields that differ
            fields = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
            return f"{self.part} {self.key}: " + "; ".join(
                f"{k}: {_short(_canon(before.get(k)), 300)} -> {_short(_canon(after.get(k)), 300)}"
                for k in fields)
        return f"{self.part} {self.key}: {_short(self.clean)} -> {_short(self.crashed)}"


def _short(text: str | None, limit: int = 160) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compare(clean: Snapshot, crashed: Snapshot) -> list[Difference]:
    out: list[Difference] = []
    for part in clean.keys() | crashed.keys():
        a, b = clean.get(part, {}), crashed.get(part, {})
        for key in sorted(a.keys() | b.keys()):
            if key not in b:
                out.append(Difference(part, key, "missing", a[key], None))
            elif key not in a:
                out.append(Difference(part, key, "extra", None, b[key]))
            elif a[key] != b[key]:
                out.append(Difference(part, key, "changed", a[key], b[key]))
    return sorted(out, key=lambda d: (d.part, d.key))


def facts_without_vectors(state: Snapshot) -> int:
    vectors = state["vectors"]
    return sum(1 for fact_id in state["facts"] if f"{Collection.FACTS.value}:{fact_id}" not in vectors)
