# expect: python_error TypeError
import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs

app = cdk.App()
stack = cdk.Stack(app, "Queues")
sqs.Queue(stack, "Queue", visibility_timeout=30)
app.synth()
