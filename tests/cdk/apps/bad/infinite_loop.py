# expect: timeout
import aws_cdk as cdk

app = cdk.App()
stack = cdk.Stack(app, "Loops")
counter = 0
while True:
    counter += 1
