"""cdk-09: an SSM parameter and a generated Secrets Manager secret."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_ssm as ssm
from constructs import Construct


class AppConfigStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        ssm.StringParameter(
            self,
            "ApiEndpoint",
            parameter_name="/app/api-endpoint",
            string_value="https://api.example.com",
            description="Base URL of the partner API",
        )
        secretsmanager.Secret(
            self,
            "DatabaseCredentials",
            description="Application database credentials",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                secret_string_template='{"username": "app"}',
                generate_string_key="password",
                exclude_punctuation=True,
                password_length=32,
            ),
        )


app = App()
AppConfigStack(app, "AppConfigStack")
app.synth()
