terraform {
  required_version = ">= 1.6"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.40"
      # The cdn option's WAF web ACL lives in us-east-1 (CloudFront's region).
      configuration_aliases = [aws.us_east_1]
    }
    # The cdn option's origin secret.
    random = {
      source  = "hashicorp/random"
      version = "~> 3.6"
    }
  }
}
