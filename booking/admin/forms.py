"""Admin forms for events. They check every field at once in the organizer's words; the
service decides what is valid and stores it.

Times are typed in date and time inputs and read in the event's own time zone (chosen by
city or IANA name, ``booking/admin/editor.py``); the service stores them in UTC.
"""
from collections.abc import Iterable
from typing import cast

from django import forms
from django.utils import timezone
from django.utils.timezone import get_default_timezone_name

from booking import times, validation
from booking.admin import editor
from booking.admin.editor import CROWDS, crowd_of, most_seats
from booking.errors import BookingError, InvalidBooking
from booking.models import ticket_label
from booking.validation import (DESCRIPTION_MAX_LENGTH, EVENT_NAME_MAX_LENGTH,
                                MAX_PER_ORDER_LIMIT, VENUE_MAX_LENGTH)

TIME_HELP = "In the event's time zone."


def _time_input():
    return forms.DateTimeInput(attrs={"type": "datetime-local"})


def form_time(value, zone_name) -> str:
    """A stored time as a date-and-time input shows it, in the event's zone."""
    return times.form_value(value, zone_name).replace(" ", "T")


class EventForm(forms.Form):
    name = forms.CharField(max_length=EVENT_NAME_MAX_LENGTH)
    time_zone = editor.TimeZoneField(
        label="Time zone", max_length=64, required=False,
        widget=forms.TextInput(attrs={"size": 24, "list": "time-zones", "autocomplete": "off"}),
        help_text="Type a city (Berlin) or pick from the list. The times below are in this zone.")
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
    save_anyway = forms.BooleanField(label="Save anyway", required=False)
    orders_fields: tuple = ()  # the fields the template shows in the orders section

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["time_zone"].initial = get_default_timezone_name()
        self.warnings: list[str] = []

    def most_seats(self) -> int | None:
        """The most seats the event can have (None: not known yet)."""
        return None

    def type_fields(self) -> set[str]:
        """Fields shown in the ticket types' table rather than above (none on this form)."""
        return set()

    def clean(self):
        """Every field's own rules at once (the service checks them again when saving)."""
        super().clean()
        data = self.cleaned_data
        zone = data.get("time_zone") or get_default_timezone_name()
        self._check("name", validation.clean_event_name)
        start = self._check("starts_at", lambda v: validation.clean_starts_at(v, time_zone=zone))
        if "starts_at" not in self.errors:
            self._check("ends_at", lambda v: validation.clean_ends_at(
                v, starts_at=start, time_zone=zone))
        most = self.most_seats()
        if most is not None and (data.get("capacity") or 0) > most:
            self.add_error("capacity", f"This event can have at most {most:,} seats. "
                                       + self.larger_hint())
        if start is not None and start < timezone.now():
            self.warnings.append("The start is in the past: nobody can book an event that "
                                 "has started.")
        return data

    def larger_hint(self) -> str:
        return ""

    def _check(self, field, clean):
        """``clean(value)``, or None with its error next to the field."""
        if field in self.errors or field not in self.cleaned_data:
            return None
        try:
            return clean(self.cleaned_data[field])
        except InvalidBooking as error:
            self.add_error(field, error.message)
            return None

    def hold_for_warnings(self) -> bool:
        """Whether to show the warnings instead of saving (until "Save anyway" is ticked)."""
        if self.warnings and not self.cleaned_data.get("save_anyway"):
            self.add_error(None, "Please check the warnings below. Tick “Save anyway” to save "
                                 "as it is.")
            return True
        return False

    def show_error(self, error: BookingError) -> None:
        """Put a domain error next to its field, or above the form."""
        editor.show_on(self, error)

    def disable(self) -> None:
        for field in self.fields.values():
            field.disabled = True


def strategy_label(name: str) -> str:
    """An event's kind in an organizer's words (never the strategy's name)."""
    return f"{crowd_of(name).label} (up to {most_seats(name):,} seats)"


