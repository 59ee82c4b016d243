"""cdk-07: an EC2 instance role with read-only S3 access and an instance profile."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct


class InstanceRoleStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        role = iam.Role(
            self,
            "ReportingInstanceRole",
            assumed_by=iam.ServicePrincipal("ec2.amazonaws.com"),
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name("AmazonS3ReadOnlyAccess")
            ],
        )
        iam.InstanceProfile(self, "ReportingInstanceProfile", role=role)


app = App()
InstanceRoleStack(app, "InstanceRoleStack")
app.synth()
