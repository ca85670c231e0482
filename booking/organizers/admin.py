"""Organizers and teams in the admin: superusers manage organizers; an organizer's admins
manage its teams (``rights.MANAGE``)."""
from django.contrib import admin
from django.contrib.auth.models import User
from django.db.models import Q

from booking import times
from booking.organizers import rights
from booking.organizers.models import LimitHit, Organizer, Team


@admin.register(Organizer)
class OrganizerAdmin(admin.ModelAdmin):
    list_display = ("slug", "name")
    search_fields = ("slug", "name")

    def get_queryset(self, request):
        found = super().get_queryset(request)
        managed = rights.for_user(request.user).organizers(rights.VIEW)
        return found if managed is rights.ALL else found.filter(slug__in=managed)

    def has_module_permission(self, request):
        return rights.may_use(request.user)

    def has_view_permission(self, request, obj=None):
        return rights.may_use(request.user)

    def has_add_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser


class ManagedByOrganizer(admin.ModelAdmin):
    """Rows of a model with an ``organizer``: listed, and given an organizer, only for the
    organizers the user manages (``rights.MANAGE``; a superuser: all)."""

    def managed(self, request):
        """Slugs of the organizers whose rows the user manages (``rights.ALL``: all)."""
        return rights.for_user(request.user).organizers(rights.MANAGE)

    def get_queryset(self, request):
        found = super().get_queryset(request).select_related("organizer")
        managed = self.managed(request)
        return found if managed is rights.ALL else found.filter(organizer__slug__in=managed)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "organizer":
            managed = self.managed(request)
            kwargs["queryset"] = (Organizer.objects.all() if managed is rights.ALL
                                  else Organizer.objects.filter(slug__in=managed))
            kwargs["required"] = True
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Team)
class TeamAdmin(ManagedByOrganizer):
    list_display = ("name", "organizer", "role", "all_events")
    list_filter = ("role",)
    filter_horizontal = ("members",)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        """An organizer's admin picks members among the people of their own organizers'
        teams (a superuser adds anyone): no other organizer's staff is listed."""
        if db_field.name == "members":
            managed = self.managed(request)
            if managed is not rights.ALL:
                kwargs["queryset"] = User.objects.filter(
                    organizer_teams__organizer__slug__in=managed).distinct()
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def _may(self, request, obj=None):
        managed = self.managed(request)
        if managed is not rights.ALL and not managed:
            return False
        return obj is None or managed is rights.ALL or obj.organizer.slug in managed

    def has_module_permission(self, request):
        return self._may(request)

    def has_view_permission(self, request, obj=None):
        return self._may(request, obj)

    def has_add_permission(self, request):
        return self._may(request)

    def has_change_permission(self, request, obj=None):
        return self._may(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._may(request, obj)


# What each abuse limit counts, as the "Limit hits" page names it (booking/entry/limits.py).
LIMIT_WORDS = {
    "signup": "Signup forms from one network",
    "signup_email": "Signups for one e-mail address from one network",
    "cancel": "Cancellations and waiting-list links from one network",
    "resend": "\"Resend my confirmation\" from one network",
    "resend_mail": "Confirmations resent for one booking",
    "admin_login": "Failed admin logins",
    "api_token": "API requests of one token",
}


@admin.register(LimitHit)
class LimitHitAdmin(admin.ModelAdmin):
    """Recent refusals by the abuse limits (the last days), read only: an organizer's staff
    see those on the events they have a role on; limits about no event (admin logins, API
    tokens) only superusers."""

    list_display = ("last", "what", "event_name", "network", "refused")
    list_filter = ("limit",)
    search_fields = ("event_name",)
    list_display_links = None

    @admin.display(description="Last refused", ordering="last_at")
    def last(self, hit):
        """In the site's zone, named, as every admin time (docs/admin.md)."""
        return times.instant(hit.last_at, None) if hit.last_at else "—"

    @admin.display(description="Limit", ordering="limit")
    def what(self, hit):
        return LIMIT_WORDS.get(hit.limit, hit.limit)

    def get_queryset(self, request):
        found = super().get_queryset(request)
        scope = rights.for_user(request.user).scope(rights.VIEW)
        if scope.is_everything:
            return found
        return found.filter(Q(organizer__in=scope.organizers) | Q(event_id__in=scope.event_ids)
                            ).exclude(organizer="")

    def has_module_permission(self, request):
        return rights.may_use(request.user)

    def has_view_permission(self, request, obj=None):
        return rights.may_use(request.user)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