class OrganizerField(forms.ChoiceField):
    """One of the organizers offered; with only one offered, that one (a hidden field)."""

    def clean(self, value):
        choices = list(cast(Iterable[tuple[str, str]], self.choices))
        if value in self.empty_values and len(choices) == 1:
            value = choices[0][0]
        return super().clean(value)


def organizer_field(organizers, help_text: str) -> OrganizerField:
    organizers = list(organizers)
    field = OrganizerField(choices=organizers, help_text=help_text)
    if len(organizers) == 1:
        field.initial, field.widget = organizers[0][0], forms.HiddenInput()
    return field


class EventAddForm(EventForm):
    crowd = forms.ChoiceField(
        label="How many people do you expect in the first minute?", widget=forms.RadioSelect,
        initial="few", help_text="It sets how bookings are taken and the most seats the "
                                 "event can ever have; it cannot be changed later.")
    expected_rate = forms.IntegerField(
        label="People a second at the opening", min_value=1,
        max_value=validation.MAX_EXPECTED_RATE, required=False,
        help_text="Optional, for thousands a second: how many people a second you expect when "
                  "sales open, so the event keeps up with them; cannot be changed later.")
    max_per_order = forms.IntegerField(
        label="Seats per order", min_value=1, max_value=MAX_PER_ORDER_LIMIT, initial=1,
        required=False, help_text="The most seats one person may book in one order. An event "
                                  "created with 1 keeps 1.")

    field_order = ["name", "time_zone", "starts_at", "ends_at", "venue", "description",
                   "capacity", "crowd", "expected_rate", "max_per_order"]
    orders_fields = ("max_per_order",)

    def __init__(self, data=None, *args, organizers=(), **kwargs):
        """``organizers``: (slug, name) of those the user may create events in."""
        super().__init__(data, *args, **kwargs)
        self.fields["organizer"] = organizer_field(organizers, "The organizer that owns "
                                                               "the event.")
        self.order_fields(["organizer", *self.field_order, "save_anyway"])
        cast(forms.ChoiceField, self.fields["crowd"]).choices = editor.crowd_choices()
        # A post without the rows' section (an older form, a script) has no rows.
        has_rows = data is not None and "quota-TOTAL_FORMS" in data
        self.quota_rows = editor.QuotaRows(data if has_rows else None, prefix="quota")
        self.type_rows = editor.TypeRows(data if has_rows else None, prefix="type")
        self.orders: tuple[dict, dict, dict, dict] = ({}, {}, {}, {})
        self.orders_problems: list[str] = []  # across rows: shown in the rows' section

    def row_errors(self) -> list[tuple[str, str]]:
        """(input id, message) of every row's errors, for the summary above the form."""
        found = [("#orders-heading", problem) for problem in self.orders_problems]
        for rows in (self.quota_rows, self.type_rows):
            if rows.is_bound:
                found += [(f"#{row[name].id_for_label}", f"{row[name].label}: {error}")
                          for row in rows for name, errors in row.errors.items()
                          for error in errors]
        return found

    def is_valid(self) -> bool:
        return super().is_valid() and self.rows_valid() and not self.orders_errors()

    def rows_valid(self) -> bool:
        return all(not rows.is_bound or rows.is_valid()
                   for rows in (self.quota_rows, self.type_rows))

    def clean(self):
        super().clean()
        data = self.cleaned_data
        if self.quota_rows.is_bound and self.rows_valid():
            try:
                self.orders = editor.rows_as_orders(self.quota_rows, self.type_rows)
            except forms.ValidationError as problems:
                self.orders_problems = problems.messages
        quotas, labels = self.orders[0], self.orders[3]
        self.code_only = editor.code_only_of(self.type_rows) \
            if self.orders[1] and self.type_rows.is_bound and self.rows_valid() else []
        if self.code_only and len(self.code_only) == len(self.orders[1]):
            self.warnings.append("Every ticket type needs an access code: nobody can book "
                                 "without one, and the event's page offers nothing until "
                                 "a code is typed.")
        for name, seats in quotas.items():
            if data.get("capacity") is not None and seats > data["capacity"]:
                self.warnings.append(f"The quota {labels.get(name) or ticket_label(name)} has {seats:,} seats, more "
                                     f"than the event's {data['capacity']:,}: its ticket types "
                                     "can never sell more than the event's seats.")
        return data

    def orders_errors(self) -> bool:
        return bool(any(rows.is_bound and rows.total_error_count()
                        for rows in (self.quota_rows, self.type_rows))
                    or self.orders_problems)

    def most_seats(self) -> int | None:
        crowd = CROWDS.get(self.cleaned_data.get("crowd", ""))
        return most_seats(crowd.strategy) if crowd else None

    def larger_hint(self) -> str:
        return "For more, choose a larger crowd above."

    def event_kwargs(self) -> dict:
        """The service's ``create_event`` keywords for what was entered."""
        data = self.cleaned_data
        quotas, types, descriptions, labels = self.orders
        return {"name": data["name"], "organizer": data["organizer"],
                "strategy": CROWDS[data["crowd"]].strategy, "capacity": data["capacity"],
                "time_zone": data["time_zone"], "starts_at": data["starts_at"],
                "ends_at": data["ends_at"], "venue": data["venue"],
                "description": data["description"], "expected_rate": data["expected_rate"],
                "quotas": quotas or None, "ticket_types": types or None,
                "ticket_descriptions": descriptions or None, "ticket_labels": labels or None,
                "max_per_order": data["max_per_order"],
                "code_only_types": getattr(self, "code_only", None) or None}

    def takes(self) -> dict[str, str]:
        """What a seat of each type entered takes (shown once the form was posted)."""
        quotas, types, _, labels = self.orders
        capacity = self.cleaned_data.get("capacity") if hasattr(self, "cleaned_data") else None
        return editor.seat_takes(capacity, quotas, types, labels) if types and capacity else {}

    def orders_open(self) -> bool:
        """The orders section starts open once anything in it was typed (or refused)."""
        return self.is_bound and (self.quota_rows.is_bound and (
            self.quota_rows.has_changed() or self.type_rows.has_changed())
                                  or self.orders_errors()
                                  or self["max_per_order"].value() not in (None, "", "1"))


