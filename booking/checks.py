"""System checks (`manage.py check`): configuration mistakes found before serving."""
from django.conf import settings
from django.core.checks import Error, register


@register()
def default_strategy_check(app_configs=None, **kwargs):
    """BOOKING_DEFAULT_STRATEGY must name a guarded strategy (never the control)."""
    from .strategies import GUARDED, STRATEGIES

    name = settings.BOOKING_DEFAULT_STRATEGY
    if name in GUARDED:
        return []
    what = "the unguarded control strategy" if name in STRATEGIES else f"unknown: {name!r}"
    return [Error(f"BOOKING_DEFAULT_STRATEGY is {what}.",
                  hint=f"Choose one of: {', '.join(GUARDED)}.", id="booking.E001")]


RATE_SETTINGS = ("BOOKING_SIGNUP_RATE", "BOOKING_CANCEL_RATE", "BOOKING_SIGNUP_EMAIL_RATE",
                 "ADMIN_LOGIN_RATE")


@register()
def rate_settings_check(app_configs=None, **kwargs):
    """Every rate limit reads like '10/10m' or 'off'."""
    from .rate_limits import parse_rate

    errors = []
    for name in RATE_SETTINGS:
        try:
            parse_rate(getattr(settings, name))
        except ValueError as error:
            errors.append(Error(f"{name}: {error}.", id="booking.E002"))
    return errors
