"""Check the project's layout rules; exit 1 naming every breach (``make test`` runs it).

1. No import cycle in ``booking/``: module-level imports and imports inside functions
   alike. ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else
   to ``pkg`` (whose ``__init__`` runs).
2. Layers point one way: a package never imports one above it (``LAYERS``, lowest first).
3. ``django.conf.settings`` is read only in ``config/``, ``booking/wiring.py`` (the
   composition root) and ``booking/checks.py`` (the system checks that validate settings).
4. Entry points never import one another (``ENTRY_POINTS``): what the pages, the API, the
   admin and the commands share lives below them (``booking/entry/``, the service, the
   organizers).

Usage: ``python scripts/check_layout.py`` from anywhere; ``--graph`` prints the edges.
"""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "booking"
SETTINGS_READERS = {"booking/wiring.py", "booking/checks.py"}
SCANNED_FOR_SETTINGS = ("booking", "harness", "localdynamo")

# Lowest first. A module may import its own layer and those below, never one above.
# ``booking`` alone (the package's empty __init__) belongs to no layer.
LAYERS = [
    ("domain", ["booking.errors", "booking.models", "booking.times", "booking.background"]),
    ("input rules", ["booking.validation"]),
    ("access layer", ["booking.dynamo"]),
    ("exactly once", ["booking.exactly_once"]),
    ("strategies", ["booking.strategies"]),
    ("waiting-list engine", ["booking.waitlist"]),
    # Passes, check-in lists and scans at the door (the service's check-in capability).
    ("check-in", ["booking.checkin"]),
    ("questions and answers", ["booking.questions"]),
    ("service", ["booking.service"]),
    ("links and mail", ["booking.links", "booking.calendar", "booking.mail",
                        "booking.pass_images"]),
    # Organizers' endpoints, the fan-out from outbox rows, the worker's sender.
    ("webhooks", ["booking.webhooks"]),
    # Prometheus counters and JSON logs, hooked onto the store and the service by the wiring.
    ("metrics", ["booking.metrics"]),
    # Organizers, teams and who may do what (Django's SQL data, no settings): the one
    # place the web, API, admin and commands ask.
    ("organizers", ["booking.organizers"]),
    # Reads the table definitions; only the aws_template command imports it.
    ("deployment", ["booking.deploy"]),
    ("composition root", ["booking.wiring"]),
    # What the entry points share: the abuse limits, the signup form and its tokens, error
    # pages and bare problems, the CSV export.
    ("shared by the entry points", ["booking.entry"]),
    ("entry points", ["booking.web", "booking.api", "booking.admin", "booking.management", "booking.checks",
                      "booking.apps", "booking.lambda_handler", "booking.migrations"]),
]
# Each translates for its own callers; none imports another (rule 4).
ENTRY_POINTS = ["booking.web", "booking.api", "booking.admin", "booking.management"]
# The access layer knows the domain's errors only in ``booking/dynamo/errors.py`` and the
# lease's ``LeaseTaken``: each store failure is its domain error where it is raised
# (nothing above translates); it never reads the input rules.
FORBIDDEN = {"booking.dynamo": ["booking.validation"]}
DOMAIN_ERRORS_FROM = {"booking.dynamo.errors", "booking.dynamo.leases"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every booking module ``name`` imports, wherever in the file the import is."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in known else base)
    return {m for m in found if m in known and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str) -> int | None:
    for number, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return number
    return None


def layer_breaches(graph) -> list[str]:
    breaches = []
    for source, targets in sorted(graph.items()):
        mine = layer_of(source)
        for target in sorted(targets):
            theirs = layer_of(target)
            if mine is not None and theirs is not None and theirs > mine:
                breaches.append(f"{source} ({LAYERS[mine][0]}) imports {target} "
                                f"({LAYERS[theirs][0]}), a layer above it")
            for prefix, banned in FORBIDDEN.items():
                if source == prefix or source.startswith(prefix + "."):
                    if any(target == b or target.startswith(b + ".") for b in banned):
                        breaches.append(f"{source} imports {target}: the access layer "
                                        "never reads the input rules")
            if (source.startswith("booking.dynamo.") and target == "booking.errors"
                    and source not in DOMAIN_ERRORS_FROM):
                breaches.append(f"{source} imports {target}: only the store's errors "
                                f"({', '.join(sorted(DOMAIN_ERRORS_FROM))}) are domain errors")
    return breaches


def entry_point_of(module: str) -> str | None:
    return next((p for p in ENTRY_POINTS if module == p or module.startswith(p + ".")), None)


def entry_point_breaches(graph) -> list[str]:
    breaches = []
    for source, targets in sorted(graph.items()):
        mine = entry_point_of(source)
        for target in sorted(targets):
            theirs = entry_point_of(target)
            if mine is not None and theirs is not None and theirs != mine:
                breaches.append(f"{source} imports {target}: entry points never import one "
                                "another (move what they share below them, booking/entry/)")
    return breaches


def reads_settings(path: Path) -> list[int]:
    """Lines that import django.conf's settings (or django.conf itself)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module == "django.conf" and any(
                alias.name == "settings" for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.Import) and any(
                alias.name in ("django.conf", "django.conf.settings") for alias in node.names):
            lines.append(node.lineno)
    return lines


def settings_breaches() -> list[str]:
    breaches = []
    for folder in SCANNED_FOR_SETTINGS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative in SETTINGS_READERS:
                continue
            breaches += [f"{relative}:{line} reads django.conf.settings (only config/, "
                         "booking/wiring.py and booking/checks.py may)"
                         for line in reads_settings(path)]
    return breaches


def main(argv: list[str]) -> int:
    found = modules()
    graph = {name: imports(name, path, set(found)) for name, path in found.items()}
    if "--graph" in argv:
        for source, targets in sorted(graph.items()):
            print(source, "->", ", ".join(sorted(targets)))
    problems = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    problems += layer_breaches(graph)
    problems += entry_point_breaches(graph)
    problems += [f"{name} belongs to no layer in scripts/check_layout.py"
                 for name in found if name != PACKAGE and layer_of(name) is None]
    problems += settings_breaches()
    for problem in problems:
        print(problem)
    print(f"check_layout: {len(found)} modules, {sum(map(len, graph.values()))} imports, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
