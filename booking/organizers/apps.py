from django.apps import AppConfig


class OrganizersConfig(AppConfig):
    """Organizers, teams and memberships: SQL rows beside users (docs/admin.md#organizers)."""

    name = "booking.organizers"
    label = "booking_organizers"
    verbose_name = "Organizers"
    default_auto_field = "django.db.models.BigAutoField"
