# expect: synth_error
import aws_cdk as cdk

app = cdk.App()
app.synth()
