"""Where a webhook may go: public unicast addresses only, checked at registration and again
at every attempt, and the connection that goes to the very address that was checked.

``PublicUrls`` is the product's rule for endpoint URLs (docs/webhooks.md):

- ``https://`` with a host name or address, no user name or password;
- port 443 (the default) or 1024-65535;
- the host's every address is public unicast (``is_global``, and not multicast, reserved,
  loopback, link-local, private, unspecified, shared 100.64/10, nor an IPv6 form that
  carries such an IPv4 address: mapped, compatible, 6to4, NAT64). Numeric hosts are read
  as ``inet_aton`` reads them (``127.1``, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``),
  since that is what a resolver would connect to; names are resolved at every delivery
  (never at registration, in the web process), and a name that does not resolve is
  refused then, logged as one that is not public.

Every refusal at registration says the same (``UNUSABLE``), naming WEBHOOK_ALLOWED_HOSTS
for operators, so the form and the API are no oracle for host names.

``allowed_hosts`` (the ``WEBHOOK_ALLOWED_HOSTS`` setting, for development) names hosts
taken as they are: any address, any port, and ``http://`` too. ``target`` resolves once and returns
the checked addresses; ``http_post`` (``booking.webhooks.delivery``) connects to one of
them, never looking the name up again, so DNS that changes between the check and the
connection cannot send it elsewhere.
"""
import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

# One log text for a host that resolves to no public address and one that does not
# resolve: the delivery log tells an organizer nothing about names inside the network.
NOT_PUBLIC = "refused: not a public address"
NOT_RESOLVED = NOT_PUBLIC
BAD_URL = "refused: not an allowed URL"
PORTS = "443 or 1024-65535"
# One refusal for every URL that cannot be used, whatever the reason: which names exist,
# and which lie inside the network, is nobody's to learn from the form or the API.
UNUSABLE = ("This URL cannot receive webhooks. Use https:// to a public internet host "
            f"(port {PORTS}, no user name or password). An operator can allow other "
            "hosts, such as a development machine, with the WEBHOOK_ALLOWED_HOSTS setting.")
_NUMERIC = re.compile(r"^[0-9a-fA-FxX.]+$")
_NAME = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$")


class Refused(ValueError):
    """A URL the rule refuses: ``message`` for the organizer, ``log`` for the delivery log
    (a few fixed words: never what a connection attempt found)."""

    def __init__(self, message: str, log: str = BAD_URL):
        super().__init__(message)
        self.message, self.log = message, log


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (``addresses``) and what to say to it."""

    url: str
    scheme: str
    host: str  # for SNI, the certificate and the Host header
    port: int
    path: str  # with the query
    addresses: tuple[str, ...]  # every one checked; connect to these, in order

    def __str__(self) -> str:
        return self.url


def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses, by the system's resolver (``OSError`` if it has none)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in found))


def numeric_address(host: str):
    """The address a numeric host spells (in any spelling ``inet_aton`` takes), or None."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if not _NUMERIC.match(host):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def is_public(address) -> bool:
    """Public unicast: what anyone on the internet could reach, and nothing else."""
    address = ipaddress.ip_address(address)
    if (not address.is_global or address.is_multicast or address.is_reserved
            or address.is_loopback or address.is_link_local or address.is_private
            or address.is_unspecified):
        return False
    if address.version == 6:
        embedded = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
        if address in ipaddress.ip_network("::/96") or address in ipaddress.ip_network("64:ff9b::/96"):
            embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        return all(is_public(v4) for v4 in embedded if v4 is not None)
    return True


class PublicUrls:
    """The product's rule for endpoint URLs; ``resolver(host, port)`` gives a name's
    addresses (``system_resolver`` unless a test's)."""

    schemes = ("https",)

    def __init__(self, *, allowed_hosts=(), resolver=None):
        self.allowed_hosts = frozenset(h.strip().lower().strip("[]") for h in allowed_hosts
                                       if h.strip())
        self.resolver = resolver or system_resolver

    def refusal(self, url: str) -> str | None:
        """``UNUSABLE`` if ``url`` is refused by what it says (scheme, user name, port, a
        host that is no name, an address that is not public), or None. A host name is
        not resolved here (the web process looks up no name an organizer chooses): every
        delivery resolves and checks it (``target``), and refuses it then."""
        try:
            self.target(url, resolve=False)
        except Refused:
            return UNUSABLE
        return None

    def target(self, url: str, *, resolve: bool = True) -> Target:
        """``url`` checked, its host resolved once; ``Refused`` if it may not be used
        (``resolve=False``: a name is checked as a name only, ``addresses`` empty)."""
        parts = urlsplit(url)
        host = _ascii(parts.hostname or "")
        allowed = host in self.allowed_hosts
        if parts.scheme not in (*self.schemes, *(("http",) if allowed else ())) or not host:
            raise Refused("Enter an https:// URL with a host name.")
        if parts.username or parts.password:
            raise Refused("The URL must not carry a user name or password.")
        port = _port(parts, allowed)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if not resolve and numeric_address(host) is None:
            if not _NAME.match(host) or (not allowed and _special_name(host)):
                raise Refused("Enter a valid host name.")
            return Target(url=url, scheme=parts.scheme, host=host, port=port, path=path,
                          addresses=())
        addresses = self._addresses(host, port, allowed)
        return Target(url=url, scheme=parts.scheme, host=host, port=port, path=path,
                      addresses=addresses)

    def _addresses(self, host: str, port: int, allowed: bool) -> tuple[str, ...]:
        numeric = numeric_address(host)
        if numeric is not None:
            found = [str(numeric)]
        elif not _NAME.match(host):
            raise Refused("Enter a valid host name.")
        else:
            try:
                found = list(self.resolver(host, port))
            except (OSError, UnicodeError):
                found = []
            if not found:
                raise Refused(UNUSABLE, log=NOT_RESOLVED)
        if not allowed and not all(_public_text(a) for a in found):
            raise Refused(UNUSABLE, log=NOT_PUBLIC)
        return tuple(found)


# Names that never lead to the public internet (RFC 6761, 6762, 8375 and the clouds'
# metadata names): refused by their spelling alone, no lookup needed.
_SPECIAL_SUFFIXES = ("localhost", "local", "localdomain", "internal", "home.arpa")


def _special_name(host: str) -> bool:
    host = host.rstrip(".")
    return any(host == s or host.endswith("." + s) for s in _SPECIAL_SUFFIXES)


def _ascii(host: str) -> str:
    """The host in ASCII (an internationalized name in its IDNA form); "" if it has none."""
    host = host.lower()
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return ""


def _public_text(address: str) -> bool:
    try:
        return is_public(address)
    except ValueError:
        return False


def _port(parts, allowed: bool) -> int:
    try:
        port = parts.port
    except ValueError:  # out of 0-65535, or not a number
        port = -1
    if port is None:
        return 443 if parts.scheme == "https" else 80
    if port != 443 and not 1024 <= port <= 65535 and not (allowed and 0 < port):
        raise Refused(f"Use port {PORTS}.")
    return port
