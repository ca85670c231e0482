"""Input rules shared by the service (and so by every form, admin page and command)."""
import functools
import re
import unicodedata
import uuid
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils import timezone

from booking.errors import EventNotFound, InvalidBooking
from booking.models import RESERVED_NAMES

NAME_MAX_LENGTH = 100
EVENT_NAME_MAX_LENGTH = 200
DESCRIPTION_MAX_LENGTH = 2000
VENUE_MAX_LENGTH = 200
EMAIL_MAX_LENGTH = 254
EVENT_ID_PATTERN = re.compile(r"^[0-9a-f]{32}$")
REGISTRATION_ID_PATTERN = EVENT_ID_PATTERN
REQUEST_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
# Joiners are format characters that real names (and emoji) legitimately use.
_ALLOWED_FORMAT_CHARACTERS = {"\u200c", "\u200d"}
# Letters that render as nothing (Hangul fillers): they do not make a name visible.
_INVISIBLE_LETTERS = {"\u115f", "\u1160", "\u3164", "\uffa0"}
# Unicode's default-ignorable code points (DerivedCoreProperties.txt) that are not already
# control or format characters: they render as nothing. Plus the braille blank, which
# renders as a blank.
_INVISIBLE_RANGES = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x2800, 0x2800), (0x3164, 0x3164), (0xFFA0, 0xFFA0), (0x1D173, 0x1D17A),
    (0xE0000, 0xE00FF), (0xE01F0, 0xE0FFF),
)
_JOINERS = {"\u200c", "\u200d"}
# Scripts whose shaping uses zero-width (non-)joiners between letters (names of Unicode
# characters start with their script).
_JOINING_SCRIPTS = ("ARABIC", "SYRIAC", "NKO", "MONGOLIAN", "DEVANAGARI", "BENGALI",
                    "GURMUKHI", "GUJARATI", "ORIYA", "TAMIL", "TELUGU", "KANNADA",
                    "MALAYALAM", "SINHALA", "KHMER", "MYANMAR", "TIBETAN", "THAANA")
# More combining marks than this on one letter is a flood (no script stacks more).
MAX_MARKS_PER_LETTER = 4
# Event starts outside this range are typing mistakes (and the far ends of the calendar
# cannot be shown in every time zone).
EARLIEST_START = datetime(2000, 1, 1, tzinfo=dt_timezone.utc)
LATEST_START_YEARS = 20


def _noncharacter(char: str) -> bool:
    code = ord(char)
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


def has_control_characters(value: str) -> bool:
    """Control, surrogate, private-use, format (but joiners), line/paragraph separators,
    noncharacters and U+FFFD (the mark of text that was decoded wrongly)."""
    for char in value:
        category = unicodedata.category(char)
        if category in ("Cc", "Cs", "Co", "Zl", "Zp") or (
            category == "Cf" and char not in _ALLOWED_FORMAT_CHARACTERS
        ) or char == "\ufffd" or _noncharacter(char):
            return True
    return False


def has_letter_or_digit(value: str) -> bool:
    return any(unicodedata.category(char)[0] in "LN" and char not in _INVISIBLE_LETTERS
               for char in value)


def _script(char: str) -> str:
    return unicodedata.name(char, "").split(" ", 1)[0]


def _joiner_in_place(value: str, index: int) -> bool:
    """A joiner between two characters of a script that shapes with it, or (ZWJ) between
    two emoji of a sequence such as a family."""
    if index == 0 or index == len(value) - 1:
        return False
    before, after = value[index - 1], value[index + 1]
    if before == "\ufe0f" and index >= 2:  # an emoji in its emoji presentation
        before = value[index - 2]
    if value[index] == "\u200d" and unicodedata.category(before) == unicodedata.category(after) == "So":
        return True
    return any(_script(c) in _JOINING_SCRIPTS for c in (before, after)) and not (
        {before, after} & _JOINERS or before.isspace() or after.isspace())


def _selector_in_place(value: str, index: int) -> bool:
    """A variation selector right after the symbol or ideograph it chooses a form of."""
    if index == 0:
        return False
    before = value[index - 1]
    return unicodedata.category(before) in ("So", "Sm") or _script(before) == "CJK"


