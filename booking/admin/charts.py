"""Bookings over time as an SVG drawn on the server (no script, no CDN), with the same
numbers as a table: seats booked per day (or per week for longer sales) by ticket type,
and the running total. Accessible: the SVG has a title and a description, the table is
the chart's text equivalent.

The chart's time axis runs from just before the first booking to now (or the last booking),
in the event's own zone, named under the axis; each line is a step: flat between bookings,
rising at the moment of each (never a slope that suggests bookings where there were none).
"""
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from booking import times

WIDTH, HEIGHT = 640, 250
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 48
# Colours told apart also by people with the common colour-vision deficiencies (Okabe-Ito).
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
MAX_BUCKETS = 60
LEAD = 0.05  # of the bookings' span, the flat start before the first booking
WINDOW_MIN = timedelta(minutes=2)  # a shorter span is centred in this much time


@dataclass(frozen=True)
class Chart:
    svg: SafeString
    buckets: list[str]  # each row's label (a day, or a week's first day)
    types: list[str]  # ticket types, in the legend's order
    rows: list[tuple[str, list[int], int]]  # (label, seats per type, running total)
    colours: dict[str, str]
    zone: str = ""  # the zone the axis and the table are in: 'CET (Europe/Berlin)'
    start: str = ""  # the axis's first and last moments, as labelled under it
    end: str = ""


def bookings_chart(event, bookings: list[tuple[datetime, dict[str, int]]], *,
                   now: datetime | None = None) -> Chart | None:
    """The chart of ``bookings`` ((time, tickets), oldest first) up to ``now`` (default:
    the last booking); None without any."""
    if not bookings:
        return None
    zone = event.time_zone if times.showable(bookings[-1][0], event.time_zone) else "UTC"
    end = max(bookings[-1][0], now or bookings[-1][0])
    days = [times.local(at, zone).date() for at, _ in bookings]
    labels, per = _buckets(days, times.local(end, zone).date(), bookings)
    types = sorted({name for _, tickets in bookings for name in tickets})
    rows, total = [], 0
    for label, seats in zip(labels, per):
        counts = [seats.get(name, 0) for name in types]
        total += sum(counts)
        rows.append((label, counts, total))
    colours = {name: COLOURS[i % len(COLOURS)] for i, name in enumerate(types)}
    span = end - bookings[0][0]
    if span < WINDOW_MIN:  # seconds apart: centred in two minutes, the line stops at now
        start, axis_end = bookings[0][0] - (WINDOW_MIN - span) / 2, end + (WINDOW_MIN - span) / 2
    else:
        start, axis_end = bookings[0][0] - span * LEAD, end
    seconds = axis_end - start < timedelta(minutes=10)
    axis = (_moment(start, zone, seconds), _moment(axis_end, zone, seconds),
            times.zone_label(end, zone))
    return Chart(svg=_svg(event, types, bookings, (start, end, axis_end), axis, colours),
                 buckets=labels, types=types, rows=rows, colours=colours, zone=axis[2],
                 start=axis[0], end=axis[1])


def _buckets(days: list[date], last: date, bookings) -> tuple[list[str], list[dict]]:
    """The table's rows: every day (or week) from the first booking's to ``last``'s."""
    first = days[0]
    step = 1 if (last - first).days < MAX_BUCKETS else 7
    count = (last - first).days // step + 1
    per: list[dict[str, int]] = [{} for _ in range(count)]
    for day, (_, tickets) in zip(days, bookings):
        bucket = per[(day - first).days // step]
        for name, quantity in tickets.items():
            bucket[name] = bucket.get(name, 0) + quantity
    labels = [f"{(first + timedelta(days=i * step)):%d %b}" + (" (week)" if step == 7 else "")
              for i in range(count)]
    return labels, per


def _moment(value: datetime, zone: str, seconds: bool = False) -> str:
    """'1 Dec 2026, 19:42' (with ':05' for a chart of a few minutes) in ``zone`` (the zone
    is named once, under the axis)."""
    moment = times.local(value, zone)
    return f"{moment.day} {moment:%b %Y, %H:%M}" + (f":{moment:%S}" if seconds else "")


def _svg(event, types, bookings, period, axis, colours) -> SafeString:
    """One step line per ticket type: its seats booked so far, rising at each booking, drawn
    from the axis's start to ``end`` (now) of ``period`` (start, end, the axis's end)."""
    start, end, axis_end = period
    span_x, span_y = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    seconds = max((axis_end - start).total_seconds(), 1.0)
    totals = {name: sum(t.get(name, 0) for _, t in bookings) for name in types}
    top = max(1, max(totals.values()))

    def x(at):
        return LEFT + span_x * (at - start).total_seconds() / seconds

    def y(value):
        return TOP + span_y - span_y * value / top

    def points(name):
        so_far, drawn = 0, [(x(start), y(0))]
        for at, tickets in bookings:
            if tickets.get(name):
                drawn.append((x(at), y(so_far)))
                so_far += tickets[name]
                drawn.append((x(at), y(so_far)))
        drawn.append((x(end), y(so_far)))
        kept = [p for i, p in enumerate(drawn)  # points on one pixel column: its first, last
                if i in (0, len(drawn) - 1) or round(p[0]) != round(drawn[i - 1][0])
                or round(p[0]) != round(drawn[i + 1][0])]
        return " ".join(f"{px:.1f},{py:.1f}" for px, py in kept)

    lines = format_html_join("", '<polyline fill="none" stroke="{}" stroke-width="2.5" '
                                 'stroke-linejoin="round" points="{}">'
                                 '<title>{}: {} seat{}</title></polyline>',
                             ((colours[name], points(name), event.label(name), totals[name],
                               "" if totals[name] == 1 else "s")
                              for name in types))
    first, last, zone = axis
    axes = format_html(
        '<line x1="{l}" y1="{b}" x2="{r}" y2="{b}" stroke="#767676"/>'
        '<line x1="{l}" y1="{t}" x2="{l}" y2="{b}" stroke="#767676"/>'
        '<text x="{tx}" y="{ty}" font-size="12" text-anchor="end" fill="currentColor">{top}</text>'
        '<text x="{tx}" y="{b}" font-size="12" text-anchor="end" fill="currentColor">0</text>'
        '<text x="{l}" y="{lb}" font-size="12" fill="currentColor">{first}</text>'
        '<text x="{r}" y="{lb}" font-size="12" text-anchor="end" fill="currentColor">{last}</text>'
        '<text x="{mid}" y="{zb}" font-size="12" text-anchor="middle" fill="currentColor">'
        'Time in {zone}</text>',
        l=LEFT, r=WIDTH - RIGHT, t=TOP, b=TOP + span_y, tx=LEFT - 6, ty=TOP + 10, top=top,
        lb=TOP + span_y + 16, zb=HEIGHT - 6, mid=LEFT + span_x / 2, first=first, last=last,
        zone=zone)
    summary = ", ".join(f"{event.label(name)} {totals[name]}" for name in types)
    title_id = f"chart-{event.id}"
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        'role="img" aria-labelledby="{id}-title {id}-desc">'
        '<title id="{id}-title">Seats booked over time: {name}</title>'
        '<desc id="{id}-desc">Seats booked so far by ticket type, from {first} to {last} '
        '({zone}): {summary}. The table below gives the numbers.</desc>{axes}{lines}</svg>',
        w=WIDTH, h=HEIGHT, id=title_id, name=event.name, first=first, last=last, zone=zone,
        summary=summary, axes=axes, lines=mark_safe(lines))
