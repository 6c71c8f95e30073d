"""The layers are real: read every project module's imports (ast, nothing is imported).

- No import cycle between project modules, counting every import wherever it is written.
- No function-level import of a project module (the sign of a dodged cycle), except in an
  `AppConfig.ready()`, which is where Django connects receivers and registrations.
- The apps form layers, models included: common (the ground floor) < accounts < workflows
  (workspaces, memberships and roles, the access module, the workflows' configuration and
  its rules) < boards (the live board: tasks, admissions, pulls, and changes to a board's
  structure) < agents < integrations < notifications (watching, notifications,
  outbound webhooks, the task queue) < teams < flow < the entry points (the project package
  `kandev`: settings, urls, asgi and its lifespan, /metrics; commands; each app's pages and
  routes, `views` and `urls`). A lower app that needs a higher one's rules asks through a
  registry the higher app fills in its `AppConfig.ready()` (boards/sessions.py,
  boards/step_events.py).
"""

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = [
    "common",
    "accounts",
    "workflows",
    "boards",
    "agents",
    "integrations",
    "notifications",
    "teams",
    "flow",
    "project",
]
# The packages read: every app, and the project package (`kandev`) that sits on top.
APPS = (*LAYERS[:-1], "kandev")


def modules() -> dict[str, Path]:
    found = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = path
    return found


def imports(path: Path, known: set[str]):
    """(module imported, line, at top level?, inside AppConfig.ready?) for project modules."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    ready = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "ready"
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from boards import admission` imports the module boards.admission
            targets = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known]
            targets = targets or [node.module]
        else:
            continue
        for target in targets:
            if target.split(".")[0] in APPS:
                yield target, node.lineno, id(node) in top, id(node) in ready


def graph() -> tuple[dict, list]:
    found = modules()
    edges, late = {name: set() for name in found}, []
    for name, path in found.items():
        for target, line, at_top, in_ready in imports(path, set(found)):
            edges[name].add(target)
            if not at_top and not in_ready:
                late.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    return edges, late


def app_of(module: str) -> str:
    """Entry points (the project package `kandev`, management commands, the browser pages) sit on top
    of every app: a page shows what several apps hold."""
    entry = (
        module.split(".")[0] == "kandev" or ".management.commands." in module or module.endswith((".views", ".urls"))
    )
    return "project" if entry else module.split(".")[0]


def test_no_import_cycle_between_modules():
    edges, _ = graph()
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as cycle:
        raise AssertionError(f"import cycle: {' -> '.join(cycle.args[1])}") from None


def test_no_function_level_import_of_project_modules():
    _, late = graph()
    assert late == []


def test_apps_import_downward_only():
    edges, _ = graph()
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in edges.items()
        for target in targets
        if LAYERS.index(app_of(target)) > LAYERS.index(app_of(module))
    )
    assert upward == []
