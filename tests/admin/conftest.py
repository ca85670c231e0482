import pytest

from tests.organizers.helpers import organizer


@pytest.fixture(autouse=True)
def default_organizer(db):
    """The one organizer: events created without naming one (admin, commands) are its."""
    return organizer()
