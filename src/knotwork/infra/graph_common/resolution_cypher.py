"""Cypher for entity merge / unmerge (issue 5): which episodes mention an entity, and
removing MENTIONS edges. Shared by FalkorDB and Neo4j; values only as parameters."""

from __future__ import annotations

from typing import Final

ENTITY_EPISODE_IDS: Final = """
MATCH (ep:Episodic {group_id: $group_id})-[:MENTIONS]->(e:Entity {group_id: $group_id})
WHERE e.id = $entity_id
RETURN DISTINCT ep.id AS id
ORDER BY id"""

ENTITY_EVIDENCE: Final = """
UNWIND $ids AS entity_id
MATCH (e:Entity {group_id: $group_id, id: entity_id})
OPTIONAL MATCH (ep:Episodic {group_id: $group_id})-[:MENTIONS]->(e)
RETURN entity_id AS id, collect(DISTINCT ep.valid_at) AS starts, count(DISTINCT ep) AS episodes"""

DELETE_MENTIONS: Final = """
UNWIND $rows AS row
MATCH (ep:Episodic {group_id: $group_id, id: row.episode_id})-[m:MENTIONS]->(e:Entity {group_id: $group_id, id: row.entity_id})
DELETE m
RETURN count(*) AS written"""
