# expect: python_error AttributeError
import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_

app = cdk.App()
stack = cdk.Stack(app, "Fns")
lambda_.Function(
    stack,
    "Fn",
    runtime=lambda_.Runtime.PYTHON_2_5,
    handler="index.handler",
    code=lambda_.Code.from_inline("def handler(e, c): pass"),
)
app.synth()
