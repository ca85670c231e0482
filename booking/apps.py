from django.apps import AppConfig


class BookingConfig(AppConfig):
    name = "booking"
    verbose_name = "Event booking"
