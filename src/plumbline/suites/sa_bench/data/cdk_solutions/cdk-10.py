"""cdk-10: an ECR repository with scan on push and an image lifecycle rule."""

from typing import Any

from aws_cdk import App, RemovalPolicy, Stack
from aws_cdk import aws_ecr as ecr
from constructs import Construct


class ImageRepositoryStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        ecr.Repository(
            self,
            "ServiceImages",
            repository_name="web-service",
            image_scan_on_push=True,
            image_tag_mutability=ecr.TagMutability.IMMUTABLE,
            lifecycle_rules=[ecr.LifecycleRule(max_image_count=10, description="keep 10")],
            removal_policy=RemovalPolicy.RETAIN,
        )


app = App()
ImageRepositoryStack(app, "ImageRepositoryStack")
app.synth()
