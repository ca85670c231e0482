"""MkDocs hooks (mkdocs.yml ``hooks:``): the HTTP API reference page, rendered at build time
from the OpenAPI schema the running code serves (`manage.py spectacular`), so it is never
stale and needs no script from a CDN (Swagger UI stays at /api/v1/docs/ on the site itself).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
PAGE = "reference/http-api.md"
METHODS = ("get", "post", "put", "patch", "delete")
STATUS_WORDS = {"200": "OK", "201": "Created", "202": "Accepted", "204": "No Content",
                "304": "Not Modified", "400": "Bad Request", "401": "Unauthorized",
                "403": "Forbidden", "404": "Not Found", "405": "Method Not Allowed",
                "409": "Conflict", "410": "Gone", "412": "Precondition Failed",
                "413": "Content Too Large", "415": "Unsupported Media Type",
                "422": "Unprocessable Content", "428": "Precondition Required",
                "429": "Too Many Requests", "503": "Service Unavailable"}


def openapi_schema() -> dict:
    """The schema as `manage.py spectacular` writes it (a development environment: the
    command reads no store)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "schema.json"
        env = {**os.environ, "DEBUG": "true", "DJANGO_SETTINGS_MODULE": "config.settings"}
        subprocess.run([sys.executable, "manage.py", "spectacular", "--format", "openapi-json",
                        "--file", str(out), "--fail-on-warn"], cwd=ROOT, env=env, check=True,
                       capture_output=True, timeout=120)
        return json.loads(out.read_text())


def _ref(schema: dict) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if schema.get("type") == "array":
        return f"array of {_ref(schema.get('items', {}))}"
    if "allOf" in schema:
        return " and ".join(_ref(s) for s in schema["allOf"])
    if "oneOf" in schema or "anyOf" in schema:
        return " or ".join(_ref(s) for s in schema.get("oneOf", schema.get("anyOf", [])))
    kind = schema.get("type", "object")
    if "enum" in schema:
        kind += " (" + ", ".join(f"`{v}`" for v in schema["enum"] if v is not None) + ")"
    if schema.get("format"):
        kind += f" ({schema['format']})"
    return kind


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _operation(path: str, method: str, op: dict) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", ""]
    if op.get("description"):
        lines += [op["description"].strip(), ""]
    security = op.get("security")
    if security is not None:
        needs = "an organizer's token" if all(s for s in security) else \
            "none (an organizer's token shows more)" if any(s for s in security) else "none"
        lines += [f"Authentication: {needs}.", ""]
    params = op.get("parameters", [])
    if params:
        lines += ["| parameter | in | required | type | meaning |", "|---|---|---|---|---|"]
        for p in params:
            lines.append(f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'}"
                         f" | {_ref(p.get('schema', {}))} | {_cell(p.get('description', ''))} |")
        lines.append("")
    body = op.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        lines += [f"Body ({media}): {_ref(content.get('schema', {}))}", ""]
    lines += ["| status | body |", "|---|---|"]
    for status, response in op.get("responses", {}).items():
        contents = response.get("content", {})
        shown = "; ".join(f"{_ref(c.get('schema', {}))} (`{m}`)" for m, c in contents.items())
        text = _cell(response.get("description", "")) or shown or "none"
        if shown and response.get("description"):
            text = f"{shown}: {text}"
        lines.append(f"| {status} {STATUS_WORDS.get(status, '')} | {text} |")
    return lines + [""]


def _component(name: str, schema: dict) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [_cell(schema["description"]), ""]
    if "enum" in schema:
        return lines + ["One of: " + ", ".join(f"`{v}`" for v in schema["enum"]), ""]
    props = schema.get("properties", {})
    if not props:
        return lines + [f"Type: {_ref(schema)}", ""]
    required = set(schema.get("required", []))
    lines += ["| field | type | required | meaning |", "|---|---|---|---|"]
    for field, spec in props.items():
        flags = "read-only" if spec.get("readOnly") else (
            "yes" if field in required else "no")
        lines.append(f"| `{field}` | {_cell(_ref(spec))} | {flags} | "
                     f"{_cell(spec.get('description', ''))} |")
    return lines + [""]


