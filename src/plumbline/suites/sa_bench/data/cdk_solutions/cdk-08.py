"""cdk-08: a customer-managed KMS key with rotation, an alias and an encrypted bucket."""

from typing import Any

from aws_cdk import App, Duration, RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct


class EncryptionKeyStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        key = kms.Key(
            self,
            "DataKey",
            enable_key_rotation=True,
            pending_window=Duration.days(30),
            removal_policy=RemovalPolicy.RETAIN,
        )
        key.add_alias("alias/app-data")
        s3.Bucket(
            self,
            "EncryptedBucket",
            encryption=s3.BucketEncryption.KMS,
            encryption_key=key,
            bucket_key_enabled=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        )


app = App()
EncryptionKeyStack(app, "EncryptionKeyStack")
app.synth()
