"""cdk-17: an EventBridge schedule that invokes a Lambda function every five minutes."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

HANDLER = """
def handler(event, context):
    print("health check at", event["time"])
"""


class ScheduledJobStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        job = lambda_.Function(
            self,
            "HealthCheck",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
        )
        events.Rule(
            self,
            "EveryFiveMinutes",
            schedule=events.Schedule.rate(Duration.minutes(5)),
            targets=[targets.LambdaFunction(job, retry_attempts=2)],
        )


app = App()
ScheduledJobStack(app, "ScheduledJobStack")
app.synth()
