"""cdk-32: Aurora Serverless v2 PostgreSQL behind RDS Proxy, used by a Lambda in the VPC."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_rds as rds
from constructs import Construct

HANDLER = """
import os

def handler(event, context):
    return {"proxy": os.environ["PROXY_ENDPOINT"]}
"""


class ServerlessDatabaseStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        vpc = ec2.Vpc(self, "Vpc", max_azs=2, nat_gateways=1)
        cluster = rds.DatabaseCluster(
            self,
            "Aurora",
            engine=rds.DatabaseClusterEngine.aurora_postgres(
                version=rds.AuroraPostgresEngineVersion.VER_16_4
            ),
            writer=rds.ClusterInstance.serverless_v2("writer"),
            readers=[rds.ClusterInstance.serverless_v2("reader", scale_with_writer=True)],
            serverless_v2_min_capacity=0.5,
            serverless_v2_max_capacity=8,
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            storage_encrypted=True,
            default_database_name="app",
        )
        function_sg = ec2.SecurityGroup(self, "FunctionSg", vpc=vpc)
        proxy = cluster.add_proxy(
            "Proxy",
            secrets=[cluster.secret] if cluster.secret else [],
            vpc=vpc,
            require_tls=True,
            idle_client_timeout=Duration.minutes(10),
        )
        function = lambda_.Function(
            self,
            "ApiFunction",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            security_groups=[function_sg],
            environment={"PROXY_ENDPOINT": proxy.endpoint},
        )
        proxy.grant_connect(function, "postgres")
        proxy.connections.allow_from(function_sg, ec2.Port.tcp(5432), "Lambda to RDS Proxy")
        cluster.connections.allow_default_port_from(proxy, "RDS Proxy to Aurora")


app = App()
ServerlessDatabaseStack(app, "ServerlessDatabaseStack")
app.synth()
