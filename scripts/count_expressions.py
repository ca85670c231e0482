"""Count the string literals under booking/ that are DynamoDB expressions or their
hand-written placeholder keys: those containing ``attribute_not_exists``,
``attribute_exists``, ``if_not_exists``, ``list_append``, or a ``:name``/``#name``
placeholder. f-strings count once per literal part that matches.

    python scripts/count_expressions.py [folder ...]   # per file, then per folder, then total

Docstrings are not counted (they explain, they are not sent), nor a literal on a line
marked ``# a stored value, not an expression`` (a key such as ``"#list"``): those are
printed apart, so the marker cannot hide anything. The typed builder
(booking/dynamo/expressions.py) is where expression text may live.
"""
import ast
import re
import sys
from collections import Counter
from pathlib import Path

BUILDER = "booking/dynamo/expressions.py"
WORDS = ("attribute_not_exists", "attribute_exists", "if_not_exists", "list_append")
# ":rid", "#capacity", "holds.#h": a colon or hash starting a name, not inside a word or a
# URL/time ("12:30", "a#b", "http://"), nor a markdown heading ("# Title").
MARKER = "# a stored value, not an expression"
PLACEHOLDER = re.compile(r"(?<![\w:/#])[:#][A-Za-z_]\w*")


def is_expression(text: str) -> bool:
    return any(word in text for word in WORDS) or bool(PLACEHOLDER.search(text))


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def count_file(path: Path, *, marked: bool = False) -> int:
    """The file's expression literals (``marked``: those on marked lines instead)."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, str(path))
    skip = _docstrings(tree)
    lines = {n for n, line in enumerate(text.splitlines(), start=1) if MARKER in line}
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and (node.lineno in lines) != marked:
            if isinstance(node, ast.JoinedStr):
                skip.update(id(part) for part in node.values)
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            count += is_expression(node.value)
        elif isinstance(node, ast.JoinedStr):
            after_value = False  # "{event_id}#quota": a key's separator, not a placeholder
            for part in node.values:  # the literal parts (the constants inside an f-string)
                skip.add(id(part))
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    count += is_expression(("x" if after_value else "") + part.value)
                after_value = isinstance(part, ast.FormattedValue)
    return count


def counts(folders: list[str], *, marked: bool = False) -> dict[str, int]:
    """Per file (relative to the working directory, the repository's root): its count."""
    root, found = Path.cwd(), {}
    for folder in folders:
        base = root / folder
        for path in [base] if base.is_file() else sorted(base.rglob("*.py")):
            if n := count_file(path, marked=marked):
                found[path.relative_to(root).as_posix()] = n
    return found


def main(argv: list[str]) -> int:
    found = counts(argv or ["booking"])
    per_folder: Counter[str] = Counter()
    for name, n in found.items():
        print(f"{n:5d}  {name}")
        parts = name.split("/")
        per_folder["/".join(parts[:2]) if len(parts) > 2 else parts[0]] += n
    print()
    for folder, n in sorted(per_folder.items()):
        print(f"{n:5d}  {folder}/")
    outside = sum(n for name, n in found.items() if name != BUILDER)
    print(f"\n{sum(found.values()):5d}  total ({outside} outside {BUILDER})")
    values = counts(argv or ["booking"], marked=True)
    print(f"{sum(values.values()):5d}  more on lines marked {MARKER!r}: "
          + (", ".join(f"{name} {n}" for name, n in values.items()) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
