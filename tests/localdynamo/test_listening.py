"""DynamoDB Local listens on the address asked for, not on every interface of the machine."""
from pathlib import Path

WILDCARDS = {"00000000", "00000000000000000000000000000000"}
LISTEN = "0A"


def listening_addresses(port):
    """(address hex, family file) of every socket listening on ``port``, from /proc/net."""
    found = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, port_hex = local.partition(":")
            if state == LISTEN and int(port_hex, 16) == port:
                found.append((address, table))
    return found


def test_store__listens_on_127_0_0_1_only(local_server):
    port = int(local_server.url.rsplit(":", 1)[1])

    found = listening_addresses(port)

    assert found, "nothing listens on the store's port"
    assert not [address for address, _ in found if address in WILDCARDS], found
