"""cdk-25: a Lambda queue consumer whose dead-letter queue depth raises an alarm."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

HANDLER = """
def handler(event, context):
    for record in event["Records"]:
        print(record["body"])
"""


class PoisonMessageStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        dlq = sqs.Queue(self, "InvoicesDlq", retention_period=Duration.days(14))
        queue = sqs.Queue(
            self,
            "InvoicesQueue",
            visibility_timeout=Duration.seconds(120),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=5, queue=dlq),
        )
        consumer = lambda_.Function(
            self,
            "InvoiceConsumer",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
            timeout=Duration.seconds(20),
        )
        consumer.add_event_source(sources.SqsEventSource(queue, batch_size=5))
        alarm = cloudwatch.Alarm(
            self,
            "DlqNotEmpty",
            metric=dlq.metric_approximate_number_of_messages_visible(period=Duration.minutes(5)),
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        )
        alarm.add_alarm_action(actions.SnsAction(sns.Topic(self, "DlqAlerts")))


app = App()
PoisonMessageStack(app, "PoisonMessageStack")
app.synth()
