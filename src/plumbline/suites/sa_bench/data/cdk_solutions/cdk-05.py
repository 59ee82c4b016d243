"""cdk-05: a Python Lambda function with inline code."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

HANDLER = """
def handler(event, context):
    return {"statusCode": 200, "body": "hello"}
"""


class HelloFunctionStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        lambda_.Function(
            self,
            "HelloFunction",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
            memory_size=128,
            timeout=Duration.seconds(10),
            environment={"GREETING": "hello"},
        )


app = App()
HelloFunctionStack(app, "HelloFunctionStack")
app.synth()
