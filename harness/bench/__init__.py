"""The booking benchmark behind `manage.py bench_booking` (see docs/benchmarks.md)."""
