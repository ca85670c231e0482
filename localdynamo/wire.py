"""DynamoDB requests as the server sees them: what they are, and how to run them on moto.

A ``Call`` is one DynamoDB API request reduced to what replaying it needs: the operation,
the JSON body exactly as received, and the region and account moto filed it under. No
credential or signature is kept, so the log on disk holds no secrets.
"""
import json
import os
import uuid
import zlib
from dataclasses import dataclass, field

from moto.core.responses import BaseResponse
from werkzeug.test import EnvironBuilder

API_PREFIX = "DynamoDB_20120810"
DEFAULT_REGION = "us-east-1"

# Everything else under DynamoDB_20120810 is logged: logging a request that changed
# nothing costs a little disk, forgetting one that did change something loses data.
READ_ONLY = frozenset({
    "BatchGetItem", "DescribeBackup", "DescribeContinuousBackups",
    "DescribeContributorInsights", "DescribeEndpoints", "DescribeExport",
    "DescribeGlobalTable", "DescribeImport", "DescribeKinesisStreamingDestination",
    "DescribeLimits", "DescribeTable", "DescribeTableReplicaAutoScaling",
    "DescribeTimeToLive", "GetItem", "GetResourcePolicy", "ListBackups",
    "ListContributorInsights", "ListExports", "ListGlobalTables", "ListImports",
    "ListTables", "ListTagsOfResource", "Query", "Scan", "TransactGetItems",
})


@dataclass
class Call:
    """One DynamoDB API request: operation name, raw JSON body, region, account, time."""

    operation: str
    body: bytes
    region: str
    account: str
    time: float
    seq: int = 0

    @property
    def mutating(self) -> bool:
        return self.operation not in READ_ONLY

    def encode(self) -> bytes:
        """Serialize for the log: a JSON header line, then the body bytes untouched."""
        header = {"seq": self.seq, "time": self.time, "op": self.operation,
                  "region": self.region, "account": self.account}
        return json.dumps(header, separators=(",", ":")).encode() + b"\n" + self.body

    @classmethod
    def decode(cls, payload: bytes) -> "Call":
        header, _, body = payload.partition(b"\n")
        fields = json.loads(header)
        return cls(fields["op"], body, fields["region"], fields["account"], fields["time"],
                   fields["seq"])

    def json(self) -> dict | None:
        """The body as JSON, or None when it is not a JSON object (moto will say why)."""
        try:
            value = json.loads(self.body or b"{}")
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass
class Response:
    status: str  # "200 OK"
    headers: list = field(default_factory=list)
    payload: bytes = b""

    @property
    def ok(self) -> bool:
        return self.status.startswith("2")


def run_wsgi(app, environ) -> Response:
    """Run a WSGI app to completion and collect its whole response."""
    captured = {}

    def capture(status, headers, exc_info=None):
        captured["status"], captured["headers"] = status, headers
        return lambda data: None

    chunks = app(environ, capture)
    try:
        payload = b"".join(chunks)
    finally:
        getattr(chunks, "close", lambda: None)()
    return Response(captured["status"], captured["headers"], payload)


def json_response(document: dict, status: str = "200 OK") -> Response:
    """A DynamoDB-shaped JSON response, with the CRC-32 header botocore checks."""
    payload = json.dumps(document).encode()
    headers = [
        ("Content-Type", "application/x-amz-json-1.0"),
        ("x-amzn-RequestId", uuid.uuid4().hex.upper()),
        ("x-amz-crc32", str(zlib.crc32(payload))),
        ("Content-Length", str(len(payload))),
    ]
    return Response(status, headers, payload)


def error_response(code: str, message: str, status: str = "400 Bad Request") -> Response:
    return json_response({"__type": f"com.amazonaws.dynamodb.v20120810#{code}",
                          "message": message}, status)


def call_from_environ(environ, body: bytes, now: float) -> Call | None:
    """The DynamoDB call in a live request, or None for anything else (streams, S3, ...)."""
    prefix, _, operation = environ.get("HTTP_X_AMZ_TARGET", "").partition(".")
    if prefix != API_PREFIX or not operation:
        return None
    return Call(operation, body, request_region(environ), request_account(environ), now)


def request_region(environ) -> str:
    """The region moto files the request under, found the way moto finds it."""
    url = f"http://{environ.get('HTTP_HOST', '')}{environ.get('PATH_INFO', '')}"
    for text, pattern in ((url, BaseResponse.region_regex),
                          (environ.get("HTTP_USER_AGENT", ""),
                           BaseResponse.region_from_useragent_regex)):
        match = pattern.search(text)
        if match:
            return match.group(1)
    auth = environ.get("HTTP_AUTHORIZATION", "")
    if "AWS4" in auth:
        try:
            return auth.split(",")[0].split("/")[2]
        except IndexError:
            pass
    return DEFAULT_REGION


def request_account(environ) -> str:
    """The account moto files the request under (same precedence as moto)."""
    if "MOTO_ACCOUNT_ID" in os.environ:
        return os.environ["MOTO_ACCOUNT_ID"]
    if environ.get("HTTP_X_MOTO_ACCOUNT_ID"):
        return environ["HTTP_X_MOTO_ACCOUNT_ID"]
    from moto.iam.models import get_account_id_from

    match = BaseResponse.access_key_regex.search(environ.get("HTTP_AUTHORIZATION", ""))
    return get_account_id_from(match.group(1) if match else "AKIAEXAMPLE")


def environ_for(call: Call) -> dict:
    """A WSGI environ that makes moto apply ``call`` in its region and account again."""
    scope = f"replay/20000101/{call.region}/dynamodb/aws4_request"
    builder = EnvironBuilder(method="POST", path="/", data=call.body, headers={
        "Host": "localhost",
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": f"{API_PREFIX}.{call.operation}",
        "Authorization": f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders=host, "
                         "Signature=0",
        "X-Moto-Account-Id": call.account,
    })
    try:
        return builder.get_environ()
    finally:
        builder.close()
