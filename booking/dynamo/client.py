"""Build the boto3 DynamoDB client from settings, once per process and configuration."""
import os
import threading

import boto3
from botocore.config import Config
from django.conf import settings

_clients = {}
_lock = threading.Lock()

# The embedded server accepts any key; these are not credentials.
_LOCAL_DUMMY_KEY = "local"


def client_options() -> dict:
    """Return the keyword arguments for boto3.client('dynamodb'), read from settings now."""
    options = {
        "region_name": settings.AWS_REGION,
        "config": Config(
            connect_timeout=settings.DYNAMODB_CONNECT_TIMEOUT,
            read_timeout=settings.DYNAMODB_READ_TIMEOUT,
            retries={
                "mode": settings.DYNAMODB_RETRY_MODE,
                "total_max_attempts": settings.DYNAMODB_MAX_ATTEMPTS,
            },
            max_pool_connections=settings.DYNAMODB_MAX_POOL_CONNECTIONS,
        ),
    }
    endpoint = settings.DYNAMODB_ENDPOINT_URL
    if endpoint:
        options["endpoint_url"] = endpoint
        if not os.environ.get("AWS_ACCESS_KEY_ID"):
            options["aws_access_key_id"] = _LOCAL_DUMMY_KEY
            options["aws_secret_access_key"] = _LOCAL_DUMMY_KEY
    return options


def get_client():
    """Return this process's DynamoDB client for the current settings (thread-safe)."""
    key = (
        settings.DYNAMODB_ENDPOINT_URL,
        settings.AWS_REGION,
        settings.DYNAMODB_CONNECT_TIMEOUT,
        settings.DYNAMODB_READ_TIMEOUT,
        settings.DYNAMODB_RETRY_MODE,
        settings.DYNAMODB_MAX_ATTEMPTS,
        settings.DYNAMODB_MAX_POOL_CONNECTIONS,
    )
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = boto3.session.Session().client("dynamodb", **client_options())
            _clients[key] = client
        return client


def get_streams_client():
    """Return this process's DynamoDB Streams client for the current settings (thread-safe)."""
    key = ("dynamodbstreams", settings.DYNAMODB_ENDPOINT_URL, settings.AWS_REGION,
           settings.DYNAMODB_CONNECT_TIMEOUT, settings.DYNAMODB_READ_TIMEOUT,
           settings.DYNAMODB_RETRY_MODE, settings.DYNAMODB_MAX_ATTEMPTS)
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = boto3.session.Session().client("dynamodbstreams", **client_options())
            _clients[key] = client
        return client


def reset_clients() -> None:
    """Forget cached clients (tests start a new mock or server)."""
    with _lock:
        _clients.clear()
