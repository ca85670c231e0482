"""The local store: AWS's DynamoDB Local, fetched and run for development and tests, with a fault proxy."""
