"""Cypher text shared by the FalkorDB and Neo4j adapters.

Only parameters carry values; labels and relationship types are constants. Every query
filters by ``$group_id`` (Neo4j keeps all tenants in one database). Times are ISO strings,
so string comparison is time comparison. Dialect notes (FalkorDB): no ``=~``, no
``EXISTS {}``, no ``IF NOT EXISTS``, no map-valued properties; ``SET x = null`` removes ``x``.
"""

from __future__ import annotations

from typing import Final

ENTITY: Final = "Entity"
EPISODIC: Final = "Episodic"
MENTIONS: Final = "MENTIONS"
RELATES_TO: Final = "RELATES_TO"

# --------------------------------------------------------------------------- projections

ENTITY_COLUMNS: Final = """
    e.id AS id, e.group_id AS group_id, e.name AS name, e.canonical_name AS canonical_name,
    e.type AS type, e.subtype AS subtype, e.aliases AS aliases, e.name_keys AS name_keys,
    e.summary AS summary, e.confidence AS confidence, e.evidence_count AS evidence_count,
    e.created_at AS created_at, e.updated_at AS updated_at,
    e.properties_json AS properties_json, e.merged_from AS merged_from,
    e.canonical_entity_id AS canonical_entity_id,
    e.resolution_confidence AS resolution_confidence, e.version AS version"""

FACT_COLUMNS: Final = """
    r.id AS id, r.group_id AS group_id, startNode(r).id AS source_id,
    endNode(r).id AS target_id, r.type AS type, r.fact AS fact, r.confidence AS confidence,
    r.episodes AS episodes, r.episode_confidences AS episode_confidences,
    r.episode_valid_at AS episode_valid_at,
    r.valid_at AS valid_at, r.invalid_at AS invalid_at,
    r.created_at AS created_at, r.expired_at AS expired_at,
    r.extraction_method AS extraction_method, r.invalidated_by AS invalidated_by"""

EPISODE_COLUMNS: Final = """
    ep.id AS id, ep.group_id AS group_id, ep.name AS name, ep.content AS content,
    ep.source AS source, ep.source_description AS source_description,
    ep.document_id AS document_id, ep.valid_at AS valid_at, ep.created_at AS created_at"""

# --------------------------------------------------------------------------- writes

# ``version`` first (SET items apply in order): a new node takes the row's version, a visible
# change (name, type, aliases, summary, properties) bumps the stored one, a no-op keeps it.
UPSERT_ENTITIES: Final = """
UNWIND $rows AS row
MERGE (e:Entity {group_id: $group_id, id: row.id})
SET e.version = CASE
        WHEN e.version IS NULL THEN row.version
        WHEN e.name = row.name AND e.type = row.type AND e.aliases = row.aliases
             AND e.summary = row.summary
             AND coalesce(e.properties_json, '') = coalesce(row.properties_json, '')
        THEN e.version
        ELSE e.version + 1 END
SET e.name = row.name, e.canonical_name = row.canonical_name, e.type = row.type,
    e.subtype = row.subtype, e.aliases = row.aliases, e.name_keys = row.name_keys,
    e.summary = row.summary, e.confidence = row.confidence,
    e.evidence_count = row.evidence_count, e.created_at = row.created_at,
    e.updated_at = row.updated_at, e.properties_json = row.properties_json,
    e.merged_from = row.merged_from, e.canonical_entity_id = row.canonical_entity_id,
    e.resolution_confidence = row.resolution_confidence
RETURN count(e) AS written"""

# compare-and-set of one entity (optimistic locking): written only at the expected version
UPDATE_ENTITY_IF_VERSION: Final = """
UNWIND $rows AS row
MATCH (e:Entity {group_id: $group_id, id: row.id})
WHERE coalesce(e.version, 1) = $expected
SET e.name = row.name, e.canonical_name = row.canonical_name, e.type = row.type,
    e.subtype = row.subtype, e.aliases = row.aliases, e.name_keys = row.name_keys,
    e.summary = row.summary, e.updated_at = row.updated_at,
    e.properties_json = row.properties_json, e.version = $expected + 1
RETURN count(e) AS written"""

UPSERT_EPISODES: Final = """
UNWIND $rows AS row
MERGE (ep:Episodic {group_id: $group_id, id: row.id})
SET ep.name = row.name, ep.content = row.content, ep.source = row.source,
    ep.source_description = row.source_description, ep.document_id = row.document_id,
    ep.valid_at = row.valid_at, ep.created_at = row.created_at
RETURN count(ep) AS written"""

UPSERT_MENTIONS: Final = """
UNWIND $rows AS row
MATCH (ep:Episodic {group_id: $group_id, id: row.episode_id})
MATCH (e:Entity {group_id: $group_id, id: row.entity_id})
MERGE (ep)-[m:MENTIONS]->(e)
SET m.group_id = $group_id
RETURN count(m) AS written"""

