"""cdk-29: a reusable SecureBucket construct instantiated twice with different settings."""

from typing import Any

from aws_cdk import App, Duration, RemovalPolicy, Stack
from aws_cdk import aws_s3 as s3
from constructs import Construct


class SecureBucket(Construct):
    """A private, TLS-only, versioned bucket whose noncurrent versions expire."""

    def __init__(
        self, scope: Construct, construct_id: str, *, noncurrent_days: int, archive: bool
    ) -> None:
        super().__init__(scope, construct_id)
        transitions = (
            [
                s3.Transition(
                    storage_class=s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
                    transition_after=Duration.days(90),
                )
            ]
            if archive
            else None
        )
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            versioned=True,
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            removal_policy=RemovalPolicy.RETAIN,
            lifecycle_rules=[
                s3.LifecycleRule(
                    noncurrent_version_expiration=Duration.days(noncurrent_days),
                    transitions=transitions,
                )
            ],
        )


class StorageStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        SecureBucket(self, "Reports", noncurrent_days=30, archive=True)
        SecureBucket(self, "Scratch", noncurrent_days=7, archive=False)


app = App()
StorageStack(app, "StorageStack")
app.synth()
