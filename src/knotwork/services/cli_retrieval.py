"""``knotwork mcp``: the MCP server over stdio (registered by cli)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp() -> None:
        """Serve MCP (Model Context Protocol) over stdio with the official SDK: query, search,
        entity and traverse tools, add_episode / add_document / delete_document, and the
        documents and latest-report resources (the API serves the same at /mcp)."""
        import anyio

        from knotwork.core import Knotwork
        from knotwork.services import cli
        from knotwork.services.mcp_server import KnotworkMcp
        from knotwork.settings import Settings

        settings = cli._State.settings or Settings()
        try:
            kw = Knotwork(settings)
        except Exception as exc:  # noqa: BLE001 - any store that cannot open: one line, exit 2
            cli.fail(f"cannot open the stores in {settings.data_dir}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        with kw:
            anyio.run(KnotworkMcp(kw).server.run_stdio_async)
