"""Every Cypher statement the Neo4j adapter can issue parses and passes Neo4j's own checks.

No Neo4j server runs here, so the statements are checked statically by
``tools/cypher-lint/lint.mjs``: Neo4j's Cypher grammar and semantic analysis, as shipped in
``@neo4j-cypher/language-support``, under both Cypher 5 and Cypher 25 (errors only).

Statements are collected automatically, so new queries are checked without editing this file:

* every module-level ``str`` constant of every module in ``knotwork.infra.graph_common`` and of
  ``knotwork.infra.neo4j.store`` whose text starts with a Cypher clause (fragments such as
  column lists or WHERE conditions do not), and every such ``str`` in a module-level tuple/list
  (the ``NEO4J_SCHEMA`` DDL, ``NEO4J_SCHEMA_STATEMENTS``);
* every class-level Cypher ``str`` on ``Neo4jGraphStore`` and its bases (``find_by_keys_query``).

Skipped: names starting ``FALKOR`` (FalkorDB-only DDL, never sent to Neo4j) and private
``str.format`` templates (``_EXPAND_HOP``; their rendered public constants are checked).
A guard test also rejects Cypher written inline in the adapters' functions, which this
collection could not see.

The linter needs node and ``npm ci --prefix tools/cypher-lint`` (done by ``make install``).
Without them these tests skip locally but FAIL when ``CI`` is set.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import os
import pkgutil
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from knotwork.infra import graph_common
from knotwork.infra.neo4j import store as neo4j_store

ROOT = Path(__file__).resolve().parents[2]
LINT_DIR = ROOT / "tools" / "cypher-lint"
LINT_SCRIPT = LINT_DIR / "lint.mjs"
LINT_PACKAGE = LINT_DIR / "node_modules" / "@neo4j-cypher" / "language-support"

CLAUSES = frozenset(
    [
        "MATCH",
        "OPTIONAL",
        "UNWIND",
        "MERGE",
        "CREATE",
        "WITH",
        "CALL",
        "RETURN",
        "DROP",
        "SHOW",
        "USE",
        "LOAD",
        "FOREACH",
        "DELETE",
        "DETACH",
        "SET",
        "REMOVE",
        "CYPHER",
        "EXPLAIN",
        "PROFILE",
        "ALTER",
    ]
)
# a str.format template: escaped braces or a bare {field} (never valid Cypher on its own)
TEMPLATE = re.compile(r"\{\{|\{[A-Za-z_]\w*\}")
BROKEN = "MATCH (n RETURN n"
BROKEN_NAME = "__deliberately_broken__"


def looks_like_cypher(text: str) -> bool:
    words = text.split(None, 1)
    return bool(words) and words[0].upper() in CLAUSES


def _modules() -> list[ModuleType]:
    names = sorted(
        f"{graph_common.__name__}.{info.name}"
        for info in pkgutil.iter_modules(graph_common.__path__)
    )
    return [*(importlib.import_module(name) for name in names), neo4j_store]


def _wanted(name: str, text: str) -> bool:
    if name.startswith("__") or name.upper().startswith("FALKOR"):  # dunders: docstrings
        return False
    if name.startswith("_") and TEMPLATE.search(text):
        return False
    return looks_like_cypher(text)


def collect_statements() -> dict[str, str]:
    """``{qualified name: query}``; a query reachable under several names is kept once."""
    found: dict[str, str] = {}

    def add(name: str, text: str) -> None:
        query = text.strip()
        if _wanted(name.rsplit(".", 1)[-1].split("[")[0], text) and query not in found.values():
            found[name] = query

    for module in _modules():
        short = module.__name__.removeprefix("knotwork.infra.")
        for name, value in vars(module).items():
            if isinstance(value, str):
                add(f"{short}.{name}", value)
            elif isinstance(value, (tuple, list)) and not name.upper().startswith("FALKOR"):
                for i, item in enumerate(value):
                    if isinstance(item, str):
                        add(f"{short}.{name}[{i}]", item)
    for cls in neo4j_store.Neo4jGraphStore.__mro__:
        for name, value in vars(cls).items():
            if isinstance(value, str):
                add(f"{cls.__name__}.{name}", value)
    return found


STATEMENTS = collect_statements()


# --------------------------------------------------------------------------- the linter


def _unavailable(reason: str) -> None:
    message = (
        f"cannot check the Neo4j Cypher statically: {reason}. "
        "Run `make install` (or `npm ci --prefix tools/cypher-lint`) with node >= 18."
    )
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def lint_results() -> dict[str, list[dict[str, Any]]]:
    node = shutil.which("node")
    if node is None:
        _unavailable("`node` is not on PATH")
    if not LINT_PACKAGE.is_dir():
        _unavailable(f"{LINT_PACKAGE.relative_to(ROOT)} is not installed")
    items = [{"name": name, "query": query} for name, query in STATEMENTS.items()]
    items.append({"name": BROKEN_NAME, "query": BROKEN})
    proc = subprocess.run(
        [node, str(LINT_SCRIPT)],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"cypher linter failed ({proc.returncode}):\n{proc.stderr}", pytrace=False)
    results = {r["name"]: r["errors"] for r in json.loads(proc.stdout)}
    assert set(results) == {item["name"] for item in items}
    return results


def _describe(errors: list[dict[str, Any]], query: str) -> str:
    lines = query.splitlines()
    out = []
    for e in errors:
        source = lines[e["line"] - 1] if 0 < e["line"] <= len(lines) else ""
        out.append(
            f"  [{e['version']}] line {e['line']} col {e['column']}: {e['message']}\n"
            f"      {source}\n      {' ' * (e['column'] - 1)}^"
        )
    return "\n".join(out)


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_neo4j_cypher_is_valid(name: str, lint_results: dict[str, list[dict[str, Any]]]) -> None:
    errors = lint_results[name]
    assert not errors, f"{name} is not valid Neo4j Cypher:\n{_describe(errors, STATEMENTS[name])}"


def test_linter_catches_a_broken_query(lint_results: dict[str, list[dict[str, Any]]]) -> None:
    errors = lint_results[BROKEN_NAME]
    assert errors, "the linter passed a broken query: the static check would pass anything"
    assert {e["version"] for e in errors} == {"CYPHER 5", "CYPHER 25"}
    assert any("RETURN" in e["message"] for e in errors)


def test_collection_covers_the_adapter() -> None:
    from knotwork.infra.graph_common import community_cypher, cypher

    queries = set(STATEMENTS.values())
    must = [
        *neo4j_store.NEO4J_SCHEMA_STATEMENTS,
        neo4j_store.Neo4jGraphStore.find_by_keys_query,
        cypher.UPSERT_FACTS,
        cypher.EXPAND_HOP_AS_OF,
        cypher.DELETE_ENTITIES_BATCH,
        community_cypher.UPSERT_COMMUNITIES,
        community_cypher.DELETE_COMMUNITY_STATE,
    ]
    missing = [q for q in must if q.strip() not in queries]
    assert not missing, f"statements the Neo4j adapter runs were not collected: {missing}"
    assert not any(n.rsplit(".", 1)[-1].startswith("FALKOR") for n in STATEMENTS)
    assert not any(looks_like_cypher(t) for t in (cypher.ENTITY_COLUMNS, cypher.VALID_AS_OF))


def test_no_inline_cypher_in_the_adapters() -> None:
    """Cypher written inside a function would escape the collection above."""
    from knotwork.infra.graph_common import base, communities, lineage

    offenders = []
    for module in (neo4j_store, base, communities, lineage):
        tree = ast.parse(inspect.getsource(module))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                text = None
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value
                elif isinstance(node, ast.JoinedStr) and node.values:
                    first = node.values[0]
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        text = first.value
                words = (text or "").split(None, 1)
                # upper-case keyword then more text: Cypher, not a docstring ("Return ...")
                if len(words) == 2 and words[0] in CLAUSES:
                    offenders.append(f"{module.__name__}:{node.lineno}: {text.strip()[:60]!r}")
    assert not offenders, (
        "inline Cypher in the adapters (move it to a module constant so it is linted):\n"
        + "\n".join(offenders)
    )
