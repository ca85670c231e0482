"""The embedded local DynamoDB server (infrastructure for development and tests)."""
