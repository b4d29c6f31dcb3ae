terraform {
  # 1.10: the S3 backend's native lock file (use_lockfile).
  required_version = ">= 1.10"

  # Remote state in S3, locked by a lock file next to it (no DynamoDB table). bucket,
  # key (linoone/<environment>.tfstate) and region are not committed: give them at
  # `terraform init -backend-config=…`, or try the stack with local state through a
  # backend_override.tf. See ../../README.md ("State").
  backend "s3" {
    use_lockfile = true
    encrypt      = true
  }

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.40"
    }
  }
}
