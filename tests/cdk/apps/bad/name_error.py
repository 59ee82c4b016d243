# expect: python_error NameError
import aws_cdk as cdk

app = cdk.App()
StorageStack(app, "Storage")
app.synth()
