"""Admin forms for events. They check shapes; the service decides what is valid.

Times are typed as ISO 8601 text (``2026-12-12 19:30``) in the event's own time zone, so
the input never depends on the browser's locale; the service reads them in that zone.
"""
from django import forms
from django.utils.timezone import get_default_timezone_name

from booking import times
from booking.errors import BookingError
from booking.strategies import GUARDED, STRATEGIES
from booking.validation import DESCRIPTION_MAX_LENGTH, EVENT_NAME_MAX_LENGTH, VENUE_MAX_LENGTH
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


class EventAddForm(EventForm):
    strategy = forms.ChoiceField(
        label="Size",
        help_text="Standard suits almost every event; Small event is the cheapest for a few "
                  "hundred seats; Rush sale spreads many simultaneous bookings over one "
                  "record per seat; Queue accepts every request at once and gives the seats "
                  "to the first arrivals a moment later (for sales far beyond the seats); "
                  "Ticket drop answers thousands of people a second at once, for launches. "
                  "Sets the most seats the event can ever have; cannot be changed later.")

    field_order = ["name", "time_zone", "starts_at", "ends_at", "venue", "description",
                   "capacity", "strategy"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["strategy"].choices = [(name, strategy_label(name)) for name in GUARDED]
        default = web_settings().default_strategy
        self.fields["strategy"].initial = default if default in GUARDED else GUARDED[0]


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
