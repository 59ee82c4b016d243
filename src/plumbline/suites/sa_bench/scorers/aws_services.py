"""A catalogue of AWS services and architecture components, with the names people use for them.

Matching is on normalised text (lower case, punctuation to spaces) and on whole words or
phrases, never on single words of a longer name: "Amazon" or "Service" alone credits nothing.
Aliases that are ordinary English words ("config", "shield", "glue") are listed only with their
prefix ("aws config"), so prose cannot trigger them by accident.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_NON_WORD = re.compile(r"[^a-z0-9]+")
_PREFIXES = ("amazon ", "aws ")


def normalise(text: str) -> str:
    """Lower-case `text`, turn every run of non-alphanumerics into one space, and strip it."""
    return _NON_WORD.sub(" ", text.lower()).strip()


@dataclass(frozen=True)
class AwsService:
    """One catalogue entry: its canonical name and the other names it goes by."""

    name: str
    aliases: tuple[str, ...] = ()
    kind: str = "service"  # "service", or "feature" for VPC parts and similar components

    @property
    def phrases(self) -> tuple[str, ...]:
        """Every normalised phrase that names this entry (canonical first)."""
        names = [normalise(self.name)]
        for alias in self.aliases:
            phrase = normalise(alias)
            if phrase and phrase not in names:
                names.append(phrase)
        return tuple(names)


def _s(name: str, *aliases: str, kind: str = "service") -> AwsService:
    return AwsService(name, aliases, kind)


CATALOGUE: tuple[AwsService, ...] = (
    # compute
    _s("Amazon EC2", "EC2", "Elastic Compute Cloud", "EC2 instances", "EC2 instance"),
    _s("AWS Lambda", "Lambda", "Lambda function", "Lambda functions"),
    _s("Amazon ECS", "ECS", "Elastic Container Service"),
    _s("Amazon EKS", "EKS", "Elastic Kubernetes Service"),
    _s("AWS Fargate", "Fargate"),
    _s("AWS Elastic Beanstalk", "Elastic Beanstalk", "Beanstalk"),
    _s("AWS Batch"),
    _s("Amazon Lightsail", "Lightsail"),
    _s("AWS App Runner", "App Runner"),
    _s(
        "Amazon EC2 Auto Scaling",
        "Auto Scaling group",
        "Auto Scaling groups",
        "ASG",
        "EC2 Auto Scaling",
    ),
    _s("AWS Outposts", "Outposts"),
    # storage
    _s("Amazon S3", "S3", "Simple Storage Service", "S3 bucket", "S3 buckets"),
    _s("Amazon S3 Glacier", "S3 Glacier", "Glacier", "Glacier Deep Archive"),
    _s("Amazon EBS", "EBS", "Elastic Block Store"),
    _s("Amazon EFS", "EFS", "Elastic File System"),
    _s("Amazon FSx", "FSx"),
    _s("AWS Storage Gateway", "Storage Gateway"),
    _s("AWS Backup"),
    _s("AWS Snowball", "Snowball"),
    # databases
    _s("Amazon RDS", "RDS", "Relational Database Service"),
    _s("Amazon Aurora", "Aurora", "Aurora Serverless"),
    _s("Amazon DynamoDB", "DynamoDB", "Dynamo DB", "DynamoDB table"),
    _s("Amazon DynamoDB Accelerator", "DAX", "DynamoDB Accelerator"),
    _s("Amazon ElastiCache", "ElastiCache", "Elasticache for Redis", "Redis cache", "Memcached"),
    _s("Amazon MemoryDB", "MemoryDB"),
    _s("Amazon Redshift", "Redshift"),
    _s("Amazon Neptune", "Neptune"),
    _s("Amazon DocumentDB", "DocumentDB"),
    _s("Amazon Keyspaces", "Keyspaces"),
    _s("Amazon Timestream", "Timestream"),
    _s("Amazon RDS Proxy", "RDS Proxy"),
    # networking and content delivery
    _s("Amazon VPC", "VPC", "Virtual Private Cloud"),
    _s("Amazon CloudFront", "CloudFront", "Cloud Front"),
    _s("Amazon Route 53", "Route 53", "Route53"),
    _s("Amazon API Gateway", "API Gateway", "APIGW", "REST API Gateway"),
    _s(
        "Elastic Load Balancing",
        "ELB",
        "Elastic Load Balancer",
        "Application Load Balancer",
        "ALB",
        "Network Load Balancer",
        "NLB",
        "load balancer",
    ),
    _s("AWS Global Accelerator", "Global Accelerator"),
    _s("AWS Direct Connect", "Direct Connect"),
    _s("AWS Transit Gateway", "Transit Gateway"),
    _s("AWS Site-to-Site VPN", "Site-to-Site VPN", "VPN connection"),
    _s("AWS PrivateLink", "PrivateLink", "Private Link"),
    _s("AWS App Mesh", "App Mesh"),
    _s("AWS Cloud Map", "Cloud Map"),
    _s("NAT Gateway", "NAT Gateways", "NAT", kind="feature"),
    _s("Internet Gateway", "IGW", kind="feature"),
    _s("VPC Endpoint", "VPC endpoints", "Gateway endpoint", "Interface endpoint", kind="feature"),
    _s("Security Group", "Security Groups", kind="feature"),
    _s("Network ACL", "Network ACLs", "NACL", "NACLs", kind="feature"),
    _s("Availability Zone", "Availability Zones", "Multi-AZ", kind="feature"),
    # integration
    _s("Amazon SQS", "SQS", "Simple Queue Service", "SQS queue"),
    _s("Amazon SNS", "SNS", "Simple Notification Service", "SNS topic"),
    _s("Amazon EventBridge", "EventBridge", "CloudWatch Events", "Event Bridge"),
    _s("AWS Step Functions", "Step Functions", "Step Function", "state machine"),
    _s("Amazon MQ"),
    _s("Amazon AppFlow", "AppFlow"),
    _s("AWS AppSync", "AppSync"),
    # analytics and streaming
    _s("Amazon Kinesis Data Streams", "Kinesis Data Streams", "Kinesis", "Kinesis stream"),
    _s("Amazon Data Firehose", "Kinesis Data Firehose", "Firehose", "Kinesis Firehose"),
    _s("Amazon Managed Service for Apache Flink", "Kinesis Data Analytics", "Apache Flink"),
    _s("Amazon MSK", "MSK", "Managed Streaming for Apache Kafka", "Kafka"),
    _s("Amazon Athena", "Athena"),
    _s("AWS Glue", "Glue Data Catalog", "Glue crawler", "Glue ETL"),
    _s("Amazon EMR", "EMR", "Elastic MapReduce"),
    _s("Amazon OpenSearch Service", "OpenSearch", "Elasticsearch Service", "Amazon Elasticsearch"),
    _s("Amazon QuickSight", "QuickSight"),
    _s("AWS Lake Formation", "Lake Formation"),
    _s("AWS Data Pipeline", "Data Pipeline"),
    # security, identity, compliance
    _s("AWS IAM", "IAM", "Identity and Access Management", "IAM role", "IAM roles", "IAM policy"),
    _s("Amazon Cognito", "Cognito", "Cognito user pool", "Cognito user pools"),
    _s("AWS KMS", "KMS", "Key Management Service"),
    _s("AWS Secrets Manager", "Secrets Manager"),
    _s("AWS Systems Manager Parameter Store", "Parameter Store", "SSM Parameter Store"),
    _s("AWS WAF", "WAF", "Web Application Firewall"),
    _s("AWS Shield", "Shield Advanced", "AWS Shield Standard"),
    _s("Amazon GuardDuty", "GuardDuty", "Guard Duty"),
    _s("Amazon Inspector"),
    _s("Amazon Macie", "Macie"),
    _s("AWS Security Hub", "Security Hub"),
    _s("AWS Certificate Manager", "ACM", "Certificate Manager"),
    _s("AWS CloudHSM", "CloudHSM"),
    _s("AWS Network Firewall", "Network Firewall"),
    _s("AWS Firewall Manager", "Firewall Manager"),
    _s("AWS IAM Identity Center", "IAM Identity Center", "AWS SSO", "Single Sign-On"),
    _s("AWS Directory Service", "Directory Service", "AWS Managed Microsoft AD"),
    _s("AWS Resource Access Manager", "Resource Access Manager"),
    _s("Amazon Detective"),
    _s("AWS Audit Manager", "Audit Manager"),
    # management and governance
    _s(
        "Amazon CloudWatch",
        "CloudWatch",
        "CloudWatch Logs",
        "CloudWatch alarms",
        "CloudWatch metrics",
    ),
    _s("AWS CloudTrail", "CloudTrail", "Cloud Trail"),
    _s("AWS Config", "Config rules", "AWS Config rules"),
    _s("AWS CloudFormation", "CloudFormation", "Cloud Formation"),
    _s("AWS CDK", "CDK", "Cloud Development Kit"),
    _s("AWS Systems Manager", "Systems Manager", "SSM", "Session Manager"),
    _s("AWS Organizations", "Service Control Policies", "SCP", "SCPs"),
    _s("AWS Control Tower", "Control Tower"),
    _s("AWS Trusted Advisor", "Trusted Advisor"),
    _s("AWS X-Ray", "X-Ray", "XRay"),
    _s("AWS Service Catalog", "Service Catalog"),
    _s("AWS Compute Optimizer", "Compute Optimizer"),
    _s("AWS Cost Explorer", "Cost Explorer"),
    _s("AWS Budgets"),
    _s("AWS Cost and Usage Report", "Cost and Usage Report", "CUR"),
    _s("Savings Plans", "Compute Savings Plans", "Savings Plan", kind="feature"),
    _s("Reserved Instances", "Reserved Instance", "RIs", kind="feature"),
    _s("Spot Instances", "Spot Instance", "EC2 Spot", kind="feature"),
    _s("S3 Intelligent-Tiering", "Intelligent-Tiering", "Intelligent Tiering", kind="feature"),
    _s("S3 Lifecycle", "lifecycle policy", "lifecycle policies", "lifecycle rules", kind="feature"),
    # developer tools
    _s("AWS CodePipeline", "CodePipeline"),
    _s("AWS CodeBuild", "CodeBuild"),
    _s("AWS CodeDeploy", "CodeDeploy"),
    _s("AWS CodeCommit", "CodeCommit"),
    _s("Amazon ECR", "ECR", "Elastic Container Registry"),
    _s("AWS Amplify"),
    # machine learning and media
    _s("Amazon SageMaker", "SageMaker", "Sage Maker"),
    _s("Amazon Bedrock"),
    _s("Amazon Rekognition", "Rekognition"),
    _s("Amazon Comprehend"),
    _s("Amazon Textract", "Textract"),
    _s("Amazon Transcribe"),
    _s("Amazon Translate"),
    _s("Amazon Polly", "Polly"),
    _s("Amazon Lex", "Lex"),
    _s("AWS Elemental MediaConvert", "MediaConvert", "Elemental MediaConvert"),
    _s("Amazon Kinesis Video Streams", "Kinesis Video Streams"),
    _s("Amazon SES", "SES", "Simple Email Service"),
    _s("Amazon Pinpoint", "Pinpoint"),
    _s("Amazon Connect"),
    # migration and hybrid
    _s("AWS DMS", "DMS", "Database Migration Service"),
    _s("AWS DataSync", "DataSync"),
    _s("AWS Transfer Family", "Transfer Family", "AWS Transfer for SFTP"),
    _s("AWS Application Migration Service", "Application Migration Service", "MGN"),
    _s("AWS IoT Core", "IoT Core"),
    _s("AWS IoT Greengrass", "Greengrass"),
    _s("AWS Elastic Disaster Recovery", "Elastic Disaster Recovery", "DRS"),
)


@lru_cache(maxsize=1)
def _phrase_index() -> dict[str, AwsService]:
    index: dict[str, AwsService] = {}
    for service in CATALOGUE:
        for phrase in service.phrases:
            # the first entry to claim a phrase keeps it; duplicates would be a catalogue bug
            index.setdefault(phrase, service)
    # the name without its "Amazon"/"AWS" prefix is an alias when it is specific enough
    for service in CATALOGUE:
        base = normalise(service.name)
        for prefix in _PREFIXES:
            if base.startswith(prefix):
                bare = base[len(prefix) :]
                if bare not in _GENERIC_BARE_NAMES:
                    index.setdefault(bare, service)
    return index


# Bare names that are ordinary words: they only count with their "AWS"/"Amazon" prefix.
_GENERIC_BARE_NAMES = frozenset(
    {
        "batch",
        "backup",
        "config",
        "shield",
        "inspector",
        "detective",
        "translate",
        "connect",
        "mq",
        "budgets",
        "organizations",
        "glue",
        "comprehend",
        "transcribe",
        "amplify",
        "bedrock",
    }
)


def lookup(name: str) -> AwsService | None:
    """The catalogue entry named by `name` (any alias, any case), or None."""
    return _phrase_index().get(normalise(name))


def phrases_for(name: str) -> tuple[str, ...]:
    """Normalised phrases that name the same thing as `name`.

    A catalogue entry gives all its aliases; an unknown name gives itself and, when it starts
    with "Amazon" or "AWS", itself without that prefix.
    """
    service = lookup(name)
    if service is not None:
        bare = [
            p[len(prefix) :]
            for p in service.phrases
            for prefix in _PREFIXES
            if p.startswith(prefix) and p[len(prefix) :] not in _GENERIC_BARE_NAMES
        ]
        return tuple(dict.fromkeys([*service.phrases, *bare]))
    base = normalise(name)
    out = [base] if base else []
    for prefix in _PREFIXES:
        if base.startswith(prefix) and base[len(prefix) :] not in _GENERIC_BARE_NAMES:
            out.append(base[len(prefix) :])
    return tuple(out)


@lru_cache(maxsize=1)
def _mention_pattern() -> re.Pattern[str]:
    # longest phrases first, so "amazon s3 glacier" wins over "amazon s3"
    phrases = sorted(_phrase_index(), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(p) for p in phrases) + r")\b")


def find_services(text: str) -> set[str]:
    """Canonical names of every catalogue entry mentioned in `text` (whole phrases only)."""
    index = _phrase_index()
    return {index[m.group(0)].name for m in _mention_pattern().finditer(normalise(text))}


def all_service_names(*, kind: str | None = "service") -> list[str]:
    """Canonical names in the catalogue (only `kind` entries unless `kind` is None)."""
    return [s.name for s in CATALOGUE if kind is None or s.kind == kind]
