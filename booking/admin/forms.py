"""Admin forms for events. They check shapes; the service decides what is valid.

Times are typed as ISO 8601 text (``2026-12-12 19:30``) in the event's own time zone, so
the input never depends on the browser's locale; the service reads them in that zone.
"""
from django import forms
from django.utils.timezone import get_default_timezone_name

from booking import times, validation
from booking.errors import BookingError, InvalidBooking
from booking.strategies import GUARDED, STRATEGIES
from booking.validation import (DESCRIPTION_MAX_LENGTH, EVENT_NAME_MAX_LENGTH,
                                MAX_PER_ORDER_LIMIT, VENUE_MAX_LENGTH)
from booking.wiring import web_settings

# Plain-language choices for organizers; the technical description stays in the docs.
STRATEGY_LABELS = {
    "lock_table": "Standard: up to {max:,} seats (recommended)",
    "aggregate": "Small event: up to {max:,} seats",
    "slots": "Rush sale: up to {max:,} seats",
    "streams": "Queue: every request accepted at once, seats decided in arrival order",
    "shards": "Ticket drop: thousands of bookings per second, up to {max:,} seats",
}
TIME_HELP = "ISO 8601, e.g. 2026-12-12 19:30, in the event's time zone."


def _time_input():
    return forms.TextInput(attrs={"placeholder": "2026-12-12 19:30", "size": 16,
                                  "inputmode": "numeric", "autocomplete": "off"})


class EventForm(forms.Form):
    name = forms.CharField(max_length=EVENT_NAME_MAX_LENGTH)
    time_zone = forms.CharField(
        label="Time zone", max_length=64, required=False,
        widget=forms.TextInput(attrs={"size": 24, "list": "time-zones", "autocomplete": "off"}),
        help_text="IANA name, e.g. Europe/Berlin. Times below are in this zone.")
    starts_at = forms.CharField(label="Start", required=False, widget=_time_input(),
                                help_text="Optional. " + TIME_HELP)
    ends_at = forms.CharField(label="End", required=False, widget=_time_input(),
                              help_text="Optional; after the start. " + TIME_HELP)
    venue = forms.CharField(max_length=VENUE_MAX_LENGTH, required=False,
                            widget=forms.TextInput(attrs={"size": 40}))
    description = forms.CharField(
        max_length=DESCRIPTION_MAX_LENGTH, required=False,
        widget=forms.Textarea(attrs={"rows": 5, "cols": 60}),
        help_text=f"Optional, shown on the event page; at most {DESCRIPTION_MAX_LENGTH:,} characters.")
    capacity = forms.IntegerField(min_value=0, help_text="Seats. Never below the confirmed count.")
    orders_fields: tuple = ()  # the fields the template shows in the orders section

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["time_zone"].initial = get_default_timezone_name()

    def show_error(self, error: BookingError) -> None:
        """Put a domain error next to its field, or above the form."""
        field = error.field if error.field in self.fields and error.field != "version" else None
        self.add_error(field, error.message)

    def disable(self) -> None:
        for field in self.fields.values():
            field.disabled = True


def strategy_label(name: str) -> str:
    label = STRATEGY_LABELS.get(name)
    return label.format(max=STRATEGIES[name].max_capacity) if label else name


class OrganizerField(forms.ChoiceField):
    """One of the organizers offered; with only one offered, that one (a hidden field)."""

    def clean(self, value):
        if value in self.empty_values and len(self.choices) == 1:
            value = self.choices[0][0]
        return super().clean(value)


def organizer_field(organizers, help_text: str) -> OrganizerField:
    organizers = list(organizers)
    field = OrganizerField(choices=organizers, help_text=help_text)
    if len(organizers) == 1:
        field.initial, field.widget = organizers[0][0], forms.HiddenInput()
    return field


