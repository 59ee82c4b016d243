"""cdk-36: an EC2 Auto Scaling group behind an ALB with CPU target tracking."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_autoscaling as autoscaling
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from constructs import Construct


class WebFleetStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        vpc = ec2.Vpc(self, "Vpc", max_azs=2, nat_gateways=1)
        user_data = ec2.UserData.for_linux()
        user_data.add_commands("dnf install -y nginx", "systemctl enable --now nginx")
        fleet = autoscaling.AutoScalingGroup(
            self,
            "WebFleet",
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            launch_template=ec2.LaunchTemplate(
                self,
                "WebTemplate",
                instance_type=ec2.InstanceType("t3.small"),
                machine_image=ec2.MachineImage.latest_amazon_linux2023(),
                user_data=user_data,
                security_group=ec2.SecurityGroup(self, "WebSg", vpc=vpc),
                require_imdsv2=True,
            ),
            min_capacity=2,
            max_capacity=6,
            health_checks=autoscaling.HealthChecks.with_additional_checks(
                additional_types=[autoscaling.AdditionalHealthCheckType.ELB],
                grace_period=Duration.minutes(2),
            ),
        )
        fleet.scale_on_cpu_utilization("KeepCpuAt50", target_utilization_percent=50)
        alb = elbv2.ApplicationLoadBalancer(self, "Alb", vpc=vpc, internet_facing=True)
        listener = alb.add_listener("Http", port=80)
        listener.add_targets(
            "WebTargets",
            port=80,
            targets=[fleet],
            health_check=elbv2.HealthCheck(path="/", interval=Duration.seconds(30)),
        )


app = App()
WebFleetStack(app, "WebFleetStack")
app.synth()
