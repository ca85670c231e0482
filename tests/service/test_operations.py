"""The service's operations that one capability does alone are that capability's own
methods (``booking.service.Operation``): no method of ``BookingService`` forwards a call
unchanged, and every name the entry points use reaches the method it names."""
import ast
import inspect
from pathlib import Path

import booking.service
from booking.service import BookingService, Operation

SOURCE = Path(booking.service.__file__)


def operations() -> dict[str, Operation]:
    return {name: value for name, value in vars(BookingService).items()
            if isinstance(value, Operation)}


def test_every_operation__the_capabilitys_own_bound_method(service):
    assert len(operations()) > 40
    for name, operation in operations().items():
        part = getattr(service, operation.part)
        reached = getattr(service, name)
        assert reached.__self__ is part, name
        assert reached.__func__ is operation.method, name
        assert inspect.signature(reached) == inspect.signature(
            getattr(part, operation.method.__name__)), name


def test_an_operation_replaced_on_its_capability__the_service_reaches_the_replacement(service):
    # Resolved when the attribute is read, never kept: a test double on the capability is
    # what the service's name calls, as a forwarding method did.
    service.checkin.scan_log = lambda list_id, limit=None: ["replaced"]
    assert service.scan_log("any") == ["replaced"]


def forwarders(source: str) -> list[str]:
    """Methods of ``BookingService`` whose whole body (past a docstring) is one call of a
    capability's method, ``self.<part>.<method>(...)``, with its own parameters passed on
    unchanged: a forwarder, which ``Operation`` replaces."""
    tree = ast.parse(source)
    service = next(node for node in tree.body
                   if isinstance(node, ast.ClassDef) and node.name == "BookingService")
    found = []
    for method in service.body:
        if not isinstance(method, ast.FunctionDef) or method.decorator_list:
            continue
        body = [s for s in method.body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        call = body[0].value if len(body) == 1 and isinstance(body[0], (ast.Return, ast.Expr)) \
            else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Attribute)
                and isinstance(call.func.value.value, ast.Name)
                and call.func.value.value.id == "self"):
            continue
        passed_on = all(isinstance(a, ast.Name) for a in call.args) and all(
            isinstance(k.value, ast.Name) and k.arg == k.value.id for k in call.keywords)
        if passed_on:
            found.append(method.name)
    return found


def test_no_method_of_the_service_is_a_bare_forwarder():
    assert forwarders(SOURCE.read_text()) == []


def test_forwarders__the_check_finds_one():
    # The control: the shape the check forbids is found.
    source = SOURCE.read_text().replace(
        '    scan_log = Operation("checkin", Checkin.scan_log)\n',
        "    def scan_log(self, list_id, *, limit=None):\n"
        "        return self.checkin.scan_log(list_id, limit=limit)\n")
    assert forwarders(source) == ["scan_log"]
