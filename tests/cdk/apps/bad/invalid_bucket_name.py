# expect: synth_error
import aws_cdk as cdk
from aws_cdk import aws_s3 as s3

app = cdk.App()
stack = cdk.Stack(app, "Buckets")
s3.Bucket(stack, "Bucket", bucket_name="Not_A_Valid_Name")
app.synth()
