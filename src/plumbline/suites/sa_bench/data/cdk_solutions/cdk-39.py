"""cdk-39: an ordered pipeline: SNS FIFO topic to an SQS FIFO queue to a throttled Lambda."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

HANDLER = """
def handler(event, context):
    for record in event["Records"]:
        print(record["attributes"]["MessageGroupId"], record["body"])
"""


class OrderedLedgerStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        topic = sns.Topic(self, "LedgerEvents", fifo=True, content_based_deduplication=True)
        dlq = sqs.Queue(self, "LedgerDlq", fifo=True)
        queue = sqs.Queue(
            self,
            "LedgerQueue",
            fifo=True,
            content_based_deduplication=True,
            deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
            fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
            visibility_timeout=Duration.seconds(90),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=4, queue=dlq),
        )
        topic.add_subscription(subscriptions.SqsSubscription(queue, raw_message_delivery=True))
        writer = lambda_.Function(
            self,
            "LedgerWriter",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
            timeout=Duration.seconds(15),
            reserved_concurrent_executions=5,
        )
        writer.add_event_source(sources.SqsEventSource(queue, batch_size=10))


app = App()
OrderedLedgerStack(app, "OrderedLedgerStack")
app.synth()
