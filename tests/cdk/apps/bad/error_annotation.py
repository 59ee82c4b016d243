# expect: synth_error
import aws_cdk as cdk
from aws_cdk import aws_sns as sns

app = cdk.App()
stack = cdk.Stack(app, "Topics")
sns.Topic(stack, "Topic")
cdk.Annotations.of(stack).add_error("this stack is not allowed")
app.synth()
