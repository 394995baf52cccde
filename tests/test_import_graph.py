"""The project's import graph against the layers declared in docs/ARCHITECTURE-NOTES.md.

Every import is counted, those inside functions too (a lazy import still ties two files
together). An edge goes from a file to the module it names (``from a.b import c`` reaches the
module ``a.b.c`` when that is a file, else ``a.b``); a package's ``__init__`` is not counted as
importing its parent, so a package may re-export its own modules.

Checked: no cycle between files; no cycle between packages (a subpackage and its parent
excepted); every top-level package (and root module) sits in a declared layer and imports only
from layers below its own; the window's rooms (``ui/<room>/``) likewise among themselves; and
the shape rules of the house: at most six modules at the package root, no folder with more than
20 Python files, benchmarks only in ``diagnostics/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
PACKAGE = "attention_explorer"

NOTES = ROOT / "docs" / "ARCHITECTURE-NOTES.md"


def _declared(marker: str) -> list[list[str]]:
    """The layers of the fenced block after ``<!-- marker: ...`` in the notes, lowest first."""
    lines = NOTES.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"<!-- {marker}:"))
    assert lines[start + 1].startswith("```"), f"the {marker} block must follow its marker"
    end = next(i for i in range(start + 2, len(lines)) if lines[i].startswith("```"))
    return [line.split() for line in lines[start + 2 : end] if line.strip()]


def _rank(layers: list[list[str]]) -> dict[str, int]:
    return {name: level for level, names in enumerate(layers) for name in names}


def _module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    files = {}
    for path in (APP / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(APP).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _imports(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The project's modules that the file ``path`` (module ``name``) imports anywhere."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            targets = [t for t in targets[:-1] if t in known] or [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    known = _module_files()
    return {name: _imports(path, name, known) for name, path in known.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def _unit(name: str) -> str:
    """The layer unit of a module: its top-level package, or the root module's own name."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _room(name: str) -> str | None:
    """The window room of a module (``ui.<room>.x`` -> room), or None outside the rooms."""
    parts = name.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "ui" else None


def _package(name: str, files: dict[str, Path]) -> str:
    return name if files[name].name == "__init__.py" else name.rpartition(".")[0]


def _upward(graph: dict[str, set[str]], unit, rank: dict[str, int]) -> list[str]:
    """Edges whose target's unit is not in a layer below the source's (same layer included)."""
    found = []
    for name, targets in graph.items():
        source = unit(name)
        if source is None:
            continue
        for target in sorted(targets):
            other = unit(target)
            if other is None or other == source:
                continue
            if rank[other] >= rank[source]:
                found.append(f"{name} -> {target}")
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_the_projects_files():
    assert _cycles(_graph()) == []


def test_every_package_and_room_is_in_a_declared_layer():
    graph = _graph()
    units = {_unit(name) for name in graph}
    rooms = {_room(name) for name in graph} - {None}
    assert sorted(units - set(_rank(_declared("package-layers")))) == []
    assert sorted(rooms - set(_rank(_declared("ui-rooms")))) == []


def test_no_import_runs_up_the_package_layers():
    rank = _rank(_declared("package-layers"))
    assert _upward(_graph(), _unit, rank) == []


def test_no_import_runs_up_the_window_rooms():
    rank = _rank(_declared("ui-rooms"))
    assert _upward(_graph(), _room, rank) == []


def test_the_layer_check_catches_an_upward_import():
    rank = _rank([["core"], ["engine"]])
    graph = {"attention_explorer.core.a": {"attention_explorer.engine.b"}}
    assert _upward(graph, _unit, rank) == [
        "attention_explorer.core.a -> attention_explorer.engine.b"
    ]
    peers = _rank([["exporting", "session"]])
    graph = {"attention_explorer.session.a": {"attention_explorer.exporting.b"}}
    assert len(_upward(graph, _unit, peers)) == 1


def test_no_import_cycle_between_packages():
    files = _module_files()
    packages: dict[str, set[str]] = {}
    for name, targets in _graph().items():
        source = _package(name, files)
        edges = packages.setdefault(source, set())
        for target in targets:
            other = _package(target, files)
            # A subpackage may use its parent's modules (the file graph still forbids cycles).
            if other != source and not source.startswith(other + "."):
                edges.add(other)
    assert _cycles(packages) == []


def test_the_package_root_keeps_only_the_api_the_version_and_the_entry_point():
    root = sorted(p.name for p in (APP / PACKAGE).glob("*.py"))
    assert len(root) <= 6, root


def test_no_folder_holds_more_than_20_python_files():
    crowded = {}
    for folder in [APP / PACKAGE, *(p for p in (APP / PACKAGE).rglob("*") if p.is_dir())]:
        count = len(list(folder.glob("*.py")))
        if count > 20:
            crowded[str(folder.relative_to(APP))] = count
    assert crowded == {}


def test_benchmarks_live_in_diagnostics():
    stray = [
        str(p.relative_to(APP))
        for p in (APP / PACKAGE).rglob("*bench*.py")
        if p.parent.name != "diagnostics"
    ]
    assert stray == []


def test_packaging_scripts_do_not_import_each_other_in_a_cycle():
    scripts = {p.stem: p for p in (ROOT / "packaging").glob("*.py")}
    graph = {}
    for stem, path in scripts.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        graph[stem] = {n for n in names if n in scripts and n != stem}
    assert _cycles(graph) == []
