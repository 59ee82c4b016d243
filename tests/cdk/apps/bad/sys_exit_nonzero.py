# expect: python_error SystemExit
import sys

import aws_cdk as cdk

app = cdk.App()
cdk.Stack(app, "Exits")
sys.exit(2)
