"""cdk-33: a DynamoDB-backed REST API protected by an AWS WAF web ACL."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_apigateway as apigateway
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

HANDLER = """
import json, os
import boto3

table = boto3.resource("dynamodb").Table(os.environ["TABLE_NAME"])

def handler(event, context):
    items = table.scan(Limit=25).get("Items", [])
    return {"statusCode": 200, "body": json.dumps(items, default=str)}
"""


def managed_rule(name: str, priority: int) -> wafv2.CfnWebACL.RuleProperty:
    return wafv2.CfnWebACL.RuleProperty(
        name=name,
        priority=priority,
        override_action=wafv2.CfnWebACL.OverrideActionProperty(none={}),
        statement=wafv2.CfnWebACL.StatementProperty(
            managed_rule_group_statement=wafv2.CfnWebACL.ManagedRuleGroupStatementProperty(
                vendor_name="AWS", name=name
            )
        ),
        visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
            cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True
        ),
    )


class ProtectedApiStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        table = dynamodb.Table(
            self,
            "Products",
            partition_key=dynamodb.Attribute(name="productId", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        )
        function = lambda_.Function(
            self,
            "ProductsFn",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
            environment={"TABLE_NAME": table.table_name},
        )
        table.grant_read_data(function)
        api = apigateway.LambdaRestApi(self, "ProductsApi", handler=function)

        rate_limit = wafv2.CfnWebACL.RuleProperty(
            name="RateLimitPerIp",
            priority=0,
            action=wafv2.CfnWebACL.RuleActionProperty(block={}),
            statement=wafv2.CfnWebACL.StatementProperty(
                rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                    limit=1000, aggregate_key_type="IP"
                )
            ),
            visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                cloud_watch_metrics_enabled=True,
                metric_name="RateLimitPerIp",
                sampled_requests_enabled=True,
            ),
        )
        acl = wafv2.CfnWebACL(
            self,
            "ApiAcl",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                cloud_watch_metrics_enabled=True,
                metric_name="ApiAcl",
                sampled_requests_enabled=True,
            ),
            rules=[
                rate_limit,
                managed_rule("AWSManagedRulesCommonRuleSet", 1),
                managed_rule("AWSManagedRulesKnownBadInputsRuleSet", 2),
            ],
        )
        wafv2.CfnWebACLAssociation(
            self,
            "ApiAclAssociation",
            resource_arn=api.deployment_stage.stage_arn,
            web_acl_arn=acl.attr_arn,
        )


app = App()
ProtectedApiStack(app, "ProtectedApiStack")
app.synth()
