"""cdk-03: an SNS topic with an email subscription."""

from typing import Any

from aws_cdk import App, CfnOutput, Stack
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct


class AlertsTopicStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        topic = sns.Topic(self, "OpsAlerts", display_name="Operations alerts")
        topic.add_subscription(subscriptions.EmailSubscription("ops@example.com"))
        CfnOutput(self, "TopicArn", value=topic.topic_arn)


app = App()
AlertsTopicStack(app, "AlertsTopicStack")
app.synth()
