from django.apps import AppConfig


class HarnessConfig(AppConfig):
    """The project's tools beside the product: the torture run, the benchmark, controls."""

    name = "harness"
    verbose_name = "Test and benchmark harnesses"
