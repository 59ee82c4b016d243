"""cdk-01: a private, versioned, encrypted S3 bucket."""

from typing import Any

from aws_cdk import App, CfnOutput, RemovalPolicy, Stack
from aws_cdk import aws_s3 as s3
from constructs import Construct


class VersionedBucketStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        bucket = s3.Bucket(
            self,
            "DocumentsBucket",
            versioned=True,
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            removal_policy=RemovalPolicy.RETAIN,
        )
        CfnOutput(self, "BucketName", value=bucket.bucket_name)


app = App()
VersionedBucketStack(app, "VersionedBucketStack")
app.synth()
