# expect: resource_limit
import aws_cdk as cdk

app = cdk.App()
hoard = []
while True:
    # bytes(n) is calloc'd, so pages are not touched: the address-space limit stops this
    # within a few iterations and almost no CPU time, instead of racing the CPU-seconds limit.
    hoard.append(bytes(512 * 1024 * 1024))
