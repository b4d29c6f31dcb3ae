# The prod defaults of every input of the stack (../../modules/stack, which
# holds the rules: validation, wiring), plus the provider's region.

variable "aws_region" {
  description = "AWS region of the stack."
  type        = string

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.aws_region))
    error_message = "aws_region must be an AWS region name such as us-east-1."
  }
}

variable "environment" {
  description = "Environment name: part of every resource name (`linoone-<environment>-…`) and the functions' `LINOONE_ENVIRONMENT`."
  type        = string
  default     = "prod"
}

variable "artifacts_dir" {
  description = "Directory holding the `make build` zips (issue.zip, resolve.zip, replay.zip), relative to this directory or absolute."
  type        = string
  default     = "../../../dist"
}

variable "persist_url" {
  description = "Base URL of the Persist API (passed to the issue and resolve functions as `LINOONE_PERSIST_URL`)."
  type        = string
}

variable "persist_api_execution_arn" {
  description = "execute-api ARN pattern the issue and resolve functions may invoke on the Persist API, e.g. `arn:aws:execute-api:us-east-1:123456789012:abcdef1234/*/POST/persist/*`."
  type        = string
}

variable "persist_inline_literals" {
  description = "Inline whitelisted values as quoted literals in Gremlin queries instead of bindings, for Gremlin servers that ignore bindings (Amazon Neptune). `LINOONE_PERSIST_INLINE_LITERALS`."
  type        = bool
  default     = false
}

variable "event_bus_name" {
  description = "Name or ARN of the existing shared engagement event bus to import (set by `linoone discover`; give the ARN for a bus in another account). Required: production never creates its own bus."
  type        = string
}

variable "create_bus" {
  description = "Must stay false in production: the shared engagement bus is imported, never created (a per-service bus is forbidden where the shared bus is required). Declared so `linoone discover` can pass the same variables to every environment."
  type        = bool
  default     = false

  validation {
    condition     = !var.create_bus
    error_message = "Production imports the shared engagement bus; create_bus must be false."
  }
}

variable "custom_domain_name" {
  description = "Custom domain of the resolver (host name only), \"\" for none (set by `linoone discover`)."
  type        = string
  default     = ""
}

variable "custom_domain_routable" {
  description = "True only when `linoone discover` proved DNS routes custom_domain_name to the resolver; only then is the domain used as the resolver base URL (the API Gateway domain itself exists once a name and certificate are given, so DNS has a target)."
  type        = bool
  default     = false
}

variable "custom_domain_certificate_arn" {
  description = "ACM certificate ARN (same region) for custom_domain_name: creates the API Gateway custom domain; not needed when CloudFront serves the domain (set by `linoone discover`)."
  type        = string
  default     = ""
}

variable "log_level" {
  description = "Log level of the functions (`LINOONE_LOG_LEVEL`)."
  type        = string
  default     = "info"
}

variable "log_retention_days" {
  description = "Retention of the function and access log groups, in days."
  type        = number
  default     = 90
}

variable "publish_timeout" {
  description = "How long the resolver waits for EventBridge PutEvents before dead-lettering the click fact, as a Go duration (`LINOONE_PUBLISH_TIMEOUT`). With dlq_timeout it is the click budget a degraded bus adds to a redirect (under 300 ms)."
  type        = string
  default     = "150ms"
}

variable "dlq_timeout" {
  description = "How long the resolver waits for SQS SendMessage to the click DLQ before logging the click fact whole, as a Go duration (`LINOONE_DLQ_TIMEOUT`). With publish_timeout it is the click budget a degraded bus adds to a redirect (under 300 ms)."
  type        = string
  default     = "100ms"
}

variable "denylist_refresh" {
  description = "How often each resolve and issue instance reads the deny list parameter again, as a Go duration in [10s, 15m] (`LINOONE_DENYLIST_REFRESH`). SSM GetParameter calls/s = instances ÷ interval."
  type        = string
  default     = "1m"
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the functions' EMF metrics (`LINOONE_METRICS_NAMESPACE`) and of their alarms."
  type        = string
  default     = "Linoone"
}

variable "api_timeout_seconds" {
  description = "Timeout of the issue function in seconds (below API Gateway's 30 s integration limit); the management API's integration timeout is one second more."
  type        = number
  default     = 10
}

variable "replay_timeout_seconds" {
  description = "Timeout of the replay function in seconds; the click DLQ's visibility timeout is at least 6 times this."
  type        = number
  default     = 30
}

variable "function_memory_mb" {
  description = "Memory size of each function in MB."
  type        = number
  default     = 256
}

variable "resolve_timeout_seconds" {
  description = "Timeout of the resolve function in seconds: a Persist lookup (LINOONE_PERSIST_TIMEOUT) plus the click budget (publish and dead-letter timeouts), so a hung dependency fails fast; the resolver API's integration timeout is one second more."
  type        = number
  default     = 3
}

variable "resolve_reserved_concurrency" {
  description = "Concurrency reserved for the resolve function, -1 for none: at least the resolver's peak requests per second × its p99 duration in seconds (terraform/README.md, \"Sizing Resolve's concurrency\"); the concurrency alarm fires at 80 % of it."
  type        = number
  default     = 300
}

variable "replay_maximum_concurrency" {
  description = "Most concurrent replay invocations (the click DLQ event source mapping's maximum_concurrency, 2-1000): replay must not take the resolver's concurrency or flood a recovering bus."
  type        = number
  default     = 10
}

variable "resolver_throttling_burst_limit" {
  description = "Burst limit of the resolver API's default route throttling."
  type        = number
  default     = 2000
}

variable "resolver_throttling_rate_limit" {
  description = "Rate limit (requests per second) of the resolver API's default route throttling."
  type        = number
  default     = 1000
}

variable "management_throttling_burst_limit" {
  description = "Burst limit of the management API's default route throttling."
  type        = number
  default     = 100
}

variable "management_throttling_rate_limit" {
  description = "Rate limit (requests per second) of the management API's default route throttling."
  type        = number
  default     = 50
}

variable "alarm_sns_topic_arn" {
  description = "SNS topic notified by the alarms. Required in production: an alarm that notifies nobody is not an alarm."
  type        = string

  validation {
    condition     = var.alarm_sns_topic_arn != ""
    error_message = "Production needs alarm_sns_topic_arn: the SNS topic the alarms notify."
  }
}

variable "cdn_enabled" {
  description = "Put CloudFront with a WAF rate-based rule per client IP in front of the resolver (off by default; cost and custom-domain interplay in terraform/README.md, \"Edge protection (cdn)\")."
  type        = bool
  default     = false
}

variable "cdn_rate_limit_per_5_minutes" {
  description = "With cdn_enabled: requests one client IP may make in any 5 minutes before WAF blocks it (minimum 10)."
  type        = number
  default     = 2000
}

variable "cdn_certificate_arn" {
  description = "With cdn_enabled and a custom domain: an ACM certificate in us-east-1 covering custom_domain_name, for the distribution; \"\" for none."
  type        = string
  default     = ""
}
