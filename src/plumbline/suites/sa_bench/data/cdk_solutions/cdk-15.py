"""cdk-15: SNS fan-out to two SQS queues, one of them filtered by a message attribute."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct


class FanOutStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        topic = sns.Topic(self, "OrderEvents")
        billing = sqs.Queue(self, "BillingQueue")
        shipping = sqs.Queue(self, "ShippingQueue")
        topic.add_subscription(subscriptions.SqsSubscription(billing, raw_message_delivery=True))
        topic.add_subscription(
            subscriptions.SqsSubscription(
                shipping,
                raw_message_delivery=True,
                filter_policy={
                    "eventType": sns.SubscriptionFilter.string_filter(allowlist=["OrderPaid"])
                },
            )
        )


app = App()
FanOutStack(app, "FanOutStack")
app.synth()