def invisible_character(value: str) -> str | None:
    """The first character that renders as nothing or as a blank where it stands (fillers,
    default-ignorables, a joiner or selector out of place, a flood of combining marks), or
    None."""
    marks = 0
    for index, char in enumerate(value):
        code = ord(char)
        if char in _JOINERS:
            if not _joiner_in_place(value, index):
                return char
            continue
        if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
            if not _selector_in_place(value, index):
                return char
            continue
        if any(low <= code <= high for low, high in _INVISIBLE_RANGES):
            return char
        marks = marks + 1 if unicodedata.category(char) in ("Mn", "Me") else 0
        if marks > MAX_MARKS_PER_LETTER:
            return char
    return None


def has_visible_character(value: str) -> bool:
    """A letter, digit, punctuation mark or symbol that is not a filler."""
    return any(unicodedata.category(char)[0] in "LNPS" and char not in _INVISIBLE_LETTERS
               for char in value)


def clean_text(value, *, field: str, label: str, max_length: int) -> str:
    if not isinstance(value, str):
        raise InvalidBooking(f"{label} must be text.", field=field)
    value = value.strip()
    if not value:
        raise InvalidBooking(f"{label} is required.", field=field)
    if len(value) > max_length:
        raise InvalidBooking(f"{label} must be at most {max_length} characters.", field=field)
    if has_control_characters(value):
        raise InvalidBooking(f"{label} must not contain control characters or line breaks.",
                             field=field)
    hidden = invisible_character(value)
    if hidden is not None:
        raise InvalidBooking(
            f"{label} contains a character that does not show (U+{ord(hidden):04X}, "
            f"{unicodedata.name(hidden, 'unnamed').lower()}). Please type it without.",
            field=field)
    if not has_visible_character(value):
        raise InvalidBooking(f"{label} must contain letters, digits or symbols.", field=field)
    return unicodedata.normalize("NFC", value)


def clean_person_name(value) -> str:
    name = clean_text(value, field="name", label="Name", max_length=NAME_MAX_LENGTH)
    if not has_letter_or_digit(name):
        raise InvalidBooking("Name must contain at least one letter or digit.", field="name")
    return name


ORGANIZER_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,49}$")


def clean_organizer(value) -> str:
    """An organizer's slug (1 to 50 lower-case letters, digits, hyphens), or ""."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or not ORGANIZER_SLUG.match(value):
        raise InvalidBooking("Unknown organizer.", field="organizer")
    return value


def clean_event_name(value) -> str:
    return clean_text(value, field="name", label="Event name", max_length=EVENT_NAME_MAX_LENGTH)


# IDNA 2003 and 2008 map these differently (straße.de is two domains or one): refused, so
# one key never names two mailboxes.
_IDNA_DEVIATIONS = {"\u00df", "\u03c2", "\u200c", "\u200d"}
INVALID_EMAIL = "Enter a valid e-mail address."
PLAIN_EMAIL = ("Please type the address itself, such as name@example.com (no quotes, "
               "encoded words or bracketed domains).")
# An RFC 2047 encoded word (=?charset?B?...?=): mail software decodes it to another
# mailbox, so the same person could book again under a new spelling.
_ENCODED_WORD = re.compile(r"=\?[^?\s]*\?[bBqQ]\?[^?\s]*\?=")
# A dot-atom local part (RFC 5322): what a quoted local part may unquote to.
_DOT_ATOM = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$")
NON_ASCII_LOCAL_PART = ("Please use an address whose part before the @ has no accents or "
                        "non-Latin letters: we cannot deliver to those yet.")


def clean_typed_email(value) -> str:
    """The address as typed (trimmed), checked for shape: the address we mail."""
    if not isinstance(value, str):
        raise InvalidBooking("E-mail must be text.", field="email")
    email = unicodedata.normalize("NFC", value.strip())
    if not email:
        raise InvalidBooking("E-mail is required.", field="email")
    if len(email.encode("utf-8")) > EMAIL_MAX_LENGTH:
        raise InvalidBooking(
            f"E-mail must be at most {EMAIL_MAX_LENGTH} characters.", field="email")
    if has_control_characters(email):
        raise InvalidBooking("E-mail must not contain control characters.", field="email")
    if _ENCODED_WORD.search(email):
        raise InvalidBooking(PLAIN_EMAIL, field="email")
    local, at, domain = email.rpartition("@")
    if not at or not local:
        raise InvalidBooking(INVALID_EMAIL, field="email")
    if domain.startswith("["):  # an address literal: nobody types one for themselves
        raise InvalidBooking(PLAIN_EMAIL, field="email")
    if len(local) >= 2 and local[0] == local[-1] == '"':
        # "carol"@example.com is carol@example.com; a local part that needs its quotes is
        # not an address a person would type.
        if not _DOT_ATOM.match(local[1:-1]):
            raise InvalidBooking(PLAIN_EMAIL, field="email")
        local = local[1:-1]
        email = f"{local}@{domain}"
    elif '"' in local:
        raise InvalidBooking(PLAIN_EMAIL, field="email")
    if not local.isascii():
        # SMTPUTF8 is not supported end to end; refusing beats mailing a mangled address.
        raise InvalidBooking(NON_ASCII_LOCAL_PART, field="email")
    try:
        validate_email(f"{local}@{ascii_domain(domain)}")
    except ValidationError:
        raise InvalidBooking(INVALID_EMAIL, field="email") from None
    return email


def ascii_domain(domain: str) -> str:
    """The domain's lowercase ASCII (IDNA) form: bücher.example -> xn--bcher-kva.example."""
    domain = domain.casefold() if domain.isascii() else domain.lower()
    if _IDNA_DEVIATIONS & set(domain):
        raise InvalidBooking(INVALID_EMAIL, field="email")
    try:
        return domain.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise InvalidBooking(INVALID_EMAIL, field="email") from None


