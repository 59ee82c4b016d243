# expect: python_error SyntaxError
import aws_cdk as cdk

app = cdk.App(
stack = cdk.Stack(app, "Broken")
app.synth()