def render(schema: dict) -> str:
    info = schema["info"]
    lines = [f"# HTTP API reference: {info['title']} {info['version']}", "",
             "Rendered from the OpenAPI schema when the site is built (`manage.py "
             "spectacular`), so it says what the code serves. A running site serves the same "
             "schema at `/api/v1/schema/` and browsable documentation at `/api/v1/docs/`. "
             "How to use it (tokens, the Idempotency-Key, webhooks, curl examples): "
             "[the JSON API guide](../api.md).", "",
             _cell(info.get("description", "")), ""]
    tags: dict[str, list] = {}
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                tag = (item[method].get("tags") or ["other"])[0]
                tags.setdefault(tag, []).append((path, method, item[method]))
    for tag, operations in tags.items():
        lines += [f"## {tag.replace('-', ' ').capitalize()}", ""]
        for path, method, op in operations:
            lines += _operation(path, method, op)
    lines += ["## Schemas", ""]
    for name, component in schema.get("components", {}).get("schemas", {}).items():
        lines += _component(name, component)
    return "\n".join(lines)


def on_files(files, config):
    """Add the HTTP API page, generated, to the site's files."""
    files.append(File.generated(config, PAGE, content=render(openapi_schema())))
    return files


ERRORS_PAGE = "reference/errors.md"
ERRORS_MARKER = "<!-- error table: generated -->"
ERROR_TABLE_SCRIPT = """
import json
from booking import errors
from booking.api.problems import DOMAIN_PROBLEMS as PROBLEMS
from booking.entry.error_pages import STATUS_FOR_ERROR as STATUSES
rows = []
for name in dir(errors):
    cls = getattr(errors, name)
    if isinstance(cls, type) and issubclass(cls, errors.BookingError):
        api = next((PROBLEMS[c] for c in cls.__mro__ if c in PROBLEMS), None)
        web = next((STATUSES[c] for c in cls.__mro__ if c in STATUSES), None)
        rows.append([cls.__name__, cls.code, cls.default_message, web, api])
print(json.dumps(rows))
"""


def error_rows() -> list:
    """Each domain error with its code, message and the two HTTP mappings, read from the
    code (booking/errors.py, booking/entry/error_pages.py, booking/api/problems.py)."""
    env = {**os.environ, "DEBUG": "true", "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", ERROR_TABLE_SCRIPT],
                          cwd=ROOT, env=env, check=True, capture_output=True, text=True,
                          timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def error_table() -> str:
    lines = ["| error | code | message shown | web page | JSON API (status, problem type) |",
             "|---|---|---|---|---|"]
    for name, code, message, web, api in sorted(error_rows(), key=lambda r: r[0] != "BookingError"):
        api_text = f"{api[0]} `{api[1]}`" if api else "-"
        lines.append(f"| `{name}` | `{code}` | {_cell(message)} | {web or '-'} | {api_text} |")
    return "\n".join(lines)




TABLES_PAGE = "reference/tables.md"
TABLES_MARKER = "<!-- table definitions: generated -->"


def tables_table() -> str:
    """Every table's keys, indexes, TTL and stream, from booking/dynamo/tables.py (which
    also creates the tables and writes the AWS template)."""
    sys.path.insert(0, str(ROOT))
    from booking.dynamo.tables import ALL_TABLES

    def key(spec) -> str:
        return f"`{spec.hash_key[0]}`" + (f", `{spec.range_key[0]}`" if spec.range_key else "")

    lines = ["| table | key | indexes | TTL attribute | stream |", "|---|---|---|---|---|"]
    for spec in ALL_TABLES:
        indexes = "; ".join(f"`{i.name}` ({key(i)})" for i in spec.indexes) or "-"
        lines.append(f"| `{spec.suffix}` | {key(spec)} | {indexes} | "
                     f"{'`' + spec.ttl_attribute + '`' if spec.ttl_attribute else '-'} | "
                     f"{spec.stream_view or '-'} |")
    return "\n".join(lines)


# Pages with a part read from the code when the site is built: page -> (marker, writer).
GENERATED_PARTS = {ERRORS_PAGE: (ERRORS_MARKER, error_table),
                   TABLES_PAGE: (TABLES_MARKER, tables_table)}


def on_page_markdown(markdown, page, config, files):
    """Put each generated part in place of its marker."""
    part = GENERATED_PARTS.get(page.file.src_uri)
    if part is None:
        return markdown
    marker, write = part
    if marker not in markdown:
        raise ValueError(f"{page.file.src_uri} lost its marker {marker}")
    return markdown.replace(marker, write())
