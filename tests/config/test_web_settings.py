"""The web's settings are read once a process, and again once a setting changes."""
from booking import validation, wiring


def test_web_settings__read_once__read_again_after_a_setting_changes(settings):
    first = wiring.web_settings()
    assert wiring.web_settings() is first  # every request asks several times: one read
    settings.BOOKING_QUEUE_DEADLINE = first.queue_deadline + 1.5
    settings.BOOKING_SIGNUP_RATE = "3/m"
    changed = wiring.web_settings()
    assert changed.queue_deadline == first.queue_deadline + 1.5
    assert changed.rates["signup"] == "3/m"


def test_normalize_email__kept_keys_are_the_keys__bad_input_still_refused():
    assert validation.normalize_email("ADA@Bücher.example") == "ada@xn--bcher-kva.example"
    assert validation.normalize_email("ADA@Bücher.example") == "ada@xn--bcher-kva.example"
    for bad in ("not an address", ["a@example.com"], {"a": 1}, None, "a@example.com" * 100):
        try:
            validation.normalize_email(bad)
        except validation.InvalidBooking:
            continue
        raise AssertionError(f"{bad!r} was accepted")