class EventAddForm(EventForm):
    strategy = forms.ChoiceField(
        label="Size",
        help_text="Standard suits almost every event; Small event is the cheapest for a few "
                  "hundred seats; Rush sale spreads many simultaneous bookings over one "
                  "record per seat; Queue accepts every request at once and gives the seats "
                  "to the first arrivals a moment later (for sales far beyond the seats); "
                  "Ticket drop answers thousands of people a second at once, for launches. "
                  "Sets the most seats the event can ever have; cannot be changed later.")

    expected_rate = forms.IntegerField(
        label="Expected arrivals a second", min_value=1, max_value=validation.MAX_EXPECTED_RATE,
        required=False,
        help_text="Optional, for a Ticket drop: the people a second you expect when sales "
                  "open. The event gets one more booking record per 400 beyond 3,200, so it "
                  "keeps up with them; cannot be changed later.")

    # Orders (docs/orders.md), in a section of their own: left empty, the event is a plain
    # one (one type, one seat per person), exactly as before.
    quotas = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 40,
                                                     "placeholder": "workshop-a = 30"}),
        help_text="Optional. One quota per line, NAME = seats: a share of the capacity that "
                  "some ticket types also count against (e.g. a workshop room). Names: "
                  "lowercase letters, digits, - and _.")
    ticket_types = forms.CharField(
        label="Ticket types", required=False,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 40,
                                     "placeholder": "conference\nworkshop-a: workshop-a"}),
        help_text="Optional. One type per line: NAME, or NAME: QUOTA, QUOTA for a type that "
                  "also counts against those quotas. Every type counts against the capacity. "
                  "Left empty: one type, admission.")
    max_per_order = forms.IntegerField(
        label="Seats per order", min_value=1, max_value=MAX_PER_ORDER_LIMIT, initial=1,
        required=False, help_text="The most seats one person may book in one order.")

    field_order = ["name", "time_zone", "starts_at", "ends_at", "venue", "description",
                   "capacity", "strategy", "expected_rate", "quotas", "ticket_types",
                   "max_per_order"]
    orders_fields = ("quotas", "ticket_types", "max_per_order")

    def __init__(self, *args, organizers=(), **kwargs):
        """``organizers``: (slug, name) of those the user may create events in."""
        super().__init__(*args, **kwargs)
        self.fields["organizer"] = organizer_field(organizers, "The organizer that owns "
                                                               "the event.")
        self.order_fields(["organizer", *self.field_order])
        self.fields["strategy"].choices = [(name, strategy_label(name)) for name in GUARDED]
        default = web_settings().default_strategy
        self.fields["strategy"].initial = default if default in GUARDED else GUARDED[0]

    def clean_quotas(self):
        return self._lines("quotas", validation.parse_quota, kind="Quota")

    def clean_ticket_types(self):
        return self._lines("ticket_types", validation.parse_ticket_type, kind="Ticket type")

    def _lines(self, field, parse, *, kind):
        """A text of one entry per line as a dict (None when empty); the service checks it."""
        lines = [line.strip() for line in self.cleaned_data[field].splitlines() if line.strip()]
        try:
            return validation.unique_names([parse(line) for line in lines], field=field,
                                           kind=kind) or None
        except InvalidBooking as error:
            raise forms.ValidationError(error.message) from None

    def orders_open(self) -> bool:
        """The orders section starts open once anything in it was typed (or refused)."""
        return any(self[name].value() not in (None, "", "1", 1) or self[name].errors
                   for name in self.orders_fields)


class EventChangeForm(EventForm):
    """The event's fields and one size field per further quota (``quota_<name>``: orders,
    docs/orders.md), each shown with its confirmed, held and remaining seats."""

    # The version the organizer read: the save is refused if the event moved on since.
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    def __init__(self, *args, quotas=(), seats=None, **kwargs):
        super().__init__(*args, **kwargs)
        further = seats.quotas if seats is not None else {}
        for quota in sorted(quotas):
            counts = further.get(quota)
            now = (f" Now {counts.confirmed:,} confirmed, {counts.held:,} held, "
                   f"{counts.remaining:,} remaining." if counts else "")
            self.fields[quota_field(quota)] = forms.IntegerField(
                label=f"Quota “{quota}”", min_value=0,
                help_text=f"Seats.{now} Never below confirmed plus held.")

    @classmethod
    def for_event(cls, event, seats=None):
        zone_name = event.time_zone or get_default_timezone_name()
        return cls(initial={
            "name": event.name, "time_zone": zone_name,
            "starts_at": times.form_value(event.starts_at, zone_name),
            "ends_at": times.form_value(event.ends_at, zone_name),
            "venue": event.venue, "description": event.description,
            "capacity": event.capacity, "version": event.version,
            **{quota_field(quota): size for quota, size in event.quotas.items()}},
            quotas=event.quotas, seats=seats)

    def quota_sizes(self) -> dict[str, int] | None:
        """The further quotas' sizes as entered (None: the event has none)."""
        sizes = {name.removeprefix("quota_"): value for name, value in self.cleaned_data.items()
                 if name.startswith("quota_")}
        return sizes or None

    def show_error(self, error: BookingError) -> None:
        """A quota's error goes next to the quota it names."""
        if error.field == "quotas":
            named = [f for f in self.fields if f.startswith("quota_")
                     and f"'{f.removeprefix('quota_')}'" in error.message]
            if named:
                self.add_error(named[0], error.message)
                return
        super().show_error(error)


def quota_field(quota: str) -> str:
    return f"quota_{quota}"
