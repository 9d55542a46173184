"""Dump and restore one tenant's rows of every SQL table (``knotwork export`` / ``import``).

Generic over the schema: every table with a ``group_id`` column, parents before children
(``MetaData.sorted_tables``), so tables added by later migrations are covered without code here.
Values are JSON with tags for what JSON lacks (datetimes, bytes).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from datetime import datetime

from pydantic import JsonValue
from sqlalchemy import Engine, Table, delete, insert, select

from knotwork.domain.backup import TableDump
from knotwork.infra.sql.models import Base

_DATETIME = "$datetime"
_BYTES = "$bytes"


def _tenant_tables() -> list[Table]:
    return [t for t in Base.metadata.sorted_tables if "group_id" in t.c]


def table_order() -> dict[str, int]:
    """Position of each tenant table, parents first (the order restores must follow)."""
    return {t.name: i for i, t in enumerate(_tenant_tables())}


def _encode(value: object) -> JsonValue:
    if isinstance(value, datetime):
        return {_DATETIME: value.isoformat()}
    if isinstance(value, bytes | memoryview):
        return {_BYTES: base64.b64encode(bytes(value)).decode()}
    return value  # type: ignore[return-value]  # str, numbers, None, JSON columns


def _decode(value: JsonValue) -> object:
    if isinstance(value, dict) and len(value) == 1:
        stamp, data = value.get(_DATETIME), value.get(_BYTES)
        if isinstance(stamp, str):
            return datetime.fromisoformat(stamp)
        if isinstance(data, str):
            return base64.b64decode(data)
    return value


def dump_tenant(engine: Engine, group_id: str, batch: int = 1000) -> Iterator[TableDump]:
    """One ``TableDump`` per table (possibly several per table, ``batch`` rows each)."""
    with engine.connect() as connection:
        for table in _tenant_tables():
            order = list(table.primary_key.columns) or list(table.c)
            result = connection.execution_options(stream_results=True).execute(
                select(table).where(table.c.group_id == group_id).order_by(*order))
            rows: list[dict[str, JsonValue]] = []
            for row in result.mappings():
                rows.append({key: _encode(value) for key, value in row.items()})
                if len(rows) >= batch:
                    yield TableDump(table=table.name, rows=rows)
                    rows = []
            yield TableDump(table=table.name, rows=rows)


def restore_tenant(engine: Engine, dumps: Iterable[TableDump]) -> dict[str, int]:
    """Insert the dumped rows in one transaction; returns rows per table. Unknown tables fail."""
    tables = {t.name: t for t in _tenant_tables()}
    written: dict[str, int] = {}
    with engine.begin() as connection:
        for dump in dumps:
            table = tables.get(dump.table)
            if table is None:
                raise ValueError(f"the export holds table {dump.table!r}, unknown to this schema")
            if not dump.rows:
                continue
            unknown = set(dump.rows[0]) - set(table.c.keys())
            if unknown:
                raise ValueError(f"table {dump.table!r} has no column(s) {sorted(unknown)}")
            connection.execute(insert(table), [{k: _decode(v) for k, v in row.items()}
                                               for row in dump.rows])
            written[dump.table] = written.get(dump.table, 0) + len(dump.rows)
    return written


def delete_tenant(engine: Engine, group_id: str) -> None:
    """Every row of the tenant, children before parents."""
    with engine.begin() as connection:
        for table in reversed(_tenant_tables()):
            connection.execute(delete(table).where(table.c.group_id == group_id))
