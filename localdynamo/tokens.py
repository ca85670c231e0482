"""TransactWriteItems ClientRequestToken, as DynamoDB treats it (moto ignores it).

Within 10 minutes of the first successful use of a token, a request with the same token
and the same parameters is the same transaction: it is answered with success again and
changes nothing. The same token with other parameters gets
IdempotentParameterMismatchException. A cancelled transaction does not use up its token
(AWS does not document that case; retrying a cancelled transaction re-evaluates it).
"""
import hashlib
import json
from collections import OrderedDict

from .wire import Call, Response, error_response, json_response

WINDOW_SECONDS = 600.0


def fingerprint(request: dict) -> str:
    """A digest of every parameter but the token itself."""
    rest = {key: value for key, value in request.items() if key != "ClientRequestToken"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()


class TokenTable:
    """Tokens of successful transactions from the last 10 minutes, oldest first."""

    def __init__(self):
        # (account, region, token) -> (fingerprint, completed at, response document)
        self.entries: OrderedDict = OrderedDict()

    def answer(self, call: Call) -> Response | None:
        """The response for a repeated token, or None when the request must run."""
        key, request = _key(call)
        if key is None:
            return None
        self._expire(call.time)
        entry = self.entries.get(key)
        if entry is None:
            return None
        if entry[0] != fingerprint(request):
            return error_response(
                "IdempotentParameterMismatchException",
                "The request uses the same client token as a previous, but non-identical "
                "request.",
            )
        return json_response(entry[2])

    def remember(self, call: Call, payload: bytes) -> None:
        """Record a successful transaction's token (live or replayed from the log)."""
        key, request = _key(call)
        if key is None:
            return
        self._expire(call.time)
        try:
            document = json.loads(payload or b"{}")
        except ValueError:
            document = {}
        self.entries[key] = (fingerprint(request), call.time, document)
        self.entries.move_to_end(key)

    def _expire(self, now: float) -> None:
        while self.entries:
            _, completed_at, _ = next(iter(self.entries.values()))
            if now - completed_at <= WINDOW_SECONDS:
                return
            self.entries.popitem(last=False)


def _key(call: Call):
    if call.operation != "TransactWriteItems":
        return None, None
    request = call.json()
    token = request.get("ClientRequestToken") if request else None
    if not isinstance(token, str) or not token:
        return None, None
    return (call.account, call.region, token), request
