from aws_cdk import App, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3


class DataStack(Stack):
    def __init__(self, scope, construct_id, **kwargs):
        super().__init__(scope, construct_id, **kwargs)
        self.bucket = s3.Bucket(self, "Data")


class ApiStack(Stack):
    def __init__(self, scope, construct_id, *, bucket, **kwargs):
        super().__init__(scope, construct_id, **kwargs)
        handler = lambda_.Function(
            self,
            "Handler",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline("def handler(event, context):\n    return {}\n"),
            environment={"BUCKET": bucket.bucket_name},
        )
        bucket.grant_read(handler)
        apigw.LambdaRestApi(self, "Api", handler=handler)


app = App()
data = DataStack(app, "DataStack")
ApiStack(app, "ApiStack", bucket=data.bucket)
app.synth()
