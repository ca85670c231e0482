from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The JSON API: its one SQL model is the organizers' API tokens (Django's own
    database, like users and sessions)."""

    name = "booking.api"
    label = "booking_api"
    verbose_name = "API"
    default_auto_field = "django.db.models.BigAutoField"
