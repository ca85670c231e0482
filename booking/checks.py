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
