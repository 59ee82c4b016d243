"""cdk-12: a REST API in API Gateway with a Lambda proxy integration."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_apigateway as apigateway
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

HANDLER = """
import json

def handler(event, context):
    return {"statusCode": 200, "body": json.dumps({"path": event.get("path")})}
"""


class RestApiStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        backend = lambda_.Function(
            self,
            "ApiHandler",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
        )
        api = apigateway.LambdaRestApi(
            self,
            "ItemsApi",
            handler=backend,
            proxy=False,
            deploy_options=apigateway.StageOptions(stage_name="prod", throttling_rate_limit=100),
        )
        items = api.root.add_resource("items")
        items.add_method("GET")
        items.add_method("POST")
        items.add_resource("{itemId}").add_method("GET")


app = App()
RestApiStack(app, "RestApiStack")
app.synth()
