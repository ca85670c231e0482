"""Webhook endpoints in the admin: an organizer's admins register, remove and re-enable
its endpoints (a superuser sees all), see each one's delivery log, and are told when one
was disabled. Thin over ``WebhookRegistry``; data from DynamoDB, rights from the user's
teams (``booking/organizers/rights.py``): another organizer's endpoint is "not found"."""
from datetime import datetime
from datetime import timezone as dt_timezone
from functools import partial, update_wrapper
from typing import cast

from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect, render
from django.urls import path, reverse

from booking.admin.forms import organizer_field
from booking.admin.views import page, require, rights_of
from booking.organizers.tokens import WebhookEndpointEntry
from booking.errors import BookingError, EventNotFound, InvalidBooking, WebhookNotFound
from booking.organizers import rights
from booking.organizers.models import Organizer
from booking.webhooks.registry import ALL_EVENTS, EVENT_TYPES
from booking.wiring import get_booking_service, webhook_registry, webhook_sender

TEMPLATES = "admin/booking_api/webhook/"


def url(name, *args):
    return reverse(f"admin:booking_api_webhookendpointentry_{name}", args=args)


EVENTS_LISTED = 200  # the events offered by name in the form (soonest first)
URL_HELP = ("https:// to a public internet host; port 443 or 1024-65535. An operator can "
            "allow other hosts (a development machine) with WEBHOOK_ALLOWED_HOSTS.")


class EndpointForm(forms.Form):
    url = forms.CharField(label="URL", max_length=2000, help_text=URL_HELP,
                          widget=forms.URLInput(attrs={"size": 60}))
    events = forms.MultipleChoiceField(choices=[(t, t) for t in EVENT_TYPES],
                                       widget=forms.CheckboxSelectMultiple)
    event_id = forms.ChoiceField(label="Event", required=False,
                                 help_text="Every event of the organizer, or one of them.")
    description = forms.CharField(required=False, max_length=200)

    def __init__(self, *args, organizers=(), events=(), **kwargs):
        """``events``: the events the user may pick (their organizers'), by name."""
        super().__init__(*args, **kwargs)
        self.fields["organizer"] = organizer_field(
            organizers, "Its organizer's events' changes are sent here.")
        self.events_by_id = {event.id: event for event in events}
        # One organizer's events (``add``): their names alone tell them apart.
        cast(forms.ChoiceField, self.fields["event_id"]).choices = [("", "Every event")] + [
            (event.id, event.name) for event in events]
        self.order_fields(["organizer", "url", "events", "event_id", "description"])

    def clean(self):
        super().clean()
        data = self.cleaned_data
        event = self.events_by_id.get(data.get("event_id") or "")
        if event is not None and data.get("organizer") and event.organizer != data["organizer"]:
            self.add_error("event_id", "Choose one of this organizer's events (or every event).")
        return data


def moment(epoch):
    return None if epoch is None else datetime.fromtimestamp(float(epoch), dt_timezone.utc)


def organizers(request, action):
    """The slugs of the organizers whose endpoints ``action`` reaches (None: all)."""
    return rights_of(request).organizers(action)


@admin.register(WebhookEndpointEntry)
class WebhookAdmin(admin.ModelAdmin):
    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_view_permission(self, request, obj=None):
        return organizers(request, rights.SEE_WEBHOOKS) != frozenset()

    def has_add_permission(self, request):
        return organizers(request, rights.MANAGE) != frozenset()

    def has_change_permission(self, request, obj=None):
        return self.has_add_permission(request)

    def has_delete_permission(self, request, obj=None):
        return self.has_add_permission(request)

    def get_urls(self):
        def route(pattern, view, suffix):
            bound = update_wrapper(partial(view, self), view)
            return path(pattern, self.admin_site.admin_view(bound),
                        name=f"booking_api_webhookendpointentry_{suffix}")

        return [route("", changelist, "changelist"), route("add/", add, "add"),
                route("<str:endpoint_id>/deliveries/", deliveries, "deliveries"),
                route("<str:endpoint_id>/delete/", delete, "delete"),
                route("<str:endpoint_id>/enable/", enable, "enable"),
                route("<str:endpoint_id>/ping/", ping, "ping")]


def changelist(model_admin, request):
    require(model_admin.has_view_or_change_permission(request))
    try:
        endpoints = webhook_registry().listing(
            organizers=organizers(request, rights.SEE_WEBHOOKS))
    except BookingError as error:
        messages.error(request, error.message)
        endpoints = []
    for endpoint in endpoints:
        if not endpoint.active:
            messages.warning(request, f"{endpoint.url} was disabled: "
                                      f"{endpoint.disabled_reason} Fix it, then enable it.")
    names = event_names({e.scope for e in endpoints if e.scope != ALL_EVENTS})
    rows = [(e, moment(e.failing_since), moment(e.disabled_at), names.get(e.scope))
            for e in endpoints]
    return render(request, TEMPLATES + "change_list.html", page(
        model_admin, request, "Webhook endpoints", rows=rows, all_events=ALL_EVENTS,
        can_add=model_admin.has_add_permission(request),
        can_change=model_admin.has_change_permission(request),
        can_delete=model_admin.has_delete_permission(request)))


