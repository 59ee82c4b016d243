"""cdk-37: a small data lake: raw bucket, Glue database and crawler, Athena workgroup."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_athena as athena
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct


class DataLakeStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        raw = s3.Bucket(self, "RawData", block_public_access=s3.BlockPublicAccess.BLOCK_ALL)
        results = s3.Bucket(
            self, "QueryResults", block_public_access=s3.BlockPublicAccess.BLOCK_ALL
        )
        database = glue.CfnDatabase(
            self,
            "SalesDatabase",
            catalog_id=self.account,
            database_input=glue.CfnDatabase.DatabaseInputProperty(name="sales"),
        )
        crawler_role = iam.Role(
            self,
            "CrawlerRole",
            assumed_by=iam.ServicePrincipal("glue.amazonaws.com"),
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name("service-role/AWSGlueServiceRole")
            ],
        )
        raw.grant_read(crawler_role)
        glue.CfnCrawler(
            self,
            "SalesCrawler",
            role=crawler_role.role_arn,
            database_name="sales",
            schedule=glue.CfnCrawler.ScheduleProperty(schedule_expression="cron(0 2 * * ? *)"),
            targets=glue.CfnCrawler.TargetsProperty(
                s3_targets=[glue.CfnCrawler.S3TargetProperty(path=f"s3://{raw.bucket_name}/sales/")]
            ),
        ).add_dependency(database)
        athena.CfnWorkGroup(
            self,
            "AnalystsWorkgroup",
            name="analysts",
            work_group_configuration=athena.CfnWorkGroup.WorkGroupConfigurationProperty(
                enforce_work_group_configuration=True,
                bytes_scanned_cutoff_per_query=10 * 1024**3,
                result_configuration=athena.CfnWorkGroup.ResultConfigurationProperty(
                    output_location=f"s3://{results.bucket_name}/athena/",
                    encryption_configuration=athena.CfnWorkGroup.EncryptionConfigurationProperty(
                        encryption_option="SSE_S3"
                    ),
                ),
            ),
        )


app = App()
DataLakeStack(app, "DataLakeStack")
app.synth()