def normalize_email(value) -> str:
    """The key of a mailbox: one person is one registration.

    The local part (ASCII only) is lowercased and the domain is its IDNA ASCII form, so
    ``ADA@Bücher.example`` and ``ada@xn--bcher-kva.example`` are one key. For a plain ASCII
    address this is exactly the earlier key (trimmed and case-folded).
    """
    if isinstance(value, str) and len(value) <= 4 * EMAIL_MAX_LENGTH:
        return _normalized(value)  # a request asks for one address's key several times
    return _normalized.__wrapped__(value)


@functools.lru_cache(maxsize=4096)
def _normalized(value) -> str:
    local, _, domain = clean_typed_email(value).rpartition("@")
    return f"{local.lower()}@{ascii_domain(domain)}"


# An attendee an organizer adds by hand without an e-mail address is registered under a
# generated address on this reserved domain (".invalid" never resolves, RFC 2606): unique
# per attendee, so it keys the registration like any address, and the mailer never sends
# to it (docs/admin.md).
NO_EMAIL_DOMAIN = "no-email.invalid"


def placeholder_email() -> str:
    """A new address for an attendee added without one: ``attendee-<random>@no-email.invalid``."""
    return f"attendee-{uuid.uuid4().hex[:20]}@{NO_EMAIL_DOMAIN}"


def is_placeholder_email(value) -> bool:
    """Whether ``value`` is such an address (nobody's mailbox: never mailed)."""
    return isinstance(value, str) and value.strip().lower().endswith("@" + NO_EMAIL_DOMAIN)


def email_lookup_key(value) -> str:
    """The key to look a stored registration up by: ``normalize_email``, or the earlier
    trim-and-case-fold key for an address stored before non-ASCII local parts were refused."""
    try:
        return normalize_email(value)
    except InvalidBooking:
        legacy = value.strip().casefold() if isinstance(value, str) else ""
        if not legacy or has_control_characters(legacy) or "@" not in legacy:
            raise
        return legacy


def clean_capacity(value, *, max_capacity: int) -> int:
    """Seats from 0 to ``max_capacity`` (what the event's kind of booking holds; the error
    names the limit, never the strategy: organizers chose a crowd, not a strategy)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidBooking("Capacity must be a whole number.", field="capacity")
    if value < 0:
        raise InvalidBooking("Capacity cannot be negative.", field="capacity")
    if value > max_capacity:
        raise InvalidBooking(
            f"This event can have at most {max_capacity:,} seats: it was set up for the crowd "
            "its organizer expected in the first minute, and that cannot change. For more "
            "seats, create a new event and choose a larger crowd.",
            field="capacity",
        )
    return value


def clean_description(value) -> str:
    """Optional; several lines allowed (tabs and line feeds), other control characters not."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise InvalidBooking("Description must be text.", field="description")
    value = value.replace("\r\n", "\n").strip()
    if len(value) > DESCRIPTION_MAX_LENGTH:
        raise InvalidBooking(
            f"Description must be at most {DESCRIPTION_MAX_LENGTH} characters.", field="description")
    if any(has_control_characters(line) for line in value.replace("\t", " ").split("\n")):
        raise InvalidBooking("Description must not contain control characters.",
                             field="description")
    return unicodedata.normalize("NFC", value)


