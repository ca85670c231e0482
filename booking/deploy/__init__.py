"""Deployment artifacts generated from the code: the AWS CloudFormation template
(``template.py``, written by ``manage.py aws_template`` to ``deploy/aws/template.yaml``).

Nothing here runs in the product: it reads the table definitions
(``booking/dynamo/tables.py``) and the operations each process issues
(``booking/dynamo/permissions.py``) and turns them into infrastructure as code.
"""
