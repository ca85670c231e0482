"""gunicorn's logger with secrets out of its access log: the request line, the path,
the query and the Referer go through ``config.log_redaction.redact`` (``logger_class`` in
config/gunicorn.conf.py)."""
from gunicorn.glogging import Logger

from config.log_redaction import redact

REDACTED_ATOMS = ("r", "U", "q", "f", "{referer}i")


class RedactingLogger(Logger):
    def atoms(self, resp, req, environ, request_time):
        found = super().atoms(resp, req, environ, request_time)
        for atom in REDACTED_ATOMS:
            if isinstance(found.get(atom), str):
                found[atom] = redact(found[atom])
        return found
