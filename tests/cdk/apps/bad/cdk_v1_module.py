# expect: python_error ModuleNotFoundError
from aws_cdk.core import App, Stack

app = App()
Stack(app, "V1")
app.synth()
