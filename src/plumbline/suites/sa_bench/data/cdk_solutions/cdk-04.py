"""cdk-04: an on-demand DynamoDB table with a composite key and point-in-time recovery."""

from typing import Any

from aws_cdk import App, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct


class OrdersTableStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        dynamodb.TableV2(
            self,
            "OrdersTable",
            partition_key=dynamodb.Attribute(name="customerId", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="orderDate", type=dynamodb.AttributeType.STRING),
            billing=dynamodb.Billing.on_demand(),
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            removal_policy=RemovalPolicy.RETAIN,
        )


app = App()
OrdersTableStack(app, "OrdersTableStack")
app.synth()
