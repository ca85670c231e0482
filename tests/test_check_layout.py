"""scripts/check_layout.py: entry points never import one another, and the tree keeps it."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def check_layout():
    spec = importlib.util.spec_from_file_location("check_layout", ROOT / "scripts/check_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_entry_point_importing_another__is_a_breach():
    layout = check_layout()
    graph = {"booking.api.views": {"booking.admin.registrations", "booking.entry.limits"},
             "booking.admin.webhooks": {"booking.api.models"},
             "booking.web.views": {"booking.web.middleware", "booking.service"}}

    breaches = layout.entry_point_breaches(graph)

    assert len(breaches) == 2
    assert any("booking.api.views imports booking.admin.registrations" in b for b in breaches)
    assert any("booking.admin.webhooks imports booking.api.models" in b for b in breaches)


def test_the_tree__no_entry_point_imports_another():
    layout = check_layout()
    found = layout.modules()
    graph = {name: layout.imports(name, path, set(found)) for name, path in found.items()}

    assert layout.entry_point_breaches(graph) == []
    assert layout.cycles(graph) == []


def test_the_access_layer__domain_errors_only_in_its_errors():
    # Each store failure is its domain error where it is raised (booking/dynamo/errors.py,
    # the lease's LeaseTaken); any other access-layer module using the domain's errors, or
    # the input rules, is a breach.
    layout = check_layout()
    graph = {"booking.dynamo.errors": {"booking.errors"},
             "booking.dynamo.leases": {"booking.errors"},
             "booking.dynamo.table": {"booking.errors"},
             "booking.dynamo.access": {"booking.validation"}}

    breaches = layout.layer_breaches(graph)

    assert len(breaches) == 2, breaches
    assert any(b.startswith("booking.dynamo.table imports booking.errors") for b in breaches)
    assert any(b.startswith("booking.dynamo.access imports booking.validation") for b in breaches)
