"""API tokens in the admin: an organizer's admins create and revoke its tokens (a
superuser sees all). A token is its creator's rights on its organizer, at each request
(``booking/organizers/rights.py``); a new token is shown once, on the page that created
it, never in a cookie."""
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from booking import times
from booking.api.models import ApiToken
from booking.organizers import rights
from booking.organizers.admin import ManagedByOrganizer


@admin.register(ApiToken)
class ApiTokenAdmin(ManagedByOrganizer):
    list_display = ("name", "organizer", "user", "scope", "prefix", "created", "revoked")
    fields = ("organizer", "name", "scope")
    actions = ["revoke"]

    @admin.display(description="Created", ordering="created_at")
    def created(self, token):
        return times.instant(token.created_at, None) if token.created_at else "—"

    @admin.display(description="Revoked", ordering="revoked_at")
    def revoked(self, token):
        """In the site's zone, named, as every admin time (docs/admin.md)."""
        return times.instant(token.revoked_at, None) if token.revoked_at else "—"

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_view_permission(self, request, obj=None):
        managed = self.managed(request)
        return managed is rights.ALL or bool(managed) and (
            obj is None or obj.organizer is not None and obj.organizer.slug in managed)

    def has_add_permission(self, request):
        return self.has_view_permission(request)

    def has_delete_permission(self, request, obj=None):
        return False  # revoked (kept for the record), never deleted

    def has_change_permission(self, request, obj=None):
        return False  # a token is created or revoked, never edited

    def save_model(self, request, obj, form, change):
        if not rights.may_mint_token(request.user, obj.organizer.slug):
            raise PermissionDenied  # the form offers only the user's own organizers
        obj.user = request.user
        request.new_api_token = obj.issue()
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj, post_url_continue=None):
        """The new token on this page only: never in the messages cookie."""
        return render(request, "admin/booking_api/one_time_secret.html", {
            **self.admin_site.each_context(request), "title": "API token added",
            "secret": request.new_api_token,
            "intro": f"Your new API token “{obj.name}” for {obj.organizer} ({obj.scope}):",
            "back_url": reverse("admin:booking_api_apitoken_changelist")})

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        revoked = queryset.filter(revoked_at=None).update(revoked_at=timezone.now())
        messages.success(request, f"Revoked {revoked} token(s).")
