"""cdk-06: a CloudWatch log group with retention and a metric filter."""

from typing import Any

from aws_cdk import App, RemovalPolicy, Stack
from aws_cdk import aws_logs as logs
from constructs import Construct


class AppLogsStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        group = logs.LogGroup(
            self,
            "ApplicationLogs",
            log_group_name="/app/web",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        logs.MetricFilter(
            self,
            "ErrorCount",
            log_group=group,
            metric_namespace="WebApp",
            metric_name="Errors",
            filter_pattern=logs.FilterPattern.any_term("ERROR"),
            metric_value="1",
        )


app = App()
AppLogsStack(app, "AppLogsStack")
app.synth()