def clean_venue(value) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        return ""
    return clean_text(value, field="venue", label="Venue", max_length=VENUE_MAX_LENGTH)


def clean_time_zone(value, *, default: str) -> str:
    """An IANA zone name such as 'Europe/Berlin'; empty means ``default`` (the site's)."""
    from booking.times import zone_names

    if value is None or value == "":
        value = default
    if not isinstance(value, str) or value.strip() not in zone_names():
        raise InvalidBooking("Time zone must be an IANA time zone name, such as "
                             "Europe/Berlin or America/New_York.", field="time_zone")
    return value.strip()


def clean_ends_at(value, *, starts_at, time_zone=None) -> datetime | None:
    """Optional; only with a start, and after it."""
    end = clean_starts_at(value, time_zone=time_zone, field="ends_at", label="End time")
    if end is None:
        return None
    if starts_at is None:
        raise InvalidBooking("Set a start time before an end time.", field="ends_at")
    if end <= starts_at:
        raise InvalidBooking("End time must be after the start time.", field="ends_at")
    return end


def clean_starts_at(value, *, time_zone=None, field="starts_at",
                    label="Start time") -> datetime | None:
    """A date and time; without an offset it is read in ``time_zone`` (default TIME_ZONE)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidBooking(f"{label} must be an ISO 8601 date and time, such as "
                                 "2026-12-12 19:30.", field=field) from None
    if not isinstance(value, datetime):
        raise InvalidBooking(f"{label} must be a date and time.", field=field)
    if timezone.is_naive(value):
        from booking.times import zone

        value = _existing_wall_time(value, zone(time_zone), field=field, label=label)
    latest = timezone.now() + timedelta(days=365 * LATEST_START_YEARS)
    try:
        value = value.astimezone(dt_timezone.utc)  # stored in UTC
    except OverflowError:  # beyond year 1 or 9999 once in UTC
        value = None
    if value is None or not EARLIEST_START <= value <= latest:
        raise InvalidBooking(
            f"{label} must be between {EARLIEST_START:%Y} and {latest:%Y}.", field=field)
    return value


def _exists(naive: datetime, tz) -> bool:
    aware = naive.replace(tzinfo=tz)
    return aware.astimezone(dt_timezone.utc).astimezone(tz).replace(tzinfo=None) == naive


def _offset(moment: datetime) -> str:
    """'+01:00', as ISO 8601 writes an offset."""
    text = moment.strftime("%z")
    return f"{text[:3]}:{text[3:]}"


def _existing_wall_time(naive: datetime, tz, *, field: str, label: str) -> datetime:
    """``naive`` read in ``tz``; refused inside a daylight-saving gap (it never happens)
    or overlap (it happens twice), naming the valid times nearby."""
    first, second = naive.replace(tzinfo=tz, fold=0), naive.replace(tzinfo=tz, fold=1)
    try:
        if first.utcoffset() == second.utcoffset():
            return first
    except OverflowError:
        return first  # the range check that follows refuses it
    shown = f"{naive:%Y-%m-%d %H:%M}"
    if _exists(naive, tz):  # an overlap: the clocks go back past this time
        raise InvalidBooking(
            f"{label} {shown} happens twice in {tz.key} (the clocks go back that night). "
            f"Write it with its offset: {shown}{_offset(first)} for the first time or "
            f"{shown}{_offset(second)} for the second.", field=field)
    minute = timedelta(minutes=1)
    before, after = naive - minute, naive + minute
    while not _exists(before, tz):
        before -= minute
    while not _exists(after, tz):
        after += minute
    raise InvalidBooking(
        f"{label} {shown} does not exist in {tz.key}: the clocks go forward that night, "
        f"from {before + minute:%H:%M} straight to {after:%H:%M}. Choose {before:%H:%M} or "
        f"{after:%H:%M}.", field=field)


def clean_request_id(value) -> str | None:
    """Optional request ids are 8-64 characters of letters, digits, '-' and '_'."""
    if value is None:
        return None
    if not isinstance(value, str) or not REQUEST_ID_PATTERN.match(value):
        raise InvalidBooking("This form has expired. Please reload the page.", field="request_id")
    return value


def clean_event_id(value) -> str:
    """Event ids are 32 lowercase hex digits; anything else cannot name an event."""
    if not isinstance(value, str) or not EVENT_ID_PATTERN.match(value):
        raise EventNotFound()
    return value


# --- Orders: quotas, ticket types, tickets (docs/orders.md) ------------------------------
QUOTA_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
MAX_QUOTAS = 10  # further quotas per event, beside its capacity
MAX_TICKET_TYPES = 20
MAX_PER_ORDER_LIMIT = 50
_NAME_RULE = "1-40 lowercase letters, digits, '-' or '_', starting with a letter or digit"


def _clean_key(value, *, field: str, kind: str) -> str:
    if not isinstance(value, str) or not QUOTA_NAME_PATTERN.match(value):
        raise InvalidBooking(f"{kind} {value!r} is not a valid name ({_NAME_RULE}).", field=field)
    return value


# A quota's items are keyed "<event id>#<quota>", beside records of the event's own under
# these names (shards' marker and its copies, slots' freed epoch and its copies): a quota
# of such a name would share their items.
STORE_RECORD_NAMES = re.compile(r"^(meta|freed)(-[0-9]+)?$")


def clean_quotas(value, *, max_capacity: int) -> dict[str, int]:
    """Further quotas beside the event's capacity: name -> seats (0 to ``max_capacity``)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > MAX_QUOTAS:
        raise InvalidBooking(f"Quotas must map at most {MAX_QUOTAS} names to seat counts.",
                             field="quotas")
    quotas = {}
    for name, seats in value.items():
        name = _clean_key(name, field="quotas", kind="Quota")
        if name in RESERVED_NAMES:
            raise InvalidBooking("'capacity' is the event's own quota: set it as the capacity.",
                                 field="quotas")
        if STORE_RECORD_NAMES.match(name):
            raise InvalidBooking(f"A quota cannot be named {name!r}: the store keeps records "
                                 "of the event's own under that name. Name it after what it "
                                 "counts, such as 'workshop'.", field="quotas")
        if isinstance(seats, bool) or not isinstance(seats, int) or not 0 <= seats <= max_capacity:
            raise InvalidBooking(f"Quota {name!r} needs a whole number of seats from 0 to "
                                 f"{max_capacity}.", field="quotas")
        quotas[name] = seats
    return quotas


