"""The API's view base (apart from ``auth.py``: DRF loads authentication classes while
its views module is still importing).

Every method of every view needs an organizer's token unless the view names it in
``public_methods``; HEAD and OPTIONS are asked exactly as GET. A token's request is then
scoped here, once, before the view runs (``scope``): the event (``event_id``, or the
event of the check-in list ``list_id``) or webhook
endpoint (``endpoint_id``) its URL names, or else the token's own organizer, must be one
the token's rights reach for the view's ``actions[method]``. Another organizer's object
answers 404 exactly as a missing one; a role without the right, 403. A URL keyword this
base does not know refuses every token request (500), so a new route cannot skip it.
"""
from django.core.exceptions import ImproperlyConfigured
from rest_framework import exceptions, permissions
from rest_framework.views import APIView

from booking.api.auth import OrganizerToken
from booking.errors import CheckinListNotFound, EventNotFound
from booking.organizers import rights as organizer_rights
from booking.entry import limits as rate_limits
from booking.wiring import get_booking_service, webhook_registry

TOKEN_LIMITED = "Too many requests with this API token. Please wait and try again."
NOT_ALLOWED = "This API token's scope, or its user's role on this organizer, does not allow this."
ASKED_AS_GET = ("HEAD", "OPTIONS")


def asked_as(method: str) -> str:
    """The method whose rule applies: HEAD and OPTIONS read like GET."""
    return "GET" if method in ASKED_AS_GET else method


class ApiView(APIView):
    """An API view: ``public_methods`` anyone may call; every other method needs a token
    whose rights reach ``actions[method]`` (default: GET ``VIEW``, others ``CHANGE``)."""

    public_methods: tuple[str, ...] = ()
    actions: dict[str, str] = {}

    def dispatch(self, request, *args, **kwargs):
        """Every read the request makes ends within the request's deadline
        (``BookingService.page_deadline``; a booking or cancellation keeps its own): past
        it, 503 with Retry-After (``problems.exception_handler``), never a thread held by
        the store's retries."""
        with get_booking_service().page_deadline():
            return super().dispatch(request, *args, **kwargs)

    def is_public(self, request) -> bool:
        return asked_as(request.method) in self.public_methods

    def initial(self, request, *args, **kwargs):
        """Authenticate, authorize, scope; count a token's requests against its limit
        (429 ``rate-limited`` past it)."""
        super().initial(request, *args, **kwargs)
        if request.auth is not None:
            rate_limits.check(rate_limits.API_TOKEN, f"token-{request.auth.pk}",
                              message=TOKEN_LIMITED)
        if not self.is_public(request):
            self.scope(request, kwargs)

    def get_permissions(self):
        if self.is_public(self.request):
            return [permissions.AllowAny()]
        return [OrganizerToken()]

    # --- scoping (the one place) ---------------------------------------------------
    def right_needed(self, request) -> str:
        method = asked_as(request.method)
        default = organizer_rights.VIEW if method == "GET" else organizer_rights.CHANGE
        return self.actions.get(method, default)

    def scope(self, request, kwargs) -> None:
        """Check the token's rights on what the URL names; keep it as ``self.event`` or
        ``self.endpoint``. Raises 404 (unknown to the token) or 403 (not allowed)."""
        unknown = set(kwargs) - {"event_id", "endpoint_id", "list_id"}
        if unknown:
            raise ImproperlyConfigured(f"{type(self).__name__}: the API scope knows no "
                                       f"URL keyword {sorted(unknown)}.")
        rights, action = request.auth.rights, self.right_needed(request)
        self.rights, self.organizer = rights, request.auth.organizer.slug
        if "event_id" in kwargs or "list_id" in kwargs:
            if "list_id" in kwargs:  # a check-in list: its event's rights (``rights.SCAN``)
                self.checkin_list = get_booking_service().find_checkin_list(kwargs["list_id"])
                event = get_booking_service().get_event(self.checkin_list.event_id)
            else:
                event = get_booking_service().get_event(kwargs["event_id"])
            if not rights.knows_event(event):
                raise CheckinListNotFound() if "list_id" in kwargs else EventNotFound()
            self.event = event
            allowed = rights.may_event(action, event)
        elif "endpoint_id" in kwargs:
            endpoint = webhook_registry().get(kwargs["endpoint_id"],
                                              organizers={self.organizer})
            self.endpoint = endpoint
            allowed = rights.may_organizer(action, endpoint.organizer)
        else:
            allowed = rights.may_organizer(action, self.organizer)
        if not allowed:
            raise exceptions.PermissionDenied(NOT_ALLOWED)
