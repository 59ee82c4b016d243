# expect: synth_error
import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_

app = cdk.App()
stack = cdk.Stack(app, "Assets")
lambda_.Function(
    stack,
    "Fn",
    runtime=lambda_.Runtime.PYTHON_3_12,
    handler="index.handler",
    code=lambda_.Code.from_asset("lambda_src"),
)
app.synth()
