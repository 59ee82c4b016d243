"""cdk-13: a Lambda function with read/write access to a DynamoDB table."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

HANDLER = """
import os
import boto3

table = boto3.resource("dynamodb").Table(os.environ["TABLE_NAME"])

def handler(event, context):
    table.put_item(Item={"sessionId": event["sessionId"], "user": event["user"]})
    return table.get_item(Key={"sessionId": event["sessionId"]}).get("Item")
"""


class SessionStoreStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        table = dynamodb.Table(
            self,
            "Sessions",
            partition_key=dynamodb.Attribute(name="sessionId", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            time_to_live_attribute="expiresAt",
        )
        function = lambda_.Function(
            self,
            "SessionFunction",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
            environment={"TABLE_NAME": table.table_name},
        )
        table.grant_read_write_data(function)


app = App()
SessionStoreStack(app, "SessionStoreStack")
app.synth()
