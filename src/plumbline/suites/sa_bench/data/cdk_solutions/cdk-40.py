"""cdk-40: an AWS Backup plan with an encrypted vault, selecting resources by tag."""

from typing import Any

from aws_cdk import App, Duration, RemovalPolicy, Stack, Tags
from aws_cdk import aws_backup as backup
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_kms as kms
from constructs import Construct


class BackupStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        key = kms.Key(self, "VaultKey", enable_key_rotation=True)
        vault = backup.BackupVault(
            self,
            "Vault",
            encryption_key=key,
            removal_policy=RemovalPolicy.RETAIN,
        )
        plan = backup.BackupPlan(self, "Plan", backup_vault=vault)
        plan.add_rule(
            backup.BackupPlanRule(
                rule_name="Daily",
                schedule_expression=events.Schedule.cron(hour="3", minute="0"),
                delete_after=Duration.days(35),
            )
        )
        plan.add_rule(
            backup.BackupPlanRule(
                rule_name="MonthlyArchive",
                schedule_expression=events.Schedule.cron(day="1", hour="4", minute="0"),
                move_to_cold_storage_after=Duration.days(30),
                delete_after=Duration.days(365),
            )
        )
        plan.add_selection(
            "TaggedResources",
            resources=[backup.BackupResource.from_tag("backup", "daily")],
        )
        table = dynamodb.Table(
            self,
            "Accounts",
            partition_key=dynamodb.Attribute(name="accountId", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        )
        Tags.of(table).add("backup", "daily")


app = App()
BackupStack(app, "BackupStack")
app.synth()
