# expect: resource_limit
import os

import aws_cdk as cdk

app = cdk.App()
while True:
    os.fork()