def event_names(event_ids) -> dict[str, str]:
    """Event id -> name, for the endpoints' list ("a deleted event" once it is gone)."""
    service, names = get_booking_service(), {}
    for event_id in event_ids:
        try:
            names[event_id] = service.recent_event(event_id).name
        except EventNotFound:
            names[event_id] = "a deleted event"
    return names


def add(model_admin, request):
    require(model_admin.has_add_permission(request))
    managed = organizers(request, rights.MANAGE)
    choices = Organizer.objects.all() if managed is rights.ALL else \
        Organizer.objects.filter(slug__in=managed)
    named = [(o.slug, o.name or o.slug) for o in choices]
    # The organizer chosen (posted, or ?organizer=, else the first the user manages): the
    # events offered are that organizer's only, so the two always match.
    asked = request.POST.get("organizer") or request.GET.get("organizer")
    chosen = asked if asked in {slug for slug, _ in named} else (named[0][0] if named else "")
    events, _ = get_booking_service().events_page(
        limit=EVENTS_LISTED, organizers={chosen} if chosen else frozenset())
    form = EndpointForm(request.POST or None, events=events, organizers=named,
                        initial={"organizer": chosen})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            endpoint = webhook_registry().register(
                url=data["url"], events=data["events"], scope=data["event_id"] or ALL_EVENTS,
                owner=str(request.user.pk), description=data["description"],
                organizer=data["organizer"])
        except (InvalidBooking, EventNotFound) as refused:
            form.add_error("event_id" if isinstance(refused, EventNotFound)
                           else refused.field if refused.field in form.fields else None,
                           refused.message)
        else:  # shown on this page only: never in the messages cookie
            return render(request, "admin/booking_api/one_time_secret.html", page(
                model_admin, request, "Webhook endpoint added", secret=endpoint.secret,
                intro=f"The signing secret of {endpoint.url}:", back_url=url("changelist")))
    others = [(slug, name) for slug, name in named if slug != chosen] if len(named) > 1 else []
    return render(request, TEMPLATES + "add_form.html",
                  page(model_admin, request, "Add webhook endpoint", form=form,
                       chosen=dict(named).get(chosen, chosen), other_organizers=others))


def _own(model_admin, request, endpoint_id, action):
    """The endpoint, if ``action`` reaches it (else "not found", as a missing one)."""
    require(model_admin.has_view_permission(request))
    try:
        return webhook_registry().get(endpoint_id, organizers=organizers(request, action))
    except WebhookNotFound as missing:
        messages.warning(request, missing.message)
        return None


def delete(model_admin, request, endpoint_id):
    return _act(model_admin, request, endpoint_id, "remove",
                "Removed {url}; nothing more is sent to it.")


def enable(model_admin, request, endpoint_id):
    return _act(model_admin, request, endpoint_id, "enable",
                "Enabled {url}: it gets changes made from now on.")


def _act(model_admin, request, endpoint_id, action, done):
    """POST: the registry's ``action`` on an endpoint the user manages; then the list."""
    endpoint = _own(model_admin, request, endpoint_id, rights.MANAGE)
    if endpoint is not None and request.method == "POST":
        getattr(webhook_registry(), action)(endpoint.id, organizers={endpoint.organizer})
        messages.success(request, done.format(url=endpoint.url))
    return redirect(url("changelist"))


def deliveries(model_admin, request, endpoint_id):
    endpoint = _own(model_admin, request, endpoint_id, rights.SEE_WEBHOOKS)
    if endpoint is None:
        return redirect(url("changelist"))
    rows = [{**row, "created": moment(row["created_at"]),
             "attempts_log": [{**e, "when": moment(e["at"])} for e in row.get("log", [])]}
            for row in webhook_registry().deliveries(endpoint.id,
                                                     organizers={endpoint.organizer})]
    return render(request, TEMPLATES + "deliveries.html", page(
        model_admin, request, f"Deliveries to {endpoint.url}", endpoint=endpoint, rows=rows))


def ping(model_admin, request, endpoint_id):
    """POST: send a signed ``ping`` to an endpoint the user manages, now, and show what it
    answered (status, time, the start of its body). Nothing is stored or retried."""
    endpoint = _own(model_admin, request, endpoint_id, rights.MANAGE)
    if endpoint is None or request.method != "POST":
        return redirect(url("changelist"))
    answer = webhook_sender().ping(endpoint)
    return render(request, TEMPLATES + "ping.html", page(
        model_admin, request, f"Test ping to {endpoint.url}", endpoint=endpoint,
        answer=answer, back_url=url("changelist")))
