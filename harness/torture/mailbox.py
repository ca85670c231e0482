"""A test mail backend for the torture run: one line per e-mail, per process, in a folder.

Each line names the outbox message the e-mail was sent for (its ``X-Booking-Message``
header), so the checker can count every e-mail of every booking and cancellation.
"""
import json
import os
import threading

from django.core.mail.backends.base import BaseEmailBackend

MAIL_DIR_ENV = "TORTURE_MAIL_DIR"
COUNTING_BACKEND = "harness.torture.mailbox.CountingBackend"  # the run's senders are given it
_lock = threading.Lock()


class CountingBackend(BaseEmailBackend):
    def send_messages(self, email_messages):
        path = os.path.join(os.environ[MAIL_DIR_ENV], f"{os.getpid()}.jsonl")
        lines = [json.dumps({"message_id": m.extra_headers.get("X-Booking-Message"),
                             "to": m.to}) for m in email_messages]
        with _lock, open(path, "a", encoding="utf-8") as sent:
            sent.write("".join(line + "\n" for line in lines))
        return len(lines)


def sent_counts(directory: str) -> dict[str, int]:
    """Message id -> how many e-mails were sent for it, over every process's file."""
    counts: dict[str, int] = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), encoding="utf-8") as sent:
            for line in sent:
                message_id = json.loads(line)["message_id"]
                counts[message_id] = counts.get(message_id, 0) + 1
    return counts
