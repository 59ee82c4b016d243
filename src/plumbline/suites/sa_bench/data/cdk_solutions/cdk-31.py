"""cdk-31: an Express Step Functions workflow with a Map state, retries, a catch and logging."""

from typing import Any

from aws_cdk import App, Duration, RemovalPolicy, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

RESIZE = """
def handler(event, context):
    return {"key": event["key"], "resized": True}
"""


class BatchResizeStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        resize_fn = lambda_.Function(
            self,
            "ResizeFn",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(RESIZE),
            timeout=Duration.seconds(30),
        )
        resize = tasks.LambdaInvoke(
            self, "ResizeImage", lambda_function=resize_fn, output_path="$.Payload"
        )
        resize.add_retry(
            errors=["Lambda.TooManyRequestsException", "States.Timeout"],
            interval=Duration.seconds(2),
            max_attempts=3,
            backoff_rate=2,
        )
        failed = sfn.Pass(self, "RecordFailure", result=sfn.Result.from_object({"resized": False}))
        resize.add_catch(failed, errors=["States.ALL"], result_path="$.error")

        fan_out = sfn.Map(self, "ForEachImage", items_path="$.images", max_concurrency=10)
        fan_out.item_processor(resize)
        log_group = logs.LogGroup(
            self,
            "WorkflowLogs",
            retention=logs.RetentionDays.TWO_WEEKS,
            removal_policy=RemovalPolicy.DESTROY,
        )
        sfn.StateMachine(
            self,
            "BatchResize",
            state_machine_type=sfn.StateMachineType.EXPRESS,
            definition_body=sfn.DefinitionBody.from_chainable(
                fan_out.next(sfn.Succeed(self, "Done"))
            ),
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL),
            tracing_enabled=True,
        )


app = App()
BatchResizeStack(app, "BatchResizeStack")
app.synth()
