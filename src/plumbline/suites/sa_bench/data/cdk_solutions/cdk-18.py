"""cdk-18: a Step Functions workflow with two Lambda tasks and a choice state."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

VALIDATE = """
def handler(event, context):
    return {"valid": bool(event.get("orderId")), "order": event}
"""

FULFIL = """
def handler(event, context):
    return {"status": "fulfilled", "orderId": event["order"]["orderId"]}
"""


class OrderWorkflowStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)

        def function(name: str, code: str) -> lambda_.Function:
            return lambda_.Function(
                self,
                name,
                runtime=lambda_.Runtime.PYTHON_3_12,
                handler="index.handler",
                code=lambda_.Code.from_inline(code),
            )

        validate = tasks.LambdaInvoke(
            self,
            "Validate",
            lambda_function=function("ValidateFn", VALIDATE),
            output_path="$.Payload",
        )
        fulfil = tasks.LambdaInvoke(
            self, "Fulfil", lambda_function=function("FulfilFn", FULFIL), output_path="$.Payload"
        )
        rejected = sfn.Fail(self, "Rejected", error="InvalidOrder", cause="order failed validation")
        definition = validate.next(
            sfn.Choice(self, "IsValid?")
            .when(sfn.Condition.boolean_equals("$.valid", True), fulfil)
            .otherwise(rejected)
        )
        sfn.StateMachine(
            self,
            "OrderStateMachine",
            definition_body=sfn.DefinitionBody.from_chainable(definition),
            timeout=Duration.minutes(5),
        )


app = App()
OrderWorkflowStack(app, "OrderWorkflowStack")
app.synth()
