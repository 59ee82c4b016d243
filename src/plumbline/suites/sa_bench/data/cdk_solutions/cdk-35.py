"""cdk-35: an ElastiCache for Redis replication group in private subnets (L1 constructs)."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticache as elasticache
from constructs import Construct


class CacheStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        vpc = ec2.Vpc(self, "Vpc", max_azs=2, nat_gateways=1)
        app_sg = ec2.SecurityGroup(self, "AppSg", vpc=vpc, description="application servers")
        cache_sg = ec2.SecurityGroup(
            self, "CacheSg", vpc=vpc, description="Redis", allow_all_outbound=False
        )
        cache_sg.add_ingress_rule(app_sg, ec2.Port.tcp(6379), "Redis from the application tier")
        subnet_group = elasticache.CfnSubnetGroup(
            self,
            "CacheSubnets",
            description="private subnets for Redis",
            subnet_ids=vpc.select_subnets(
                subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS
            ).subnet_ids,
        )
        elasticache.CfnReplicationGroup(
            self,
            "SessionCache",
            replication_group_description="session cache",
            engine="redis",
            cache_node_type="cache.t4g.small",
            num_cache_clusters=2,
            automatic_failover_enabled=True,
            multi_az_enabled=True,
            at_rest_encryption_enabled=True,
            transit_encryption_enabled=True,
            cache_subnet_group_name=subnet_group.ref,
            security_group_ids=[cache_sg.security_group_id],
        )


app = App()
CacheStack(app, "CacheStack")
app.synth()