class EventChangeForm(EventForm):
    """The event's fields, one size field per further quota (``quota_<name>``), seats per
    order (when the event sells several) and a description per ticket type
    (``description_<type>``), each quota shown with its confirmed, held and remaining seats."""

    # The version the organizer read: the save is refused if the event moved on since.
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    orders_fields = ("max_per_order",)  # shown with the ticket types

    def __init__(self, *args, event=None, seats=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.event = event
        further = seats.quotas if seats is not None else {}
        for quota in sorted(event.quotas):
            counts = further.get(quota)
            now = (f" Now {counts.confirmed:,} confirmed, {counts.held:,} held, "
                   f"{counts.remaining:,} remaining." if counts else "")
            self.fields[quota_field(quota)] = forms.IntegerField(
                label=f"Quota “{event.label(quota)}”", min_value=0,
                help_text=f"Seats.{now} Never below confirmed plus held.")
        most = self.most_seats()
        self.fields["capacity"].help_text = (
            f"Seats, at most {most:,} for an event set up for “{crowd_of(event.strategy).label}"
            "”. Never below the confirmed count.")
        if event.max_per_order > 1:
            self.fields["max_per_order"] = forms.IntegerField(
                label="Seats per order", min_value=2, max_value=MAX_PER_ORDER_LIMIT,
                help_text="The most seats one person may book in one order (2 or more).")
        if event.offers_orders:
            for name in event.ticket_types:
                self.fields[label_field(name)] = forms.CharField(
                    label=f"{event.label(name)}: label", required=False,
                    max_length=validation.TICKET_LABEL_MAX_LENGTH,
                    widget=forms.TextInput(attrs={"size": 20}),
                    help_text=f"Its key “{name}” stays (bookings name it); empty: "
                              f"“{ticket_label(name)}”.")
                self.fields[description_field(name)] = forms.CharField(
                    label=f"{event.label(name)}: description", required=False,
                    max_length=validation.TICKET_DESCRIPTION_MAX_LENGTH,
                    widget=forms.TextInput(attrs={"size": 40}),
                    help_text=editor.seat_takes(event.capacity, event.quotas,
                                                {name: event.ticket_types[name]},
                                                event.ticket_labels)[name])
        self.order_fields([*self.fields, "save_anyway"])
        # New ticket types (an event that sells types): rows as on the add form.
        bound = self.is_bound and "newtype-TOTAL_FORMS" in self.data
        self.new_type_rows = editor.NewTypeRows(self.data if bound else None, prefix="newtype")
        self.added: tuple[dict, dict, dict] = ({}, {}, {})
        self.added_problems: list[str] = []

    def row_errors(self) -> list[tuple[str, str]]:
        found = [("#types-heading", problem) for problem in self.added_problems]
        if self.new_type_rows.is_bound:
            found += [(f"#{row[name].id_for_label}", f"New {row[name].label.lower()}: {error}")
                      for row in self.new_type_rows for name, errors in row.errors.items()
                      for error in errors]
        return found

    def is_valid(self) -> bool:
        return (super().is_valid() and not self.added_problems
                and (not self.new_type_rows.is_bound or self.new_type_rows.is_valid()))

    def orders_errors(self) -> bool:
        return bool(self.added_problems or (self.new_type_rows.is_bound
                                            and self.new_type_rows.total_error_count()))

    def type_fields(self) -> set[str]:
        """The existing types' fields, shown in their table rather than above."""
        return {f for name in self.event.ticket_types
                for f in (label_field(name), description_field(name)) if f in self.fields}

    def existing_types(self) -> list[dict]:
        """One row per existing type: its label and description fields, its key and the
        quotas it counts against (both fixed: bookings may hold it), what a seat takes."""
        event = self.event
        takes = editor.seat_takes(event.capacity, event.quotas, event.ticket_types,
                                  event.ticket_labels)
        return [{"name": name, "label": self[label_field(name)],
                 "description": self[description_field(name)],
                 "quotas": ", ".join(event.label(q) for q in quotas),
                 "code_only": name in event.code_only_types, "takes": takes[name]}
                for name, quotas in event.ticket_types.items()
                if label_field(name) in self.fields]

    def quota_names(self) -> list[str]:
        """The event's quotas by label, offered where a new type names its quotas."""
        return [self.event.label(q) for q in sorted(self.event.quotas)]

    @classmethod
    def for_event(cls, event, seats=None):
        zone_name = event.time_zone or get_default_timezone_name()
        return cls(initial={
            "name": event.name, "time_zone": zone_name,
            "starts_at": form_time(event.starts_at, zone_name),
            "ends_at": form_time(event.ends_at, zone_name),
            "venue": event.venue, "description": event.description,
            "capacity": event.capacity, "version": event.version,
            "max_per_order": event.max_per_order,
            **{description_field(name): text
               for name, text in event.ticket_descriptions.items()},
            **{label_field(name): event.label(name) for name in event.ticket_types},
            **{quota_field(quota): size for quota, size in event.quotas.items()}},
            event=event, seats=seats)

    def most_seats(self) -> int | None:
        return most_seats(self.event.strategy)

    def larger_hint(self) -> str:
        return "The crowd an event was set up for cannot change: for more, create a new event."

    def clean(self):
        super().clean()
        data = self.cleaned_data
        for quota in self.event.quotas:
            size, capacity = data.get(quota_field(quota)), data.get("capacity")
            if size is not None and capacity is not None and size > capacity:
                self.warnings.append(f"The quota {self.event.label(quota)} has {size:,} seats, "
                                     f"more than the event's {capacity:,}.")
        if (self.event.offers_orders and self.new_type_rows.is_bound
                and self.new_type_rows.is_valid()):
            try:
                self.added = editor.rows_as_added_types(self.new_type_rows, self.event)
            except forms.ValidationError as problems:
                self.added_problems = problems.messages
        self._check_type_labels(data)
        if self.event.starts_at and self.event.starts_at < timezone.now():
            # An event that already started: the warning says nothing new.
            self.warnings = [w for w in self.warnings if not w.startswith("The start")]
        return data

    def _check_type_labels(self, data) -> None:
        """Two types may not read the same (people choose between them by label)."""
        by_label: dict[str, str] = {}
        for name in self.event.ticket_types if self.event.offers_orders else ():
            field = label_field(name)
            shown = (data.get(field) or "").strip() or ticket_label(name)
            if field in self.errors:
                continue
            if shown.casefold() in by_label:
                self.add_error(field, f"“{shown}” is already the label of the ticket type "
                                      f"“{by_label[shown.casefold()]}”: give each its own.")
            by_label[shown.casefold()] = name
        for name, label in self.added[2].items():
            if label.casefold() in by_label:
                self.added_problems.append(
                    f"The new ticket type “{label}” reads like the ticket type "
                    f"“{by_label[label.casefold()]}”: give each its own label.")

    def posted(self, name: str) -> bool:
        """Whether the post carried ``name``: a type added since the form was read has no
        fields in it, and keeps its stored label and description."""
        return not self.is_bound or name in self.data

    def type_texts(self) -> tuple[dict, dict]:
        """(descriptions, labels) of the existing types: as entered, or as stored for a
        type the post did not show; the quotas' labels as they are."""
        data, event = self.cleaned_data, self.event
        descriptions, labels = {}, {q: text for q, text in event.ticket_labels.items()
                                    if q not in event.ticket_types}
        for name in event.ticket_types:
            described, labelled = description_field(name), label_field(name)
            descriptions[name] = (data.get(described, "") if self.posted(described)
                                  else event.ticket_descriptions.get(name, ""))
            label = (data.get(labelled, "").strip() if self.posted(labelled)
                     else event.ticket_labels.get(name, ""))
            if label and label != ticket_label(name) or name in event.ticket_labels:
                labels[name] = label
        return descriptions, labels

    def update_kwargs(self) -> dict:
        """The service's ``update_event`` keywords for what was entered."""
        data = self.cleaned_data
        kwargs = {"expected_version": data["version"], "name": data["name"],
                  "capacity": data["capacity"], "time_zone": data["time_zone"],
                  "starts_at": data["starts_at"], "ends_at": data["ends_at"],
                  "venue": data["venue"], "description": data["description"],
                  "quotas": self.quota_sizes(), "max_per_order": data.get("max_per_order")}
        if not self.event.offers_orders:
            return kwargs
        descriptions, labels = self.type_texts()
        return {**kwargs, "ticket_descriptions": descriptions,
                "ticket_labels": labels, **self.added_kwargs(descriptions, labels)}

    def added_kwargs(self, descriptions: dict, labels: dict) -> dict:
        """The new ticket types (with the existing ones, as they are), adding their
        descriptions and labels to ``descriptions`` and ``labels``; nothing when none was
        added."""
        types, added_descriptions, added_labels = self.added
        if not types:
            return {}
        descriptions.update(added_descriptions)
        labels.update(added_labels)
        return {"ticket_types": {**{name: list(quotas) for name, quotas
                                    in self.event.ticket_types.items()}, **types}}

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


def description_field(ticket_type: str) -> str:
    return f"description_{ticket_type}"


def label_field(ticket_type: str) -> str:
    return f"label_{ticket_type}"
