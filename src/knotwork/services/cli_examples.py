"""Examples shown at the end of every sub-command's ``--help`` (data: one entry per command path).

``attach_examples`` puts them on the registered Typer commands before click builds them; the
tests parse every example against the real command, so an example cannot name an option or a
choice the command does not take."""

from __future__ import annotations

import typer
from typer.main import get_command_name

EXAMPLES: dict[str, tuple[str, ...]] = {
    "ingest": ("knotwork ingest ./confluence-export",
               "knotwork --data-dir ~/kw ingest slack-export.zip",
               "knotwork ingest ./notes --queue"),
    "query": ("knotwork query 'Who leads Project Atlas?'",
              "knotwork query 'What are the main themes?' --mode global --json",
              "knotwork query 'Who led the team?' --as-of 2024-06-01",
              "knotwork query 'Who owns billing?' --as user:ana@example.com"),
    "serve": ("knotwork serve", "knotwork serve --host 0.0.0.0 --port 8080 --access-log"),
    "report": ("knotwork report --out ./digest", "knotwork report --level 1 --out ./digest"),
    "reconcile": ("knotwork reconcile --dry-run", "knotwork reconcile --json"),
    "doctor": ("knotwork doctor", "knotwork doctor --skip-models --json"),
    "export": ("knotwork export ./backup-2025-06-01",
               "knotwork --group finance export ./finance-backup"),
    "import": ("knotwork import ./backup-2025-06-01",
               "knotwork import ./backup-2025-06-01 --replace"),
    "status": ("knotwork status", "knotwork status --json"),
    "worker": ("knotwork worker", "knotwork worker --until-empty --json",
               "knotwork worker --max-jobs 100 --name worker-1"),
    "mcp": ("knotwork mcp", "knotwork --data-dir ~/kw mcp"),
    "episode add": ("knotwork episode add 'Alice Chen(user): I moved to the Payments team.'",
                    "knotwork episode add 'The launch moved to May.' --source text --time 2025-03-01",
                    "knotwork episode add '{\"owner\": \"Alice Chen\"}' --source json"),
    "graph export": ("knotwork graph export > graph.json", "knotwork graph export --summary"),
    "entities resolve": ("knotwork entities resolve 'Bob Smith'",
                         "knotwork entities resolve Atlas --type product --json"),
    "entities calibrate": ("knotwork entities calibrate pairs.csv",
                           "knotwork entities calibrate pairs.csv --min-precision 0.99 --json"),
    "entities reresolve": ("knotwork entities reresolve --dry-run",
                           "knotwork entities reresolve --json"),
    "entities merge": ("knotwork entities merge TARGET_ID SOURCE_ID",
                       "knotwork entities merge TARGET_ID SOURCE_ID OTHER_SOURCE_ID"),
    "entities unmerge": ("knotwork entities unmerge MERGE_ID",),
    "entities split": ("knotwork entities split ENTITY_ID --list",
                       "knotwork entities split ENTITY_ID --form 'Alex N.' --name 'Alex North'"),
    "entities undo": ("knotwork entities undo ACTION_ID",),
    "documents list": ("knotwork documents list", "knotwork documents list --status failed --json"),
    "documents show": ("knotwork documents show DOCUMENT_ID",),
    "documents delete": ("knotwork documents delete DOCUMENT_ID",),
    "entities review": ("knotwork entities review", "knotwork entities review --status all --json"),
    "communities build": ("knotwork communities build", "knotwork communities build --stale --json"),
    "communities status": ("knotwork communities status", "knotwork communities status --json"),
    "communities list": ("knotwork communities list", "knotwork communities list --level 0 --json"),
    "communities show": ("knotwork communities show COMMUNITY_ID",
                         "knotwork communities show COMMUNITY_ID --json"),
    "sync confluence": (
        ("knotwork sync confluence --base-url https://acme.atlassian.net --space ENG "
         "--email me@example.com --token TOKEN"),
        "knotwork sync confluence --base-url https://acme.atlassian.net --space ENG --queue"),
    "sync slack": ("knotwork sync slack --token xoxb-TOKEN",
                   "knotwork sync slack --channels general,eng-platform --lookback-days 7 --json",
                   "knotwork sync slack --full --queue"),
    "keys create": ("knotwork keys create search-bot --scope query",
                    "knotwork keys create importer --scope ingest --scope query --tenant finance",
                    ("knotwork keys create ana --scope query --principal user:ana@example.com "
                     "--rate 120")),
    "keys list": ("knotwork keys list", "knotwork keys list --json"),
    "keys revoke": ("knotwork keys revoke KEY_ID",),
    "db upgrade": ("knotwork db upgrade", "knotwork db upgrade head"),
    "db downgrade": ("knotwork db downgrade 0002_resolution", "knotwork db downgrade -- -1"),
    "db current": ("knotwork db current",),
    "queue dlq": ("knotwork queue dlq", "knotwork queue dlq --limit 50 --json"),
    "queue retry": ("knotwork queue retry", "knotwork queue retry MESSAGE_ID"),
    "queue purge": ("knotwork queue purge --yes",),
    "queue workers": ("knotwork queue workers", "knotwork queue workers --json"),
    "queue alive": ("knotwork queue alive", "knotwork queue alive --this-host --within 60"),
    "bench quality": ("knotwork bench quality /tmp/world",
                      "knotwork bench quality /tmp/world --no-baseline --out report.json"),
}


def epilog(examples: tuple[str, ...]) -> str:
    """The help text's closing block; blank lines keep each example on its own line."""
    return "Examples:\n\n" + "\n\n".join(f"  {line}" for line in examples)


def attach_examples(app: typer.Typer, prefix: str = "") -> None:
    """Set the epilog of every command registered on ``app`` (and its groups) from EXAMPLES."""
    for info in app.registered_commands:
        assert info.callback is not None
        name = info.name or get_command_name(info.callback.__name__)
        examples = EXAMPLES.get(f"{prefix}{name}")
        if examples:
            info.epilog = epilog(examples)
    for group in app.registered_groups:
        if group.typer_instance is not None and group.name:
            attach_examples(group.typer_instance, f"{prefix}{group.name} ")
