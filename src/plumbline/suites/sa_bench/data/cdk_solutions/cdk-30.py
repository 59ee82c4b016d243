"""cdk-30: an aspect that enforces versioning on every bucket, plus app-wide tags."""

from typing import Any

import jsii
from aws_cdk import Annotations, App, Aspects, IAspect, Stack, Tags
from aws_cdk import aws_s3 as s3
from constructs import Construct, IConstruct


@jsii.implements(IAspect)
class EnforceBucketVersioning:
    """Turn on versioning for every S3 bucket and record a warning when it was off."""

    def visit(self, node: IConstruct) -> None:
        if isinstance(node, s3.CfnBucket):
            configuration = node.versioning_configuration
            if configuration is None:
                Annotations.of(node).add_warning_v2(
                    "plumbline:versioning", "versioning was off; the aspect enabled it"
                )
                node.versioning_configuration = s3.CfnBucket.VersioningConfigurationProperty(
                    status="Enabled"
                )


class GovernedStorageStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        s3.Bucket(self, "Invoices", block_public_access=s3.BlockPublicAccess.BLOCK_ALL)
        s3.Bucket(
            self, "Exports", versioned=True, block_public_access=s3.BlockPublicAccess.BLOCK_ALL
        )


app = App()
stack = GovernedStorageStack(app, "GovernedStorageStack")
Aspects.of(app).add(EnforceBucketVersioning())
Tags.of(app).add("cost-center", "finance")
Tags.of(app).add("owner", "platform-team")
app.synth()
