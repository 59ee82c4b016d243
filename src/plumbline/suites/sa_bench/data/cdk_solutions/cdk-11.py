"""cdk-11: an upload bucket that invokes a Lambda function for new .jpg objects."""

from typing import Any

from aws_cdk import App, Duration, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_notifications as s3n
from constructs import Construct

HANDLER = """
def handler(event, context):
    keys = [r["s3"]["object"]["key"] for r in event["Records"]]
    print("new images:", keys)
"""


class ImageUploadStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        bucket = s3.Bucket(
            self, "Uploads", block_public_access=s3.BlockPublicAccess.BLOCK_ALL, enforce_ssl=True
        )
        processor = lambda_.Function(
            self,
            "ThumbnailFunction",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER),
            timeout=Duration.seconds(30),
        )
        bucket.grant_read(processor)
        bucket.add_event_notification(
            s3.EventType.OBJECT_CREATED,
            s3n.LambdaDestination(processor),
            s3.NotificationKeyFilter(prefix="uploads/", suffix=".jpg"),
        )


app = App()
ImageUploadStack(app, "ImageUploadStack")
app.synth()
