"""Scale-out on Ray: agent trials (`agent run --executor ray`) and CDK synthesis
(`--cdk-executor ray`) on a Ray cluster, and a local multi-node cluster for tests and
benchmarks. Ray is imported only when one of them is used (`pip install 'plumbline[ray]'`)."""

from plumbline.cluster.connect import ClusterError, connect, require_ray

__all__ = ["ClusterError", "connect", "require_ray"]
