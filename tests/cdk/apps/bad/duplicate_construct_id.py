# expect: synth_error
import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs

app = cdk.App()
stack = cdk.Stack(app, "Queues")
sqs.Queue(stack, "Queue")
sqs.Queue(stack, "Queue")
app.synth()
