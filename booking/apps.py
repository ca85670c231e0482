from django.apps import AppConfig


class BookingConfig(AppConfig):
    name = "booking"
    verbose_name = "Event booking"

    def ready(self):
        from . import admin_login, checks  # noqa: F401  (register checks and signal receivers)
