# expect: lint_error
import aws_cdk as cdk

app = cdk.App()
stack = cdk.Stack(app, "Refs")
cdk.CfnOutput(stack, "Missing", value=cdk.Fn.get_att("DoesNotExist", "Arn").to_string())
cdk.CfnResource(stack, "Topic", type="AWS::SNS::Topic")
app.synth()
