"""cdk-14: an SQS queue consumed by a Lambda function through an event source mapping."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

HANDLER = """
def handler(event, context):
    failures = []
    for record in event["Records"]:
        if not record["body"]:
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
"""


class QueueWorkerStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        queue = sqs.Queue(self, "JobsQueue", visibility_timeout=Duration.seconds(180))
        worker = lambda_.Function(
            self,
            "JobWorker",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
            timeout=Duration.seconds(30),
        )
        worker.add_event_source(
            sources.SqsEventSource(
                queue,
                batch_size=10,
                max_batching_window=Duration.seconds(5),
                report_batch_item_failures=True,
            )
        )


app = App()
QueueWorkerStack(app, "QueueWorkerStack")
app.synth()