# A fact whose id now names other endpoints (e.g. after an entity merge) is moved, not copied.
DETACH_MOVED_FACTS: Final = """
UNWIND $rows AS row
MATCH (s)-[r:RELATES_TO {id: row.id}]->(t)
WHERE r.group_id = $group_id AND (s.id <> row.source_id OR t.id <> row.target_id)
DELETE r
RETURN count(*) AS deleted"""

UPSERT_FACTS: Final = """
UNWIND $rows AS row
MATCH (s:Entity {group_id: $group_id, id: row.source_id})
MATCH (t:Entity {group_id: $group_id, id: row.target_id})
MERGE (s)-[r:RELATES_TO {id: row.id}]->(t)
SET r.group_id = $group_id, r.type = row.type, r.fact = row.fact,
    r.confidence = row.confidence, r.episodes = row.episodes,
    r.episode_confidences = row.episode_confidences,
    r.episode_valid_at = row.episode_valid_at, r.valid_at = row.valid_at,
    r.invalid_at = row.invalid_at, r.created_at = row.created_at,
    r.expired_at = row.expired_at, r.extraction_method = row.extraction_method,
    r.invalidated_by = row.invalidated_by
RETURN count(r) AS written"""

# --------------------------------------------------------------------------- entity reads

GET_ENTITIES: Final = f"""
MATCH (e:Entity {{group_id: $group_id}})
WHERE e.id IN $ids
RETURN {ENTITY_COLUMNS}"""

LIST_ENTITIES: Final = f"""
MATCH (e:Entity {{group_id: $group_id}})
RETURN {ENTITY_COLUMNS}
ORDER BY id"""

# FalkorDB's range index covers list elements, used by the ``k IN e.name_keys`` form.
FIND_ENTITIES_BY_KEYS_UNWIND: Final = f"""
UNWIND $keys AS k
MATCH (e:Entity)
WHERE k IN e.name_keys AND e.group_id = $group_id
RETURN DISTINCT {ENTITY_COLUMNS}
ORDER BY id"""

FIND_ENTITIES_BY_KEYS_ANY: Final = f"""
MATCH (e:Entity {{group_id: $group_id}})
WHERE any(k IN e.name_keys WHERE k IN $keys)
RETURN {ENTITY_COLUMNS}
ORDER BY id"""

# --------------------------------------------------------------------------- fact reads

GET_FACTS: Final = f"""
MATCH ()-[r:RELATES_TO]->()
WHERE r.id IN $ids AND r.group_id = $group_id
RETURN {FACT_COLUMNS}"""

LIST_FACTS: Final = f"""
MATCH (:Entity {{group_id: $group_id}})-[r:RELATES_TO]->(:Entity)
WHERE r.group_id = $group_id
RETURN {FACT_COLUMNS}
ORDER BY id"""

FACTS_BETWEEN: Final = f"""
MATCH (s:Entity {{group_id: $group_id}})-[r:RELATES_TO]->(t:Entity)
WHERE s.id IN $ids AND t.id IN $ids AND r.group_id = $group_id
RETURN {FACT_COLUMNS}
ORDER BY id"""

# Validity filters for expand_facts, chosen by branch (never built from values).
VALID_AS_OF: Final = (
    "(r.valid_at IS NULL OR r.valid_at <= $as_of) "
    "AND (r.invalid_at IS NULL OR r.invalid_at > $as_of)"
)
VALID_NOW: Final = "r.invalid_at IS NULL"  # not invalidated (any invalid_at, even future)
VALID_ANY: Final = "true"

_EXPAND_HOP: Final = """
MATCH (a:Entity {{group_id: $group_id}})-[r:RELATES_TO]-(b:Entity)
WHERE a.id IN $frontier AND r.group_id = $group_id AND NOT r.id IN $seen AND ({validity})
  AND NOT coalesce(r.extraction_method, 'rule') IN $skip
RETURN DISTINCT {columns}
ORDER BY confidence DESC, id
LIMIT $limit"""

EXPAND_HOP_AS_OF: Final = _EXPAND_HOP.format(validity=VALID_AS_OF, columns=FACT_COLUMNS)
EXPAND_HOP_NOW: Final = _EXPAND_HOP.format(validity=VALID_NOW, columns=FACT_COLUMNS)
EXPAND_HOP_ANY: Final = _EXPAND_HOP.format(validity=VALID_ANY, columns=FACT_COLUMNS)

# --------------------------------------------------------------------------- episodes

GET_EPISODES: Final = f"""
MATCH (ep:Episodic {{group_id: $group_id}})
WHERE ep.id IN $ids
RETURN {EPISODE_COLUMNS}"""

