"""A small pool of background threads per process, for work owed right after a request.

The request answers after its own write; a small follow-up (a waiting-list offer, a
resend someone asked for) runs here at once, and a worker pass is the safety net for
whatever a crash leaves undone. The e-mails a request owes are not sent here: the booking
worker sends them. ``flush`` waits for what is running now (tests, shutdown).
"""
import threading
from concurrent.futures import ThreadPoolExecutor, wait


class Background:
    """A lazily started thread pool that remembers its unfinished work."""

    def __init__(self, name: str, *, max_workers: int = 2):
        self.name = name
        self.max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        self._pending: set = set()
        self._lock = threading.Lock()

    def submit(self, function, *args) -> None:
        """Run ``function(*args)`` on the pool, off the calling thread."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.max_workers,
                                                thread_name_prefix=self.name)
            future = self._pool.submit(function, *args)
            self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    def flush(self, timeout: float = 30.0) -> None:
        """Wait for the work submitted so far."""
        with self._lock:
            futures = list(self._pending)
        wait(futures, timeout=timeout)
