"""Build a boto3 DynamoDB client from a ``ClientConfig`` (``booking.wiring`` makes the
config from settings; nothing here reads them)."""
import os
from typing import Any
from dataclasses import dataclass

import boto3
from botocore.config import Config

# The local store accepts any key; these are not credentials.
_LOCAL_DUMMY_KEY = "local"
# A fixed User-Agent: without one botocore builds it anew twice for every request (its
# platform, configuration and feature parts, each sanitized character by character), about
# a tenth of a store call's CPU in the web process (docs/benchmarks.md, "One person at a
# time"). AWS reads it as telemetry only.
USER_AGENT = f"event-booking Boto3/{boto3.__version__}"  # boto3 adds " Botocore/<version>"
# botocore's check of each request's shape against the service model before sending
# (botocore documents turning it off for speed): every request here is built by the
# access layer from values the input rules (booking/validation.py) cleaned, and DynamoDB
# checks each one again itself (ValidationException, a ClientError like any other refusal
# of the store). About a tenth of a booking's CPU in the web process, measured.
VALIDATE_PARAMETERS = False


@dataclass(frozen=True)
class ClientConfig:
    """How to reach DynamoDB: ``endpoint_url`` empty means AWS itself."""
    endpoint_url: str = ""
    region: str = "us-east-1"
    connect_timeout: float = 2.0
    read_timeout: float = 5.0
    retry_mode: str = "standard"
    max_attempts: int = 4
    max_pool_connections: int = 50

    def options(self) -> dict:
        """The keyword arguments for ``boto3.client('dynamodb')``."""
        retries: Any = {"mode": self.retry_mode, "total_max_attempts": self.max_attempts}
        options: dict[str, Any] = {
            "region_name": self.region,
            "config": Config(
                connect_timeout=self.connect_timeout,
                read_timeout=self.read_timeout,
                retries=retries,
                max_pool_connections=self.max_pool_connections,
                user_agent=USER_AGENT,
                parameter_validation=VALIDATE_PARAMETERS,
            ),
        }
        if self.endpoint_url:
            options["endpoint_url"] = self.endpoint_url
            if not os.environ.get("AWS_ACCESS_KEY_ID"):
                options["aws_access_key_id"] = _LOCAL_DUMMY_KEY
                options["aws_secret_access_key"] = _LOCAL_DUMMY_KEY
        return options


def make_client(config: ClientConfig, service_name: str = "dynamodb", *,
                session: boto3.session.Session | None = None) -> Any:
    """A new client (thread-safe to share), in its own boto3 session unless one is given
    (a session that made one client makes the next much faster: its models are loaded)."""
    maker: Any = session or boto3.session.Session()  # the stubs know each service by name
    return maker.client(service_name, **config.options())
