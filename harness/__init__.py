"""The project's tools beside the product, each still a manage.py command:

- ``torture/``: the Jepsen-style torture run (``manage.py torture``, docs/reliability.md);
- ``bench/``: the benchmark (``manage.py bench_booking``, docs/benchmarks.md);
- ``controls.py``, ``unguarded.py``: the controls tests and harnesses build, which
  break one guard each on purpose so that the checks are shown able to fail.

The booking app never imports this package.
"""
