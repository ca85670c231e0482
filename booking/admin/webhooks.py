"""Webhook endpoints in the admin: organizers register, remove and re-enable their own (a
superuser sees all), see each one's delivery log, and are told when one was disabled.
Thin over ``WebhookRegistry``; data from DynamoDB, permissions from Django."""
from datetime import datetime
from datetime import timezone as dt_timezone
from functools import partial, update_wrapper

from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect, render
from django.urls import path, reverse

from booking.admin.views import page, require
from booking.api.models import WebhookEndpointEntry
from booking.errors import BookingError, EventNotFound, InvalidBooking, WebhookNotFound
from booking.webhooks.registry import ALL_EVENTS, EVENT_TYPES
from booking.wiring import webhook_registry

TEMPLATES = "admin/booking_api/webhook/"


def url(name, *args):
    return reverse(f"admin:booking_api_webhookendpointentry_{name}", args=args)


class EndpointForm(forms.Form):
    url = forms.CharField(label="URL", max_length=2000, help_text="https:// to a public address; port 443 or 1024-65535.",
                          widget=forms.URLInput(attrs={"size": 60}))
    events = forms.MultipleChoiceField(choices=[(t, t) for t in EVENT_TYPES],
                                       widget=forms.CheckboxSelectMultiple)
    event_id = forms.CharField(label="Event id", required=False, max_length=100,
                               help_text="Empty: every event.")
    description = forms.CharField(required=False, max_length=200)


def moment(epoch):
    return None if epoch is None else datetime.fromtimestamp(float(epoch), dt_timezone.utc)


@admin.register(WebhookEndpointEntry)
class WebhookAdmin(admin.ModelAdmin):
    def get_urls(self):
        def route(pattern, view, suffix):
            bound = update_wrapper(partial(view, self), view)
            return path(pattern, self.admin_site.admin_view(bound),
                        name=f"booking_api_webhookendpointentry_{suffix}")

        return [route("", changelist, "changelist"), route("add/", add, "add"),
                route("<str:endpoint_id>/deliveries/", deliveries, "deliveries"),
                route("<str:endpoint_id>/delete/", delete, "delete"),
                route("<str:endpoint_id>/enable/", enable, "enable")]


def owner(request):
    return None if request.user.is_superuser else str(request.user.pk)


def changelist(model_admin, request):
    require(model_admin.has_view_or_change_permission(request))
    try:
        endpoints = webhook_registry().listing(owner=owner(request))
    except BookingError as error:
        messages.error(request, error.message)
        endpoints = []
    for endpoint in endpoints:
        if not endpoint.active:
            messages.warning(request, f"{endpoint.url} was disabled: "
                                      f"{endpoint.disabled_reason} Fix it, then enable it.")
    rows = [(e, moment(e.failing_since), moment(e.disabled_at)) for e in endpoints]
    return render(request, TEMPLATES + "change_list.html", page(
        model_admin, request, "Webhook endpoints", rows=rows, all_events=ALL_EVENTS,
        can_add=model_admin.has_add_permission(request),
        can_change=model_admin.has_change_permission(request),
        can_delete=model_admin.has_delete_permission(request)))


def add(model_admin, request):
    require(model_admin.has_add_permission(request))
    form = EndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            endpoint = webhook_registry().register(
                url=data["url"], events=data["events"], scope=data["event_id"] or ALL_EVENTS,
                owner=str(request.user.pk), description=data["description"])
        except (InvalidBooking, EventNotFound) as refused:
            form.add_error("event_id" if isinstance(refused, EventNotFound)
                           else refused.field if refused.field in form.fields else None,
                           refused.message)
        else:
            messages.warning(request, f"Signing secret of {endpoint.url} (copy it now, it is "
                                      f"shown only once): {endpoint.secret}")
            return redirect(url("changelist"))
    return render(request, TEMPLATES + "add_form.html",
                  page(model_admin, request, "Add webhook endpoint", form=form))


def _own(model_admin, request, endpoint_id, allowed):
    require(allowed)
    try:
        return webhook_registry().get(endpoint_id, owner=owner(request))
    except WebhookNotFound as missing:
        messages.warning(request, missing.message)
        return None


def delete(model_admin, request, endpoint_id):
    return _act(model_admin, request, endpoint_id, model_admin.has_delete_permission(request),
                "remove", "Removed {url}; nothing more is sent to it.")


def enable(model_admin, request, endpoint_id):
    return _act(model_admin, request, endpoint_id, model_admin.has_change_permission(request),
                "enable", "Enabled {url}: it gets changes made from now on.")


def _act(model_admin, request, endpoint_id, allowed, action, done):
    """POST: the registry's ``action`` on the user's own endpoint; then the list."""
    endpoint = _own(model_admin, request, endpoint_id, allowed)
    if endpoint is not None and request.method == "POST":
        getattr(webhook_registry(), action)(endpoint.id, owner=owner(request))
        messages.success(request, done.format(url=endpoint.url))
    return redirect(url("changelist"))


def deliveries(model_admin, request, endpoint_id):
    endpoint = _own(model_admin, request, endpoint_id,
                    model_admin.has_view_or_change_permission(request))
    if endpoint is None:
        return redirect(url("changelist"))
    rows = [{**row, "created": moment(row["created_at"]),
             "attempts_log": [{**e, "when": moment(e["at"])} for e in row.get("log", [])]}
            for row in webhook_registry().deliveries(endpoint.id, owner=owner(request))]
    return render(request, TEMPLATES + "deliveries.html", page(
        model_admin, request, f"Deliveries to {endpoint.url}", endpoint=endpoint, rows=rows))