def clean_ticket_types(value, *, quotas: dict[str, int]) -> dict[str, tuple[str, ...]]:
    """Ticket type -> the further quotas it counts against (every type counts against the
    capacity). None: the one type ``admission``. Every quota named must exist."""
    if value is None:
        return {"admission": ()}
    if not isinstance(value, dict) or not 1 <= len(value) <= MAX_TICKET_TYPES:
        raise InvalidBooking(f"Give from 1 to {MAX_TICKET_TYPES} ticket types.",
                             field="ticket_types")
    types = {}
    for name, names in value.items():
        name = _clean_key(name, field="ticket_types", kind="Ticket type")
        if name in RESERVED_NAMES:
            raise InvalidBooking(f"A ticket type cannot be named {name!r}: that is the name of "
                                 "the event's own capacity, which every ticket type counts "
                                 "against. Name it after what it sells, such as 'general'.",
                                 field="ticket_types")
        if isinstance(names, str) or not isinstance(names, (list, tuple)):
            raise InvalidBooking(f"Ticket type {name!r} needs a list of quota names.",
                                 field="ticket_types")
        for quota in names:
            if quota not in quotas:
                known = ", ".join(quotas) or "none besides the capacity"
                raise InvalidBooking(f"Ticket type {name!r} names an unknown quota {quota!r} "
                                     f"(quotas: {known}).", field="ticket_types")
        if len(set(names)) != len(names):
            raise InvalidBooking(f"Ticket type {name!r} names a quota twice.", field="ticket_types")
        types[name] = tuple(sorted(names))
    return types


MAX_EXPECTED_RATE = 1_000_000


def clean_expected_rate(value) -> int | None:
    """Arrivals a second an organizer expects (None or "": not stated)."""
    if value in (None, ""):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_EXPECTED_RATE:
        raise InvalidBooking(f"Expected arrivals a second must be a whole number from 1 to "
                             f"{MAX_EXPECTED_RATE:,}.", field="expected_rate")
    return value


