"""EmbeddedFalkorDB: persistence across restarts, reuse of a live server, stale state."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from knotwork.domain.models import Entity, EntityType
from knotwork.infra.falkordb.server import STATE_FILE, EmbeddedFalkorDB, _pid_alive
from knotwork.infra.falkordb.store import FalkorGraphStore
from knotwork.infra.graph_factory import create_graph_store
from knotwork.settings import GraphBackend, Settings

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _entity(i: int) -> Entity:
    return Entity(
        id=f"e{i}",
        group_id="persist",
        name=f"Name {i}",
        canonical_name=f"name {i}",
        type=EntityType.CONCEPT,
        name_keys=[f"name {i}"],
        created_at=T0,
        updated_at=T0,
    )


def _run_child(code: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return _last_json(out.stdout)


def _last_json(stdout: str) -> dict[str, object]:
    """The last JSON line a child printed (structlog may log to stdout too)."""
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    result: dict[str, object] = json.loads(lines[-1])
    return result


def test_restart_keeps_data(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path).start()
    assert server.owner and server.running
    assert json.loads((tmp_path / STATE_FILE).read_text())["port"] == server.port
    store = FalkorGraphStore(server.host, server.port, server=server)
    store.upsert_entities([_entity(i) for i in range(10)])
    store.close()  # also stops the owned server
    assert not server.running
    assert not (tmp_path / STATE_FILE).exists()

    with EmbeddedFalkorDB(tmp_path) as again:
        store = FalkorGraphStore(again.host, again.port)
        assert store.list_entities("persist") == sorted(
            [_entity(i) for i in range(10)], key=lambda e: e.id
        )
        assert store.list_groups() == ["persist"]
        store.close()
        assert again.running  # not owned by the store


def test_second_instance_reuses_live_server(tmp_path: Path) -> None:
    with EmbeddedFalkorDB(tmp_path) as first:
        second = EmbeddedFalkorDB(tmp_path).start()
        assert second.port == first.port
        assert not second.owner
        second.close()
        assert first.running  # only the owner shuts it down
        child = _run_child(
            f"""
            import json
            from knotwork.infra.falkordb.server import EmbeddedFalkorDB
            s = EmbeddedFalkorDB({str(tmp_path)!r}).start()
            print(json.dumps({{"port": s.port, "owner": s.owner}}))
            s.close()
            """
        )
        assert child == {"port": first.port, "owner": False}
        assert first.running
    assert not first.running


def test_concurrent_starts_share_one_server(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import json, sys, time
        from knotwork.infra.falkordb.server import EmbeddedFalkorDB
        s = EmbeddedFalkorDB({str(tmp_path)!r}).start()
        print(json.dumps({{"port": s.port, "owner": s.owner}}))
        sys.stdout.flush()
        time.sleep(2.0)
        s.close()
        """
    )
    children = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = []
    for child in children:
        out, _ = child.communicate(timeout=60)
        results.append(_last_json(out))
    assert results[0]["port"] == results[1]["port"]
    assert [r["owner"] for r in results].count(True) == 1  # exactly one started it


def test_stale_state_file_is_replaced(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert not _pid_alive(dead.pid)
    (tmp_path / STATE_FILE).write_text(json.dumps({"pid": dead.pid, "port": 1, "owner_pid": 1}))
    with EmbeddedFalkorDB(tmp_path) as server:
        assert server.owner and server.port != 1
        assert json.loads((tmp_path / STATE_FILE).read_text())["pid"] != dead.pid


def test_orphaned_server_is_adopted_and_shut_down(tmp_path: Path) -> None:
    # a process starts the server and dies without closing it
    child = _run_child(
        f"""
        import json, os, sys
        from knotwork.infra.falkordb.server import EmbeddedFalkorDB
        s = EmbeddedFalkorDB({str(tmp_path)!r}).start()
        print(json.dumps({{"port": s.port}}))
        sys.stdout.flush()
        os._exit(0)
        """
    )
    server = EmbeddedFalkorDB(tmp_path).start()
    assert server.port == child["port"]
    assert server.owner  # adopted: its starter is gone
    server.close()
    with pytest.raises(redis.ConnectionError):
        redis.Redis(
            port=int(str(child["port"])), socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
        ).ping()


def test_usable_as_plain_redis(tmp_path: Path) -> None:
    with EmbeddedFalkorDB(tmp_path) as server:
        client = redis.Redis.from_url(server.url)
        client.set("k", "v")
        assert client.get("k") == b"v"
        client.close()


def test_factory_embedded_store_owns_server(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, graph_backend=GraphBackend.FALKORDB)
    store = create_graph_store(settings)
    assert isinstance(store, FalkorGraphStore)
    store.upsert_entities([_entity(1)])
    assert store.counts("persist").entities == 1
    state = json.loads((tmp_path / "falkordb" / STATE_FILE).read_text())
    store.close()
    assert not _pid_alive(state["pid"])


def test_factory_uses_url(tmp_path: Path) -> None:
    with EmbeddedFalkorDB(tmp_path) as server:
        store = create_graph_store(Settings(data_dir=tmp_path, falkordb_url=server.url))
        assert isinstance(store, FalkorGraphStore)
        assert store.port == server.port
        store.close()
        assert server.running


def test_a_stop_after_many_writes_compacts_the_log_and_keeps_the_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from knotwork.infra.falkordb import server as server_module

    monkeypatch.setattr(server_module, "COMPACT_MIN_BYTES", 1024)
    server = EmbeddedFalkorDB(tmp_path).start()
    store = FalkorGraphStore(server.host, server.port, server=server)
    for start in range(0, 200, 20):  # many small write queries: a long tail of commands
        store.upsert_entities([_entity(i) for i in range(start, start + 20)])
    tail_before = sum(f.stat().st_size for f in (tmp_path / "appendonlydir").glob("*.incr.aof"))
    store.close()  # stops the owned server: the log is rewritten first
    tail_after = sum(f.stat().st_size for f in (tmp_path / "appendonlydir").glob("*.incr.aof"))
    assert tail_before > 1024 and tail_after < tail_before / 10
    assert list((tmp_path / "appendonlydir").glob("*.base.rdb"))  # a snapshot base now

    with EmbeddedFalkorDB(tmp_path) as again:
        store = FalkorGraphStore(again.host, again.port)
        assert len(store.list_entities("persist")) == 200
        store.close()
