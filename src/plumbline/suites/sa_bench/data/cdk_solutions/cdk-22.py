"""cdk-22: a Kinesis data stream consumed by a Lambda function."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_kinesis as kinesis
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct

HANDLER = """
import base64

def handler(event, context):
    for record in event["Records"]:
        print(base64.b64decode(record["kinesis"]["data"]))
"""


class ClickstreamStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        stream = kinesis.Stream(
            self,
            "Clickstream",
            shard_count=2,
            retention_period=Duration.hours(48),
            encryption=kinesis.StreamEncryption.MANAGED,
        )
        consumer = lambda_.Function(
            self,
            "ClickConsumer",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
        )
        consumer.add_event_source(
            sources.KinesisEventSource(
                stream,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=100,
                retry_attempts=3,
                bisect_batch_on_error=True,
            )
        )


app = App()
ClickstreamStack(app, "ClickstreamStack")
app.synth()
