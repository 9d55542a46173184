"""The CLI a newcomer meets first: --version, choices and examples in every sub-command's help
(each example parses against the real command), and a query where nothing was ingested."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

import knotwork
from knotwork.domain.models import QueryMode
from knotwork.services.cli import app
from knotwork.services.cli_examples import EXAMPLES

WIDE = {"COLUMNS": "250", "TERMINAL_WIDTH": "250", "NO_COLOR": "1"}


def _leaf_commands() -> dict[str, object]:
    """Every runnable command by its path ("query", "entities merge", ...)."""
    leaves: dict[str, object] = {}

    def walk(command: object, path: tuple[str, ...]) -> None:
        children = getattr(command, "commands", None)
        if children:
            for name, child in children.items():
                walk(child, (*path, name))
        else:
            leaves[" ".join(path)] = command

    walk(get_command(app), ())
    return leaves


LEAVES = _leaf_commands()


def test_version_prints_the_package_version_and_exits_0() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"knotwork {knotwork.__version__}"


def test_mode_help_lists_its_choices_and_any_case_is_accepted() -> None:
    result = CliRunner().invoke(app, ["query", "--help"], env=WIDE)
    assert result.exit_code == 0
    assert "|".join(m.value for m in QueryMode) in result.stdout
    assert "<str>" not in result.stdout.split("--mode", 1)[1].splitlines()[0]
    query = LEAVES["query"]
    ctx = query.make_context("query", ["x", "--mode", "GLOBAL"])  # type: ignore[attr-defined]
    assert ctx.params["mode"] is QueryMode.GLOBAL


def test_every_sub_command_has_examples_in_its_help() -> None:
    assert set(EXAMPLES) == set(LEAVES), "a command without examples, or examples of none"
    runner = CliRunner()
    for path, examples in EXAMPLES.items():
        result = runner.invoke(app, [*path.split(), "--help"], env=WIDE)
        assert result.exit_code == 0, (path, result.output)
        assert "Examples:" in result.stdout, path
        for example in examples:
            assert example in result.stdout, (path, example)


def _rest(ctx: object) -> list[str]:
    """What a group's context leaves for its sub-command (click keeps the name apart)."""
    protected = getattr(ctx, "protected_args", None) or getattr(ctx, "_protected_args", [])
    return [*protected, *ctx.args]  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", sorted(EXAMPLES))
def test_every_example_parses_against_its_command(path: str) -> None:
    root = get_command(app)
    for example in EXAMPLES[path]:
        words = shlex.split(example.split(" > ", 1)[0])  # a shell redirection is not an argument
        assert words[0] == "knotwork", example
        ctx = root.make_context("knotwork", words[1:])
        command: object = root
        args = _rest(ctx)
        seen: list[str] = []
        while getattr(command, "commands", None):
            name, command, args = command.resolve_command(ctx, args)  # type: ignore[attr-defined]
            seen.append(name)
            ctx = command.make_context(name, args, parent=ctx)  # type: ignore[attr-defined]
            args = _rest(ctx)
        assert " ".join(seen) == path, example
        assert not args, (example, args)


def test_query_where_nothing_was_ingested_says_so_and_creates_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "never-ingested"
    result = CliRunner().invoke(app, ["--data-dir", str(data_dir), "query", "Who leads it?"],
                                env={"KNOTWORK_DATABASE_URL": None})
    assert result.exit_code != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "nothing has been ingested" in lines[0], result.stderr
    assert "ingest" in lines[0].split(":", 2)[-1]
    assert result.stdout == ""
    assert not data_dir.exists()
