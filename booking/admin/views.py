"""Admin pages for events stored in DynamoDB. Thin: check rights, call the service, render.

Who may do what comes from the user's teams (``booking/organizers/rights.py``), asked in
one place here: ``event_page`` for a page of one event (another organizer's event answers
404 exactly as a missing one; a role without the right, 403) and ``visible_events`` for
lists.

Every view takes the ModelAdmin first (``EventAdmin.get_urls`` binds it), so the admin's
own permission methods, page size and site context apply.
"""
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core import signing
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse

from booking.admin import log as admin_log
from booking.admin import editor
from booking.admin.forms import EventAddForm, EventChangeForm, strategy_label
from booking.errors import BookingError, EventNotFound, InvalidBooking, StaleEdit
from booking.organizers import rights as organizer_rights
from booking.organizers.rights import CHANGE, CREATE, DELETE, VIEW
from booking.wiring import get_booking_service

TEMPLATES = "admin/booking/dynamoevent/"
CURSOR_SALT = "booking.admin.cursor"
LAST_ZONE = "booking.admin.last_time_zone"  # the session's key: the organizer's last zone


def url(name, *args):
    return reverse(f"admin:booking_dynamoevent_{name}", args=args)


def domain_errors(view):
    """Render a missing event (or one of another organizer) as 404, and other domain
    errors as a page."""
    @wraps(view)
    def wrapper(model_admin, request, *args, **kwargs):
        try:
            return view(model_admin, request, *args, **kwargs)
        except EventNotFound as missing:
            raise Http404(f"{missing.message} Perhaps it was deleted.") from None
        except BookingError as error:
            context = page(model_admin, request, "Event booking unavailable", error=error)
            return render(request, TEMPLATES + "error.html", context, status=503)
    return wrapper


def require(allowed: bool) -> None:
    if not allowed:
        raise PermissionDenied


def rights_of(request) -> organizer_rights.Rights:
    """The user's rights, read once per request."""
    if not hasattr(request, "organizer_rights"):
        request.organizer_rights = organizer_rights.for_user(request.user)
    return request.organizer_rights


def event_page(model_admin, request, event_id, action=VIEW, post_action=CHANGE):
    """(service, event, can_change) for a page of one event the user may ``action``;
    posting to it needs ``post_action``. ``EventNotFound`` for an event the user has no
    role on (exactly as a missing one), 403 for a role without the right."""
    service = get_booking_service()
    event = service.get_event(event_id)
    rights = rights_of(request)
    if not rights.knows_event(event):
        raise EventNotFound()
    require(rights.may_event(action, event))
    can_change = rights.may_event(CHANGE, event)
    if request.method == "POST":
        require(rights.may_event(post_action, event))
    return service, event, can_change


def visible_events(request, action=VIEW) -> dict:
    """The ``organizers``/``event_ids`` keywords of a listing of what the user may see."""
    scope = rights_of(request).scope(action)
    return {"organizers": None if scope.is_everything else scope.organizers,
            "event_ids": scope.event_ids}


def creatable_organizers(request) -> list[tuple[str, str]]:
    """(slug, name) of the organizers the user may create events in."""
    from booking.organizers.models import Organizer

    allowed = rights_of(request).organizers(CREATE)
    found = Organizer.objects.all() if allowed is organizer_rights.ALL else \
        Organizer.objects.filter(slug__in=allowed)
    return [(o.slug, o.name or o.slug) for o in found]


def page(model_admin, request, title, **context):
    """The context every admin page needs (site header, sidebar, user links)."""
    return {**model_admin.admin_site.each_context(request), "opts": model_admin.opts,
            "title": title, **context}


def sign(cursor) -> str:
    return signing.dumps(cursor, salt=CURSOR_SALT, compress=True)


def unsign(request, token):
    """The cursor a page link carries; None (first page) when absent or tampered with."""
    if not token:
        return None
    try:
        return signing.loads(token, salt=CURSOR_SALT)
    except signing.BadSignature:
        messages.warning(request, "That page link is not valid. Showing the first page.")
        return None


def link(**params) -> str:
    return "?" + urlencode({k: v for k, v in params.items() if v})


FILTERS = (("", "All"), ("upcoming", "Upcoming"), ("past", "Past"), ("full", "Full"))
# What an empty list says, by filter: the filter's own words, never "No events yet." when
# events exist but none fits.
EMPTY = {"": "No events yet.", "upcoming": "No upcoming events.", "past": "No past events.",
         "full": "No full events."}


def empty_message(*, show: str, search: str, more: bool) -> str:
    """The line an empty page shows; ``more``: later pages exist (a filter is per page)."""
    if search:
        kind = f"{show} event" if show else "event"
        return f"No {kind} on this page has “{search}” in its name."
    words = EMPTY[show]
    return words[:-1] + " on this page." if more and show else words


@domain_errors
def changelist(model_admin, request):
    require(model_admin.has_view_or_change_permission(request))
    service = get_booking_service()
    search = request.GET.get("q", "").strip()
    show = request.GET.get("show", "")
    show = show if show in dict(FILTERS) else ""
    start = unsign(request, request.GET.get("page"))
    events, next_key = service.events_page(
        start_key=start, limit=model_admin.list_per_page, search=search,
        when=show if show != "full" else "", **visible_events(request))
    seats = service.availabilities(events)  # None: an event whose delete was interrupted
    rows: list[dict[str, Any]] = [
        {"event": event, "seats": seats.get(event.id), "size": strategy_label(event.strategy),
         "size_short": editor.crowd_of(event.strategy).label} for event in events]
    if show == "full":  # the count lives with each strategy's items: checked per row
        rows = [row for row in rows if row["seats"] is not None and row["seats"].is_full]
    return render(request, TEMPLATES + "change_list.html", page(
        model_admin, request, "Events", rows=rows, search=search, show=show,
        empty=empty_message(show=show, search=search, more=bool(next_key)),
        filters=[(label, link(q=search, show=value), value == show) for value, label in FILTERS],
        can_add=model_admin.has_add_permission(request),
        next_url=link(q=search, show=show, page=sign(next_key)) if next_key else "",
        first_url=link(q=search, show=show) if start else ""))


