# expect: python_error ImportError
from aws_cdk import core
from aws_cdk import aws_s3 as s3

app = core.App()
stack = core.Stack(app, "V1Stack")
s3.Bucket(stack, "Bucket")
app.synth()
