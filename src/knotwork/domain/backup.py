"""Backup records shared by the document store port and the export/import service."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, JsonValue


class TableDump(BaseModel):
    """A page of one SQL table's rows of one tenant; tagged JSON values (see infra.sql.backup)."""

    model_config = ConfigDict(extra="forbid")

    table: str
    rows: list[dict[str, JsonValue]]
