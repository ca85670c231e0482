from django.apps import AppConfig


class BookingConfig(AppConfig):
    name = "booking"
    verbose_name = "Event booking"

    def ready(self):
        from . import checks  # noqa: F401  (registers the system checks)
