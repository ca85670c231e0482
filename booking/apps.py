from django.apps import AppConfig


class BookingConfig(AppConfig):
    name = "booking"
    verbose_name = "Event booking"

    def ready(self):
        from booking import checks  # noqa: F401  (register the system checks)
        from booking.admin import login  # noqa: F401  (its signal receivers)
