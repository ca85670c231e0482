"""API tokens in the admin: each organizer creates and revokes their own (a superuser sees
all); a new token is shown once, in the message after saving, never again."""
from django.contrib import admin, messages
from django.utils import timezone

from booking.api.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "scope", "prefix", "created_at", "revoked_at")
    fields = ("name", "scope")
    actions = ["revoke"]

    def get_queryset(self, request):
        tokens = super().get_queryset(request)
        return tokens if request.user.is_superuser else tokens.filter(user=request.user)

    def has_change_permission(self, request, obj=None):
        return False  # a token is created or revoked, never edited

    def save_model(self, request, obj, form, change):
        obj.user = request.user
        token = obj.issue()
        super().save_model(request, obj, form, change)
        messages.warning(request, f"Your new API token (copy it now, it is shown only once): "
                                  f"{token}")

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        revoked = queryset.filter(revoked_at=None).update(revoked_at=timezone.now())
        messages.success(request, f"Revoked {revoked} token(s).")
