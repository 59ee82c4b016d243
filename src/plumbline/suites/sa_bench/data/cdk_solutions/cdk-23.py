"""cdk-23: a CloudWatch alarm on Lambda errors that notifies an SNS topic."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from constructs import Construct

HANDLER = """
def handler(event, context):
    return "ok"
"""


class MonitoredFunctionStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        function = lambda_.Function(
            self,
            "PaymentsFunction",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
        )
        topic = sns.Topic(self, "OnCall")
        alarm = cloudwatch.Alarm(
            self,
            "PaymentsErrors",
            metric=function.metric_errors(period=Duration.minutes(1)),
            threshold=5,
            evaluation_periods=3,
            datapoints_to_alarm=2,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(actions.SnsAction(topic))


app = App()
MonitoredFunctionStack(app, "MonitoredFunctionStack")
app.synth()
