"""Build a boto3 DynamoDB client from a ``ClientConfig`` (``booking.wiring`` makes the
config from settings; nothing here reads them)."""
import os
from dataclasses import dataclass

import boto3
from botocore.config import Config

# The local store accepts any key; these are not credentials.
_LOCAL_DUMMY_KEY = "local"


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
        options = {
            "region_name": self.region,
            "config": Config(
                connect_timeout=self.connect_timeout,
                read_timeout=self.read_timeout,
                retries={"mode": self.retry_mode, "total_max_attempts": self.max_attempts},
                max_pool_connections=self.max_pool_connections,
            ),
        }
        if self.endpoint_url:
            options["endpoint_url"] = self.endpoint_url
            if not os.environ.get("AWS_ACCESS_KEY_ID"):
                options["aws_access_key_id"] = _LOCAL_DUMMY_KEY
                options["aws_secret_access_key"] = _LOCAL_DUMMY_KEY
        return options


def make_client(config: ClientConfig, service_name: str = "dynamodb", *, session=None):
    """A new client (thread-safe to share), in its own boto3 session unless one is given
    (a session that made one client makes the next much faster: its models are loaded)."""
    return (session or boto3.session.Session()).client(service_name, **config.options())
