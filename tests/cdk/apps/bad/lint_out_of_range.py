# expect: lint_error
import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs

app = cdk.App()
stack = cdk.Stack(app, "RawQueue")
sqs.CfnQueue(stack, "Queue", visibility_timeout=99999)
app.synth()
