"""cdk-26: a custom EventBridge bus with a rule routing matching events to SQS."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_sqs as sqs
from constructs import Construct


class EventRoutingStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        bus = events.EventBus(self, "CommerceBus", event_bus_name="commerce")
        bus.archive(
            "CommerceArchive",
            event_pattern=events.EventPattern(source=["com.example.orders"]),
            retention=Duration.days(30),
        )
        refunds = sqs.Queue(self, "RefundsQueue")
        events.Rule(
            self,
            "LargeRefunds",
            event_bus=bus,
            event_pattern=events.EventPattern(
                source=["com.example.orders"],
                detail_type=["RefundRequested"],
                detail={"amount": [{"numeric": [">", 100]}]},
            ),
            targets=[targets.SqsQueue(refunds)],
        )


app = App()
EventRoutingStack(app, "EventRoutingStack")
app.synth()