RECENT_EPISODE_IDS: Final = """
MATCH (ep:Episodic {group_id: $group_id})
RETURN ep.id AS id, ep.valid_at AS valid_at, ep.created_at AS created_at
ORDER BY valid_at DESC, created_at DESC, id DESC
LIMIT $limit"""

EPISODE_ENTITY_IDS: Final = """
MATCH (ep:Episodic {group_id: $group_id, id: $episode_id})-[m:MENTIONS]->(e:Entity)
WHERE e.group_id = $group_id
RETURN DISTINCT e.id AS id
ORDER BY id"""

# --------------------------------------------------------------------------- counts

COUNT_ENTITIES: Final = "MATCH (e:Entity {group_id: $group_id}) RETURN count(e) AS n"
COUNT_EPISODES: Final = "MATCH (ep:Episodic {group_id: $group_id}) RETURN count(ep) AS n"
COUNT_FACTS: Final = """
MATCH (:Entity {group_id: $group_id})-[r:RELATES_TO]->(:Entity)
WHERE r.group_id = $group_id
RETURN count(r) AS n"""
COUNT_MENTIONS: Final = """
MATCH (:Episodic {group_id: $group_id})-[m:MENTIONS]->(:Entity)
WHERE m.group_id = $group_id
RETURN count(m) AS n"""

# --------------------------------------------------------------------------- deletes (batched)

DELETE_ENTITIES_BATCH: Final = """
MATCH (e:Entity {group_id: $group_id})
WITH e LIMIT $batch
DETACH DELETE e
RETURN count(*) AS deleted"""

DELETE_EPISODES_BATCH: Final = """
MATCH (ep:Episodic {group_id: $group_id})
WITH ep LIMIT $batch
DETACH DELETE ep
RETURN count(*) AS deleted"""

# --------------------------------------------------------------------------- schema

FALKOR_INDEXES: Final = (
    "CREATE INDEX FOR (e:Entity) ON (e.id)",
    "CREATE INDEX FOR (e:Entity) ON (e.canonical_name)",
    "CREATE INDEX FOR (e:Entity) ON (e.group_id)",
    "CREATE INDEX FOR (e:Entity) ON (e.name_keys)",
    "CREATE INDEX FOR (ep:Episodic) ON (ep.id)",
    "CREATE INDEX FOR (ep:Episodic) ON (ep.document_id)",
    "CREATE INDEX FOR ()-[r:RELATES_TO]-() ON (r.id)",
)
# (label, property) pairs given a GRAPH.CONSTRAINT UNIQUE in FalkorDB (one graph per tenant)
FALKOR_UNIQUE: Final = ((ENTITY, "id"), (EPISODIC, "id"))

NEO4J_SCHEMA: Final = (
    # ids are unique per tenant: all tenants share one Neo4j database
    (
        "CREATE CONSTRAINT entity_group_id_unique IF NOT EXISTS "
        "FOR (e:Entity) REQUIRE (e.group_id, e.id) IS UNIQUE"
    ),
    (
        "CREATE CONSTRAINT episodic_group_id_unique IF NOT EXISTS "
        "FOR (ep:Episodic) REQUIRE (ep.group_id, ep.id) IS UNIQUE"
    ),
    "CREATE INDEX entity_id_idx IF NOT EXISTS FOR (e:Entity) ON (e.id)",
    "CREATE INDEX entity_group_idx IF NOT EXISTS FOR (e:Entity) ON (e.group_id)",
    "CREATE INDEX entity_type_idx IF NOT EXISTS FOR (e:Entity) ON (e.type)",
    "CREATE INDEX entity_canonical_idx IF NOT EXISTS FOR (e:Entity) ON (e.canonical_name)",
    (
        "CREATE INDEX entity_type_confidence_idx IF NOT EXISTS "
        "FOR (e:Entity) ON (e.type, e.confidence)"
    ),
    (
        "CREATE FULLTEXT INDEX entity_name_fulltext IF NOT EXISTS "
        "FOR (e:Entity) ON EACH [e.name, e.canonical_name, e.summary]"
    ),
    "CREATE INDEX episodic_id_idx IF NOT EXISTS FOR (ep:Episodic) ON (ep.id)",
    "CREATE INDEX episodic_group_idx IF NOT EXISTS FOR (ep:Episodic) ON (ep.group_id)",
    "CREATE INDEX episodic_document_idx IF NOT EXISTS FOR (ep:Episodic) ON (ep.document_id)",
    "CREATE INDEX rel_id_idx IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.id)",
    "CREATE INDEX rel_group_idx IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.group_id)",
    "CREATE INDEX rel_type_idx IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.type)",
    (
        "CREATE INDEX rel_temporal_idx IF NOT EXISTS "
        "FOR ()-[r:RELATES_TO]-() ON (r.valid_at, r.invalid_at)"
    ),
    "CREATE INDEX rel_confidence_idx IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.confidence)",
)
