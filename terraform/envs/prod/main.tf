# Linoone, production environment: the stack (../../modules/stack) with the production
# defaults of variables.tf; it imports the shared engagement bus (create_bus must stay
# false). See ../../README.md.

provider "aws" {
  region = var.aws_region

  default_tags {
    tags = {
      Application = "linoone"
      Environment = var.environment
      ManagedBy   = "terraform"
    }
  }
}

# CloudFront's region: the cdn option's WAF web ACL is created there (and only when
# cdn_enabled; otherwise this configuration is unused).
provider "aws" {
  alias  = "us_east_1"
  region = "us-east-1"

  default_tags {
    tags = {
      Application = "linoone"
      Environment = var.environment
      ManagedBy   = "terraform"
    }
  }
}

module "stack" {
  source = "../../modules/stack"

  providers = {
    aws           = aws
    aws.us_east_1 = aws.us_east_1
  }

  environment                       = var.environment
  artifacts_dir                     = var.artifacts_dir
  persist_url                       = var.persist_url
  persist_api_execution_arn         = var.persist_api_execution_arn
  persist_inline_literals           = var.persist_inline_literals
  event_bus_name                    = var.event_bus_name
  create_bus                        = var.create_bus
  custom_domain_name                = var.custom_domain_name
  custom_domain_routable            = var.custom_domain_routable
  custom_domain_certificate_arn     = var.custom_domain_certificate_arn
  log_level                         = var.log_level
  log_retention_days                = var.log_retention_days
  publish_timeout                   = var.publish_timeout
  dlq_timeout                       = var.dlq_timeout
  denylist_refresh                  = var.denylist_refresh
  metrics_namespace                 = var.metrics_namespace
  api_timeout_seconds               = var.api_timeout_seconds
  replay_timeout_seconds            = var.replay_timeout_seconds
  function_memory_mb                = var.function_memory_mb
  resolve_timeout_seconds           = var.resolve_timeout_seconds
  resolve_reserved_concurrency      = var.resolve_reserved_concurrency
  replay_maximum_concurrency        = var.replay_maximum_concurrency
  resolver_throttling_burst_limit   = var.resolver_throttling_burst_limit
  resolver_throttling_rate_limit    = var.resolver_throttling_rate_limit
  management_throttling_burst_limit = var.management_throttling_burst_limit
  management_throttling_rate_limit  = var.management_throttling_rate_limit
  alarm_sns_topic_arn               = var.alarm_sns_topic_arn
  cdn_enabled                       = var.cdn_enabled
  cdn_rate_limit_per_5_minutes      = var.cdn_rate_limit_per_5_minutes
  cdn_certificate_arn               = var.cdn_certificate_arn
}
