"""DynamoDB access layer: the only code in the app that imports boto3 or botocore."""
