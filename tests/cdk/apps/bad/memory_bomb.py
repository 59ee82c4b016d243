# expect: resource_limit
import aws_cdk as cdk

app = cdk.App()
hoard = []
while True:
    hoard.append(b"x" * (64 * 1024 * 1024))
