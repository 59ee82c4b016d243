import os

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_sqs as sqs

app = cdk.App()
stack = cdk.Stack(
    app,
    "OrdersStack",
    env=cdk.Environment(
        account=os.environ["CDK_DEFAULT_ACCOUNT"], region=os.environ["CDK_DEFAULT_REGION"]
    ),
)
dlq = sqs.Queue(stack, "Dead", retention_period=cdk.Duration.days(14))
sqs.Queue(
    stack,
    "Orders",
    visibility_timeout=cdk.Duration.seconds(60),
    dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=3, queue=dlq),
)
dynamodb.Table(
    stack,
    "Table",
    partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING),
    billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
)
app.synth()