def seats_or_none(service, event_id):
    """Availability, or None for an event whose delete was interrupted."""
    try:
        return service.availability(event_id)
    except EventNotFound:
        return None


@domain_errors
def add(model_admin, request):
    require(model_admin.has_add_permission(request))
    form = EventAddForm(request.POST or None, organizers=creatable_organizers(request),
                        initial={"time_zone": request.session.get(LAST_ZONE)} if
                        request.session.get(LAST_ZONE) else None)
    if request.method == "POST" and form.is_valid() and not form.hold_for_warnings():
        try:
            event = get_booking_service().create_event(**form.event_kwargs())
        except InvalidBooking as error:
            form.show_error(error)
        else:
            remember_zone(request, event)
            admin_log.record(request, event, admin_log.ADDITION, added_message(event))
            messages.success(request, f"The event “{event.name}” was added.")
            return redirect(url("add") if "_addanother" in request.POST else saved(event))
    return render(request, TEMPLATES + "change_form.html", page(
        model_admin, request, "Add event", form=form, can_save=True, can_add_another=True,
        time_zones=editor.zone_options(request.session.get(LAST_ZONE, ""))))


def saved(event) -> str:
    """The list searched for the event just saved: unfiltered, a Scan's page holds any 25
    events, so with many events the one saved would often be on a later page."""
    return url("changelist") + link(q=event.name)


def remember_zone(request, event) -> None:
    """The zone offered first next time (per signed-in organizer: their session)."""
    if event.time_zone:
        request.session[LAST_ZONE] = event.time_zone


def added_message(event) -> str:
    """The admin log's words for a new event (its orders' shape too, docs/orders.md)."""
    text = (f"Added with capacity {event.capacity}, set up for "
            f"“{editor.crowd_of(event.strategy).label}”.")
    if not event.offers_orders:
        return text
    quotas = ", ".join(f"{name} {seats}" for name, seats in event.quotas.items()) or "none"
    return (f"{text} Quotas: {quotas}; ticket types: {', '.join(event.ticket_types)}; "
            f"up to {event.max_per_order} seats per order.")


@domain_errors
def change(model_admin, request, event_id):
    service, event, can_change = event_page(model_admin, request, event_id)
    seats = seats_or_none(service, event.id)
    form, conflict = EventChangeForm.for_event(event, seats), None
    if request.method == "POST":
        form = EventChangeForm(request.POST, event=event, seats=seats)
        if form.is_valid() and not form.hold_for_warnings():
            before = event
            try:
                event = service.update_event(event.id, **form.update_kwargs())
            except StaleEdit as error:
                event = conflict = service.get_event(event.id)
                form = reapply_form(request.POST, conflict, error, seats)
            except InvalidBooking as error:
                form.show_error(error)
            else:
                remember_zone(request, event)
                admin_log.record(request, event, admin_log.CHANGE,
                                 admin_log.describe_changes(before, event))
                messages.success(request, f"The event “{event.name}” was changed.")
                return redirect(saved(event))
    if not can_change:
        form.disable()
    return render(request, TEMPLATES + "change_form.html", page(
        model_admin, request, f"{'Change' if can_change else 'View'} event", form=form,
        event=event, conflict=conflict, seats=seats_or_none(service, event.id),
        crowd=editor.crowd_of(event.strategy), most_seats=editor.most_seats(event.strategy),
        time_zones=editor.zone_options(event.time_zone),
        can_save=can_change, can_delete=rights_of(request).may_event(DELETE, event)))


def reapply_form(posted, current, error, seats=None):
    """The organizer's values again, now based on the current version, with the conflict."""
    # A field the organizer never saw (a ticket type added since) starts as it is now.
    now = {name: value for name, value in
           EventChangeForm.for_event(current, seats).initial.items() if value is not None}
    form = EventChangeForm({**now, **posted.dict(), "version": current.version},
                           event=current, seats=seats)
    form.is_valid()
    form.add_error(None, f"{error.message} Its current values are shown above. Check them; "
                         "saving this form again applies your values on top of them.")
    return form


@domain_errors
def delete(model_admin, request, event_id):
    service, event, _ = event_page(model_admin, request, event_id, DELETE, DELETE)
    if request.method == "POST":
        service.delete_event(event.id)
        admin_log.record(request, event, admin_log.DELETION,
                         "Deleted with its registrations.")
        messages.success(request, f"The event “{event.name}” was deleted.")
        return redirect(url("changelist"))
    seats = seats_or_none(service, event.id)
    return render(request, TEMPLATES + "delete_confirmation.html", page(
        model_admin, request, "Delete event", event=event,
        registrations=seats.confirmed if seats else 0))


def view_on_site(request, content_type_id, object_id):
    """The admin's "view on site" link (/admin/r/<ct>/<id>/): events have no SQL row, so
    theirs goes to the public event page; every other model gets Django's own view."""
    from django.contrib.contenttypes.models import ContentType
    from django.contrib.contenttypes.views import shortcut
    from django.http import Http404

    from booking.models import DynamoEvent

    if content_type_id != ContentType.objects.get_for_model(DynamoEvent).id:
        return shortcut(request, content_type_id, object_id)
    try:
        event = get_booking_service().get_event(object_id)
    except EventNotFound:
        raise Http404("No such event.") from None
    return redirect("booking:event_detail", event_id=event.id)
