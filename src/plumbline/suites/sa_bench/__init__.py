"""SA Bench: the AWS Solutions Architect benchmark (exam, architecture design, CDK synthesis)."""
