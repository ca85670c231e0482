"""The OpenAPI schema's additions drf-spectacular cannot infer: the problem+json body and
the links between operations (what a 201 answers leads to), which schemathesis follows."""
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import serializers

from booking.api.problems import PROBLEM_JSON


class Problem(serializers.Serializer):
    """RFC 9457 problem details."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()


def problems(*statuses: int) -> dict:
    """``responses=`` entries: each status answers a problem+json body (and 401: any
    request may carry a bad token)."""
    return {(status, PROBLEM_JSON): Problem for status in sorted({401, *statuses})}


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "booking.api.auth.BearerToken"
    name = "organizerToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "An organizer's API token (created in the admin)."}


# (operation, status) -> {link name: (target operation, {parameter: runtime expression})}
LINKS = {
    ("events_list", "200"): {
        "FirstEvent": ("events_retrieve", {"event_id": "$response.body#/results/0/id"})},
    ("events_retrieve", "200"): {
        "BookThisEvent": ("registrations_create", {"event_id": "$response.body#/id"})},
    ("registrations_create", "201"): {
        "GetRegistration": ("registrations_retrieve", {"secret": "$response.body#/secret"}),
        "CancelRegistration": ("registrations_destroy", {"secret": "$response.body#/secret"}),
        "GetEvent": ("events_retrieve", {"event_id": "$response.body#/event_id"})},
}


# Request bodies refuse fields they do not declare (StrictSerializer): say so.
CLOSED_BODIES = ("RegistrationInput", "BookingInput", "EventEdit", "PatchedEventEdit", "EventCreate", "WebhookInput")


# Every operation that takes a body may answer this (booking/api/problems.py).
BODY_TOO_LARGE = {"description": "The body is over the size the API accepts.",
                  "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}}


def add_links(result, generator, request, public):
    """drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]):
    the links, closed request bodies, and 413 wherever a body is read."""
    components = result.get("components", {}).get("schemas", {})
    for name in CLOSED_BODIES:
        if name in components:
            components[name]["additionalProperties"] = False
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if "requestBody" in operation and "Problem" in components:
                operation.setdefault("responses", {}).setdefault("413", BODY_TOO_LARGE)
            for status, response in operation.get("responses", {}).items():
                links = LINKS.get((operation.get("operationId"), status), {})
                response.update(links={name: {"operationId": target, "parameters": params}
                                       for name, (target, params) in links.items()}
                                if links else {})
                if not response["links"]:
                    del response["links"]
    return result


class OutcomePending(serializers.Serializer):
    """A keyed request's outcome is not known yet (its deadline passed, its answer was
    lost, or an earlier asking of the same key may still be in flight): send it again
    with the same key after ``Retry-After`` seconds. A booking waiting in line for its
    decision (``streams``) also carries the registration's fields (``status`` "pending")
    and a ``Location`` header. A repeat of a pending or in-flight key is answered from
    reads: it writes nothing."""

    status = serializers.CharField()
    detail = serializers.CharField()


PENDING = {202: OutcomePending}
