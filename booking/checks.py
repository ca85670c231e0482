"""System checks (`manage.py check`): configuration mistakes found before serving."""
import math

from django.conf import settings
from django.core.checks import Error, register
from django.core.checks import Warning as CheckWarning

from config.settings_reference import positive_settings

# Names of the controls tests and harnesses build (harness/controls.py): named here only
# so that a setting naming one gets a clear message.
CONTROL_NAMES = ("unguarded",)


@register()
def default_strategy_check(app_configs=None, **kwargs):
    """BOOKING_DEFAULT_STRATEGY must name a strategy of the product's registry (the
    guarded ones); a control such as 'unguarded' is built only by tests and harnesses."""
    from booking.strategies import GUARDED

    name = settings.BOOKING_DEFAULT_STRATEGY
    if name in GUARDED:
        return []
    what = (f"{name!r}, a test control that overbooks by design (not a product strategy)"
            if name in CONTROL_NAMES else f"unknown: {name!r}")
    return [Error(f"BOOKING_DEFAULT_STRATEGY is {what}.",
                  hint=f"Choose one of: {', '.join(GUARDED)}.", id="booking.E001")]




@register()
def rate_settings_check(app_configs=None, **kwargs):
    """Every rate limit reads like '10/10m' or 'off'."""
    from booking.entry.limits import parse_rate
    from booking.wiring import RATE_SETTINGS

    errors = []
    for name in RATE_SETTINGS.values():
        try:
            parse_rate(getattr(settings, name))
        except ValueError as error:
            errors.append(Error(f"{name}: {error}.", id="booking.E002"))
    return errors


# Durations and counts that must be positive, finite numbers (0, a negative number, inf or
# nan would hold seats for no time or forever, or spin the worker).
# They are the ones marked ``positive`` in the one definition of the settings.
POSITIVE_SETTINGS = positive_settings()


@register()
def positive_settings_check(app_configs=None, **kwargs):
    """Each of POSITIVE_SETTINGS is a number above 0 and finite."""
    errors = []
    for name in POSITIVE_SETTINGS:
        value = getattr(settings, name)
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            errors.append(Error(f"{name} must be a positive number; it is {value!r}.",
                                id="booking.E003"))
    return errors


@register()
def webhook_allowed_hosts_check(app_configs=None, **kwargs):
    """WEBHOOK_ALLOWED_HOSTS lets webhooks reach hosts that are not public (with DEBUG off,
    that is a production server whose organizers could reach its private network)."""
    if settings.DEBUG or not settings.WEBHOOK_ALLOWED_HOSTS:
        return []
    hosts = ", ".join(settings.WEBHOOK_ALLOWED_HOSTS)
    return [CheckWarning(f"WEBHOOK_ALLOWED_HOSTS is set ({hosts}) with DEBUG off: webhooks may "
                    "reach those hosts whatever address they have, over http:// too.",
                    hint="Leave it empty in production; it is meant for development.",
                    id="booking.W020")]
