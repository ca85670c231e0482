"""Organizers and their teams (Django's own SQL data, like users): who owns which events,
and who may do what with them. ``rights.py`` is the one place every entry point asks."""
