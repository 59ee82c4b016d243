"""cdk-27: a DynamoDB stream processed by a Lambda function with a filter."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct

HANDLER = """
def handler(event, context):
    for record in event["Records"]:
        print(record["eventName"], record["dynamodb"].get("NewImage"))
"""


class ChangeFeedStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        table = dynamodb.Table(
            self,
            "Inventory",
            partition_key=dynamodb.Attribute(name="sku", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
        )
        processor = lambda_.Function(
            self,
            "InventoryChanges",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
        )
        processor.add_event_source(
            sources.DynamoEventSource(
                table,
                starting_position=lambda_.StartingPosition.LATEST,
                batch_size=50,
                retry_attempts=2,
                filters=[
                    lambda_.FilterCriteria.filter(
                        {"eventName": lambda_.FilterRule.is_equal("MODIFY")}
                    )
                ],
            )
        )


app = App()
ChangeFeedStack(app, "ChangeFeedStack")
app.synth()
