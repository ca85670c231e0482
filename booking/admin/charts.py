"""Bookings over time as an SVG drawn on the server (no script, no CDN), with the same
numbers as a table: seats booked per day (or per week for longer sales) by ticket type,
and the running total. Accessible: the SVG has a title and a description, the table is
the chart's text equivalent."""
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from booking import times

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 32
# Colours told apart also by people with the common colour-vision deficiencies (Okabe-Ito).
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
MAX_BUCKETS = 60


@dataclass(frozen=True)
class Chart:
    svg: SafeString
    buckets: list[str]  # each row's label (a day, or a week's first day)
    types: list[str]  # ticket types, in the legend's order
    rows: list[tuple[str, list[int], int]]  # (label, seats per type, running total)
    colours: dict[str, str]


def bookings_chart(event, bookings: list[tuple[datetime, dict[str, int]]], *,
                   today: date | None = None) -> Chart | None:
    """The chart of ``bookings`` ((time, tickets), oldest first); None without any."""
    if not bookings:
        return None
    zone = event.time_zone
    days = [times.local(at, zone).date() for at, _ in bookings]
    last = max(days[-1], today or days[-1])
    step = 1 if (last - days[0]).days < MAX_BUCKETS else 7
    first = days[0] - timedelta(days=step)  # the lines start from none booked
    count = (last - first).days // step + 1
    types = sorted({name for _, tickets in bookings for name in tickets})
    per = [[0] * len(types) for _ in range(count)]
    for day, (_, tickets) in zip(days, bookings):
        for name, quantity in tickets.items():
            per[(day - first).days // step][types.index(name)] += quantity
    labels = [f"{(first + timedelta(days=i * step)):%d %b}" + (" (week)" if step == 7 else "")
              for i in range(count)]
    rows, total = [], 0
    for label, seats in zip(labels, per):
        total += sum(seats)
        rows.append((label, seats, total))
    colours = {name: COLOURS[i % len(COLOURS)] for i, name in enumerate(types)}
    return Chart(svg=_svg(event, types, per, labels, colours), buckets=labels, types=types,
                 rows=rows, colours=colours)


def _svg(event, types, per, labels, colours) -> SafeString:
    """One line per ticket type: its seats booked so far, bucket by bucket."""
    running = [[sum(bucket[t] for bucket in per[:i + 1]) for i in range(len(per))]
               for t in range(len(types))]
    top = max(1, max(max(line) for line in running))
    span_x, span_y = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i):
        return LEFT + (span_x * i / (len(per) - 1) if len(per) > 1 else span_x / 2)

    def y(value):
        return TOP + span_y - span_y * value / top

    lines = format_html_join("", '<polyline fill="none" stroke="{}" stroke-width="2.5" '
                                 'stroke-linejoin="round" points="{}">'
                                 '<title>{}: {} seats</title></polyline>',
                             ((colours[name], " ".join(f"{x(i):.1f},{y(v):.1f}"
                                                       for i, v in enumerate(line)),
                               event.label(name), line[-1])
                              for name, line in zip(types, running)))
    axes = format_html(
        '<line x1="{l}" y1="{b}" x2="{r}" y2="{b}" stroke="#767676"/>'
        '<line x1="{l}" y1="{t}" x2="{l}" y2="{b}" stroke="#767676"/>'
        '<text x="{tx}" y="{ty}" font-size="12" text-anchor="end" fill="currentColor">{top}</text>'
        '<text x="{tx}" y="{b}" font-size="12" text-anchor="end" fill="currentColor">0</text>'
        '<text x="{l}" y="{lb}" font-size="12" fill="currentColor">{first}</text>'
        '<text x="{r}" y="{lb}" font-size="12" text-anchor="end" fill="currentColor">{last}</text>',
        l=LEFT, r=WIDTH - RIGHT, t=TOP, b=TOP + span_y, tx=LEFT - 6, ty=TOP + 10, top=top,
        lb=HEIGHT - 8, first=labels[0], last=labels[-1])
    summary = ", ".join(f"{event.label(name)} {line[-1]}" for name, line in zip(types, running))
    title_id = f"chart-{event.id}"
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        'role="img" aria-labelledby="{id}-title {id}-desc">'
        '<title id="{id}-title">Seats booked over time: {name}</title>'
        '<desc id="{id}-desc">Seats booked so far by ticket type, from {first} to {last}: '
        '{summary}. The table below gives the numbers.</desc>{axes}{lines}</svg>',
        w=WIDTH, h=HEIGHT, id=title_id, name=event.name, first=labels[0], last=labels[-1],
        summary=summary, axes=axes, lines=mark_safe(lines))
