# expect: python_error TypeError
import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_

app = cdk.App()
stack = cdk.Stack(app, "Functions")
lambda_.Function(stack, "Fn", runtime=lambda_.Runtime.PYTHON_3_12)
app.synth()
