"""cdk-02: an SQS work queue with a dead-letter queue."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_sqs as sqs
from constructs import Construct


class QueueWithDlqStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        dead_letters = sqs.Queue(
            self,
            "OrdersDlq",
            retention_period=Duration.days(14),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
        )
        sqs.Queue(
            self,
            "OrdersQueue",
            visibility_timeout=Duration.seconds(60),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=3, queue=dead_letters),
        )


app = App()
QueueWithDlqStack(app, "QueueWithDlqStack")
app.synth()
