# expect: lint_error
import aws_cdk as cdk

app = cdk.App()
stack = cdk.Stack(app, "Raw")
cdk.CfnResource(stack, "Bucket", type="AWS::S3::Bucket", properties={"NotAProperty": "value"})
app.synth()
