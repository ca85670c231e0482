"""One definition of the settings (config/settings_reference.py): .env.example, the docs'
settings page, config/settings.py and the system checks cannot drift from it."""
import ast
import re
from pathlib import Path

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from booking import checks, wiring
from config import settings_reference as reference

ROOT = Path(__file__).resolve().parents[2]
NAME = r"[A-Z][A-Z0-9_]*[A-Z0-9]"


def env_example_names(text: str) -> set[str]:
    return set(re.findall(rf"^#? ?({NAME})=", text, re.MULTILINE))


def settings_page_names(text: str) -> set[str]:
    return set(re.findall(rf"^\| `({NAME})` \|", text, re.MULTILINE))


def names_checks_read(source: str) -> set[str]:
    """Every ``settings.NAME`` and every setting-like string constant in a checks module."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == "settings"):
            found.add(node.attr)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and re.fullmatch(NAME, node.value) and "_" in node.value):
            found.add(node.value)
    return found


def direct_env_reads(source: str) -> list[str]:
    """Calls in settings.py that read the environment without the definition."""
    reads = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "env":
            reads.append(ast.unparse(node))
        elif (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
              and func.value.id in ("env", "os") and func.attr != "path"):
            reads.append(ast.unparse(node))
        elif isinstance(func, ast.Attribute) and func.attr in ("getenv", "get") and \
                ast.unparse(func.value) == "os.environ":
            reads.append(ast.unparse(node))
    return reads


def settings_py_reads(source: str) -> set[str]:
    return set(re.findall(rf'setting\(\s*"({NAME})"', source))


def undefined(names: set[str]) -> set[str]:
    return names - set(reference.BY_NAME)


def test_generated_files_are_current():
    """`.env.example` and docs/reference/settings.md are exactly what the definition
    writes (run `make settings-files` after editing it)."""
    assert reference.stale_files() == []


def test_env_example_and_settings_page_name_only_defined_variables():
    env_names = env_example_names((ROOT / ".env.example").read_text())
    page_names = settings_page_names((ROOT / "docs/reference/settings.md").read_text())
    assert env_names == set(reference.BY_NAME)
    assert page_names == set(reference.BY_NAME)


def test_a_hand_added_variable_is_caught():
    """The control: a variable added by hand to either file is reported."""
    env_text = (ROOT / ".env.example").read_text() + "# NOT_DEFINED_ANYWHERE=1\n"
    page_text = (ROOT / "docs/reference/settings.md").read_text() + \
        "| `ALSO_NOT_DEFINED` | `1` | made up |\n"
    assert undefined(env_example_names(env_text)) == {"NOT_DEFINED_ANYWHERE"}
    assert undefined(settings_page_names(page_text)) == {"ALSO_NOT_DEFINED"}


def test_checks_read_only_defined_settings():
    """booking/checks.py names no variable the definition lacks; its positive numbers are
    the definition's, and so are the rate limits it parses (booking.wiring.RATE_SETTINGS)."""
    source = Path(checks.__file__).read_text()
    read = names_checks_read(source) | set(checks.POSITIVE_SETTINGS) | \
        set(wiring.RATE_SETTINGS.values())
    read -= {"CONTROL_NAMES", "POSITIVE_SETTINGS"}  # the module's own constants
    assert undefined(read) == set()
    assert set(checks.POSITIVE_SETTINGS) == {s.name for s in reference.SETTINGS if s.positive}
    # The control: a check reading an undefined setting is caught.
    assert undefined(names_checks_read("settings.NOT_A_SETTING\n")) == {"NOT_A_SETTING"}


def test_settings_py_reads_the_environment_only_through_the_definition():
    source = (ROOT / "config/settings.py").read_text()
    assert direct_env_reads(source) == []
    assert undefined(settings_py_reads(source)) == set()
    # The control: a direct read is caught.
    assert direct_env_reads('X = env.int("X", default=1)\n') == ['env.int(\'X\', default=1)']


def test_every_defined_variable_is_read_somewhere():
    settings_source = (ROOT / "config/settings.py").read_text()
    read_in_settings = settings_py_reads(settings_source)
    unread = []
    for setting in reference.SETTINGS:
        if setting.read_by == "config/settings.py":
            found = setting.name in read_in_settings
        elif setting.read_by == "prometheus_client":
            import prometheus_client.values as values
            found = setting.name in Path(values.__file__).read_text()
        else:
            where = ROOT / setting.read_by
            files = where.rglob("*.py") if where.is_dir() else [where]
            found = any(setting.name in f.read_text() for f in files)
        if not found:
            unread.append(setting.name)
    assert unread == []


def test_a_computed_default_must_be_given_and_a_defined_one_must_not():
    class Env:
        def str(self, name, default):
            return default
    setting = reference.reader(Env())
    assert setting("AWS_REGION") == "us-east-1"
    with pytest.raises(ValueError):
        setting("AWS_REGION", default="eu-west-1")
    with pytest.raises(ValueError):
        setting("SITE_URL")
    with pytest.raises(KeyError):
        setting("NOT_DEFINED_ANYWHERE")


@pytest.mark.parametrize("name", reference.positive_settings())
def test_each_positive_setting_is_checked(name):
    with override_settings(**{name: 0}):
        errors = [e for e in run_checks() if e.id == "booking.E003"]
    assert [name in e.msg for e in errors] == [True]
