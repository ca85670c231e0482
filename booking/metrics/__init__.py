"""Operational metrics and structured logs (docs/deployment.md, "Metrics and logs")."""
