"""Plain-text tables and stderr progress bars shared by the management commands."""

from tqdm import tqdm


def table(headers, rows) -> str:
    """A plain left-aligned text table."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()
             for row in (headers, *rows)]
    return "\n".join(lines)


def progress(iterable, stream, *, total=None, unit="event"):
    """A progress bar on ``stream`` (stderr) when it is a terminal; the items unchanged."""
    target = getattr(stream, "_out", stream)
    return tqdm(iterable, total=total, file=target, unit=unit, leave=False,
                disable=not _isatty(target))


def _isatty(stream) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())
