"""schemathesis over the OpenAPI schema with every check (``schemathesis.toml``): no 5xx, no
response that breaks the schema, schema-valid requests accepted, schema-invalid ones refused.

Every operation gets generated requests (valid and invalid); the app runs on the embedded
stack with sample data ingested and communities built, so reads hit real data.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.config import SchemathesisConfig

from knotwork.core import Knotwork
from knotwork.services.api.app import create_app
from tests.integration.test_cli import SAMPLE_DATA

pytestmark = [pytest.mark.integration, pytest.mark.models]
CONFIG = Path(__file__).resolve().parents[2] / "schemathesis.toml"


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[Any]:
    from knotwork.settings import EmbedderBackend, Settings

    config = Settings(data_dir=tmp_path_factory.mktemp("fuzz") / "data",  # type: ignore[arg-type]
                      group="fuzz", falkordb_url=falkordb_url, embedder=EmbedderBackend.HASHING)
    with Knotwork(config) as kw:
        kw.ingest_path(SAMPLE_DATA)
        kw.build_communities()
        # the app serves this instance (qdrant-edge allows one opener per data dir)
        app = create_app(config, knotwork=kw)
        yield schemathesis.openapi.from_asgi("/openapi.json", app,
                                             config=SchemathesisConfig.from_path(CONFIG))


def test_no_server_errors_and_responses_match_the_schema(api_schema: Any) -> None:
    # the schemathesis pytest plugin does not run under this pytest: drive hypothesis directly
    failures: list[str] = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 10
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=10, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def run(case: Any) -> None:
            case.call_and_validate()

        started = time.perf_counter()
        try:
            run()
        except Exception as exc:  # noqa: BLE001 - collect every operation's failure
            failures.append(f"{operation.method.upper()} {operation.path}: "
                            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}")
        print(f"{operation.method.upper()} {operation.path}: {time.perf_counter() - started:.1f} s")
    assert not failures, "\n".join(failures)
