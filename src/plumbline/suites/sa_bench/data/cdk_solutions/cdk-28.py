"""cdk-28: two stacks, a network stack whose VPC a Fargate service stack consumes."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from constructs import Construct


class SharedNetworkStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.vpc = ec2.Vpc(self, "SharedVpc", max_azs=2, nat_gateways=1)


class WorkerServiceStack(Stack):
    def __init__(
        self, scope: Construct, construct_id: str, *, vpc: ec2.IVpc, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        cluster = ecs.Cluster(
            self, "WorkerCluster", vpc=vpc, container_insights_v2=ecs.ContainerInsights.ENABLED
        )
        task = ecs.FargateTaskDefinition(self, "WorkerTask", cpu=512, memory_limit_mib=1024)
        task.add_container(
            "worker",
            image=ecs.ContainerImage.from_registry("public.ecr.aws/docker/library/busybox:stable"),
            command=["sh", "-c", "while true; do echo working; sleep 60; done"],
            logging=ecs.LogDrivers.aws_logs(stream_prefix="worker"),
        )
        ecs.FargateService(
            self,
            "WorkerService",
            cluster=cluster,
            task_definition=task,
            desired_count=2,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
        )


app = App()
network = SharedNetworkStack(app, "SharedNetworkStack")
service = WorkerServiceStack(app, "WorkerServiceStack", vpc=network.vpc)
service.add_dependency(network)
app.synth()
