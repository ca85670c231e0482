"""What the entry points (``web``, ``api``, ``admin``, ``management``) share, below them:
they never import one another (``scripts/check_layout.py``).

``limits`` (the abuse limits and their messages), ``forms`` (the signup form and its
one-time token, the admin's attendee form's base, the pages' other forms),
``error_pages`` (a domain error as its page and status), ``problem_json`` (the bare
``application/problem+json`` answers a filter gives before the API's views run) and
``exports`` (the registrations as CSV, for the admin and the API).
"""
