"""Cypher for community storage, shared by the FalkorDB and Neo4j adapters.

Layout: ``(:Community {group_id, id, level, ...})``, ``(c)-[:HAS_MEMBER]->(:Entity)`` for every
member at every level, ``(parent)-[:PARENT_OF]->(child)``, and one ``(:CommunityBuild)`` node per
tenant recording the last full build. Members are read from HAS_MEMBER edges only (no member
list property). Properties are scalars or lists of strings (no maps, for FalkorDB).
"""

from __future__ import annotations

from typing import Final

COMMUNITY: Final = "Community"
COMMUNITY_BUILD: Final = "CommunityBuild"
HAS_MEMBER: Final = "HAS_MEMBER"
PARENT_OF: Final = "PARENT_OF"

COMMUNITY_COLUMNS: Final = """
    c.id AS id, c.group_id AS group_id, c.level AS level, c.name AS name,
    c.parent_id AS parent_id, c.child_ids AS child_ids, c.entity_count AS entity_count,
    c.summary AS summary, c.key_topics AS key_topics, c.central_entities AS central_entities,
    c.representative_entities AS representative_entities, c.key_facts AS key_facts,
    c.citations AS citations, c.modularity_contribution AS modularity_contribution,
    c.internal_density AS internal_density, c.external_connectivity AS external_connectivity,
    c.summary_stale AS summary_stale, c.summary_version AS summary_version,
    c.summarizer AS summarizer, c.created_at AS created_at, c.updated_at AS updated_at,
    c.last_summarized_at AS last_summarized_at"""

# --------------------------------------------------------------------------- writes

UPSERT_COMMUNITIES: Final = """
UNWIND $rows AS row
MERGE (c:Community {group_id: $group_id, id: row.id})
SET c.level = row.level, c.name = row.name, c.parent_id = row.parent_id,
    c.child_ids = row.child_ids, c.entity_count = row.entity_count, c.summary = row.summary,
    c.key_topics = row.key_topics, c.central_entities = row.central_entities,
    c.representative_entities = row.representative_entities, c.key_facts = row.key_facts,
    c.citations = row.citations, c.modularity_contribution = row.modularity_contribution,
    c.internal_density = row.internal_density,
    c.external_connectivity = row.external_connectivity, c.summary_stale = row.summary_stale,
    c.summary_version = row.summary_version, c.summarizer = row.summarizer,
    c.created_at = row.created_at, c.updated_at = row.updated_at,
    c.last_summarized_at = row.last_summarized_at
RETURN count(c) AS written"""

ADD_MEMBERS: Final = """
UNWIND $rows AS row
MATCH (c:Community {group_id: $group_id, id: row.community_id})
MATCH (e:Entity {group_id: $group_id, id: row.entity_id})
MERGE (c)-[m:HAS_MEMBER]->(e)
SET m.group_id = $group_id
RETURN count(m) AS written"""

RECOUNT_MEMBERS: Final = """
UNWIND $ids AS cid
MATCH (c:Community {group_id: $group_id, id: cid})
OPTIONAL MATCH (c)-[:HAS_MEMBER]->(e:Entity)
WITH c, count(e) AS n
SET c.entity_count = n
RETURN count(c) AS written"""

LINK_PARENTS: Final = """
UNWIND $rows AS row
MATCH (p:Community {group_id: $group_id, id: row.parent_id})
MATCH (c:Community {group_id: $group_id, id: row.id})
MERGE (p)-[l:PARENT_OF]->(c)
SET l.group_id = $group_id
RETURN count(l) AS written"""

MARK_STALE: Final = """
UNWIND $ids AS cid
MATCH (c:Community {group_id: $group_id, id: cid})
SET c.summary_stale = true, c.updated_at = $now
RETURN count(c) AS written"""

DELETE_COMMUNITIES_BATCH: Final = """
MATCH (c:Community {group_id: $group_id})
WITH c LIMIT $batch
DETACH DELETE c
RETURN count(*) AS deleted"""

DELETE_COMMUNITY_STATE: Final = """
MATCH (s:CommunityBuild {group_id: $group_id})
DELETE s
RETURN count(*) AS deleted"""

SAVE_STATE: Final = """
MERGE (s:CommunityBuild {group_id: $group_id})
SET s.built_at = $row.built_at, s.entity_count = $row.entity_count,
    s.fact_count = $row.fact_count, s.community_count = $row.community_count,
    s.levels = $row.levels, s.modularity = $row.modularity,
    s.total_weight = $row.total_weight, s.resolution = $row.resolution,
    s.max_size = $row.max_size, s.seed = $row.seed, s.changed_entities = $row.changed_entities,
    s.changed_facts = $row.changed_facts, s.updated_at = $row.updated_at
RETURN count(s) AS written"""

# --------------------------------------------------------------------------- reads

_LIST: Final = """
MATCH (c:Community {{group_id: $group_id}})
WHERE {where}
OPTIONAL MATCH (c)-[:HAS_MEMBER]->(e:Entity)
WITH c, collect(e.id) AS entity_ids
RETURN {columns}, entity_ids
ORDER BY level DESC, id"""

LIST_COMMUNITIES: Final = _LIST.format(where="true", columns=COMMUNITY_COLUMNS)
LIST_COMMUNITIES_AT_LEVEL: Final = _LIST.format(where="c.level = $level", columns=COMMUNITY_COLUMNS)
GET_COMMUNITY: Final = _LIST.format(where="c.id = $id", columns=COMMUNITY_COLUMNS)

COMMUNITY_OF: Final = """
UNWIND $ids AS eid
MATCH (e:Entity {group_id: $group_id, id: eid})
MATCH (c:Community)-[:HAS_MEMBER]->(e)
WHERE c.group_id = $group_id AND c.level = $level
RETURN e.id AS entity_id, c.id AS community_id
ORDER BY entity_id, community_id"""

GET_STATE: Final = """
MATCH (s:CommunityBuild {group_id: $group_id})
RETURN s.group_id AS group_id, s.built_at AS built_at, s.entity_count AS entity_count,
    s.fact_count AS fact_count, s.community_count AS community_count, s.levels AS levels,
    s.modularity AS modularity, s.total_weight AS total_weight, s.resolution AS resolution,
    s.max_size AS max_size, s.seed AS seed, s.changed_entities AS changed_entities, s.changed_facts AS changed_facts,
    s.updated_at AS updated_at"""

# --------------------------------------------------------------------------- schema

FALKOR_INDEXES: Final = (
    "CREATE INDEX FOR (c:Community) ON (c.id)",
    "CREATE INDEX FOR (c:Community) ON (c.group_id)",
    "CREATE INDEX FOR (c:Community) ON (c.level)",
    "CREATE INDEX FOR (s:CommunityBuild) ON (s.group_id)",
)
FALKOR_UNIQUE: Final = ((COMMUNITY, "id"),)

NEO4J_SCHEMA: Final = (
    (
        "CREATE CONSTRAINT community_group_id_unique IF NOT EXISTS "
        "FOR (c:Community) REQUIRE (c.group_id, c.id) IS UNIQUE"
    ),
    (
        "CREATE CONSTRAINT community_build_group_unique IF NOT EXISTS "
        "FOR (s:CommunityBuild) REQUIRE s.group_id IS UNIQUE"
    ),
    "CREATE INDEX community_id_idx IF NOT EXISTS FOR (c:Community) ON (c.id)",
    "CREATE INDEX community_level_idx IF NOT EXISTS FOR (c:Community) ON (c.level)",
    "CREATE INDEX community_group_idx IF NOT EXISTS FOR (c:Community) ON (c.group_id)",
)