TICKET_DESCRIPTION_MAX_LENGTH = 300


def clean_ticket_descriptions(value, *, ticket_types) -> dict[str, str]:
    """A sentence per ticket type (type -> text), only for types of the event; empty texts
    are dropped."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidBooking("Ticket type descriptions must map types to text.",
                             field="ticket_types")
    cleaned = {}
    for name, text in value.items():
        if text is None or (isinstance(text, str) and not text.strip()):
            continue
        if name not in ticket_types:
            raise InvalidBooking(f"There is no ticket type {name!r} to describe.",
                                 field="ticket_types")
        cleaned[name] = clean_text(text, field="ticket_types",
                                   label="A ticket type's description",
                                   max_length=TICKET_DESCRIPTION_MAX_LENGTH)
    return cleaned


TICKET_LABEL_MAX_LENGTH = 60


def clean_ticket_labels(value, *, names) -> dict[str, str]:
    """The labels the organizer typed (name -> label), each for a ticket type or quota in
    ``names``; empty labels are dropped (the name's derived label applies)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidBooking("Ticket type labels must map names to text.", field="ticket_types")
    cleaned = {}
    for name, text in value.items():
        if text is None or (isinstance(text, str) and not text.strip()):
            continue
        if name not in names:
            raise InvalidBooking(f"There is no ticket type or quota {name!r} to label.",
                                 field="ticket_types")
        cleaned[name] = clean_text(text, field="ticket_types", label="A ticket type's label",
                                   max_length=TICKET_LABEL_MAX_LENGTH)
    return cleaned


def clean_max_per_order(value) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PER_ORDER_LIMIT:
        raise InvalidBooking(f"Seats per order must be a whole number from 1 to "
                             f"{MAX_PER_ORDER_LIMIT}.", field="max_per_order")
    return value


def clean_tickets(value, *, ticket_types: dict, quotas: dict, max_per_order: int) -> dict[str, int]:
    """An order's tickets (type -> quantity) against the event's types. None: one seat of
    the event's only type (an error naming the types when there are several)."""
    names = ", ".join(ticket_types)
    if value is None:
        if len(ticket_types) > 1:
            raise InvalidBooking(f"Choose your tickets: this event has the types {names}.",
                                 field="tickets")
        return {next(iter(ticket_types)): 1}
    if not isinstance(value, dict) or not value:
        raise InvalidBooking("Choose at least one ticket.", field="tickets")
    tickets = {}
    for name, quantity in value.items():
        if name not in ticket_types:
            what = "a quota, not a ticket type" if name in quotas or name == "capacity" else \
                "not a ticket type of this event"
            raise InvalidBooking(f"{str(name)[:40]!r} is {what}. Ticket types: {names}.",
                                 field="tickets")
        if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
            raise InvalidBooking(f"The number of {name!r} tickets must be a whole number of at "
                                 f"least 1.", field="tickets")
        tickets[name] = quantity
    if sum(tickets.values()) > max_per_order:
        raise InvalidBooking(f"One order holds at most {max_per_order} "
                             f"seat{'s' if max_per_order != 1 else ''}.", field="tickets")
    return tickets


def parse_quota(value: str) -> tuple[str, int]:
    """``NAME=N``: a quota as typed (``create_event --quota``, a line of the admin's form);
    the name is checked by ``clean_quotas``."""
    name, sep, seats = value.partition("=")
    try:
        if not sep:
            raise ValueError
        return name.strip(), int(seats)
    except ValueError:
        raise InvalidBooking(f"A quota is NAME=N (a whole number of seats), not {value!r}.",
                             field="quotas") from None


def parse_ticket_type(value: str) -> tuple[str, list[str]]:
    """``NAME[:QUOTA,...]``: a ticket type as typed, with the quotas it counts against."""
    name, _, quotas = value.partition(":")
    return name.strip(), [q.strip() for q in quotas.split(",") if q.strip()]


def unique_names(pairs: list[tuple], *, field: str, kind: str) -> dict:
    """``pairs`` as a dict, refusing a name given twice (a dict would keep the last)."""
    names = [name for name, _ in pairs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InvalidBooking(f"{kind} {twice[0]!r} is given twice.", field=field)
    return dict(pairs)
