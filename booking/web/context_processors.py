"""The one template context processor: what every page's template needs from the wiring."""
from booking.wiring import web_settings


def page(request) -> dict:
    """``{{ csp_nonce }}`` for inline scripts; ``{{ site_url }}`` for absolute links."""
    return {"csp_nonce": getattr(request, "csp_nonce", ""),
            "site_url": web_settings().site_url}
