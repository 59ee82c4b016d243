# expect: synth_error
import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2

app = cdk.App()
stack = cdk.Stack(app, "Network")
ec2.Vpc(stack, "Vpc", ip_addresses=ec2.IpAddresses.cidr("10.0.0.0/99"))
app.synth()
