# Every input is required: the environments (../../envs/*) hold the defaults, so each
# default is written once, where it differs or not. The rules live here.

variable "environment" {
  description = "Environment name: part of every resource name (`linoone-<environment>-…`) and the functions' `LINOONE_ENVIRONMENT`."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,19}$", var.environment))
    error_message = "The environment name must be 1-20 lower-case letters, digits or hyphens, starting with a letter."
  }
}

variable "artifacts_dir" {
  description = "Directory holding the `make build` zips (issue.zip, resolve.zip, replay.zip), relative to the directory Terraform runs in (the environment's) or absolute."
  type        = string
}

variable "persist_url" {
  description = "Base URL of the Persist API (passed to the issue and resolve functions as `LINOONE_PERSIST_URL`)."
  type        = string

  validation {
    condition     = can(regex("^https://[^/?#\\s]+(/[^?#\\s]*)?$", var.persist_url))
    error_message = "persist_url must be an https URL without query or fragment."
  }
}

variable "persist_api_execution_arn" {
  description = "execute-api ARN pattern the issue and resolve functions may invoke on the Persist API, e.g. `arn:aws:execute-api:us-east-1:123456789012:abcdef1234/*/POST/persist/*`."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:execute-api:[a-z0-9-]+:[0-9]{12}:[a-z0-9]+/[^\\s]+$", var.persist_api_execution_arn))
    error_message = "persist_api_execution_arn must be an execute-api ARN naming one API (arn:aws:execute-api:<region>:<account>:<api-id>/<stage>/<method>/<path>)."
  }

  # The stack grants each function only the Persist routes it calls (resolve:
  # .../persist/gremlin; issue: also .../persist/ingest), derived from this pattern.
  validation {
    condition     = endswith(var.persist_api_execution_arn, "/POST/persist/*")
    error_message = "persist_api_execution_arn must end with /POST/persist/* (the stack derives .../persist/gremlin and .../persist/ingest from it)."
  }
}

variable "persist_inline_literals" {
  description = "Inline whitelisted values as quoted literals in Gremlin queries instead of bindings, for Gremlin servers that ignore bindings (Amazon Neptune). `LINOONE_PERSIST_INLINE_LITERALS`."
  type        = bool
}

variable "event_bus_name" {
  description = "Name or ARN of the engagement event bus (set by `linoone discover`; the ARN for a bus in another account). With create_bus it must be a name."
  type        = string
}

variable "create_bus" {
  description = "Create the event bus named by event_bus_name (sandbox only; set by `linoone discover`); false imports the existing shared bus."
  type        = bool
}

variable "custom_domain_name" {
  description = "Custom domain of the resolver (host name only), \"\" for none (set by `linoone discover`)."
  type        = string
}

variable "custom_domain_routable" {
  description = "True only when `linoone discover` proved DNS routes custom_domain_name to the resolver; only then is the domain used as the resolver base URL (the API Gateway domain itself exists once a name and certificate are given, so DNS has a target)."
  type        = bool
}

variable "custom_domain_certificate_arn" {
  description = "ACM certificate ARN (same region) for custom_domain_name: creates the API Gateway custom domain; not needed when CloudFront serves the domain (set by `linoone discover`)."
  type        = string
}

variable "log_level" {
  description = "Log level of the functions (`LINOONE_LOG_LEVEL`)."
  type        = string

  validation {
    condition     = contains(["debug", "info", "warn", "error"], var.log_level)
    error_message = "log_level must be debug, info, warn or error."
  }
}

variable "log_retention_days" {
  description = "Retention of the function and access log groups, in days."
  type        = number
}

variable "publish_timeout" {
  description = "How long the resolver waits for EventBridge PutEvents before dead-lettering the click fact, as a Go duration (`LINOONE_PUBLISH_TIMEOUT`). With dlq_timeout it is the click budget a degraded bus adds to a redirect."
  type        = string

  validation {
    # A Go duration above 0 and at most 1m, as the functions take it (a value they
    # refuse would stop every resolve function at its start).
    condition = can(regex("^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$", var.publish_timeout)) && try(alltrue([
      for ms in [sum([for p in regexall("([0-9]+(?:\\.[0-9]+)?)(ns|us|µs|ms|s|m|h)", var.publish_timeout) :
      tonumber(p[0]) * { ns = 1e-6, us = 1e-3, "µs" = 1e-3, ms = 1, s = 1000, m = 60000, h = 3600000 }[p[1]]])] :
      ms > 0 && ms <= 60000
    ]), false)
    error_message = "publish_timeout must be a Go duration above 0 and at most 1m, such as 500ms or 1.5s."
  }
}

variable "denylist_refresh" {
  description = "How often each resolve and issue instance reads the deny list parameter again, as a Go duration in [10s, 15m] (`LINOONE_DENYLIST_REFRESH`): a takedown is in force within it. SSM GetParameter calls/s = instances ÷ interval."
  type        = string

  validation {
    # A Go duration from 10s to 15m, the bounds the functions enforce (a value they
    # refuse would stop every function at its start).
    condition = can(regex("^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$", var.denylist_refresh)) && try(alltrue([
      for ms in [sum([for p in regexall("([0-9]+(?:\\.[0-9]+)?)(ns|us|µs|ms|s|m|h)", var.denylist_refresh) :
      tonumber(p[0]) * { ns = 1e-6, us = 1e-3, "µs" = 1e-3, ms = 1, s = 1000, m = 60000, h = 3600000 }[p[1]]])] :
      ms >= 10000 && ms <= 900000
    ]), false)
    error_message = "denylist_refresh must be a Go duration from 10s to 15m, such as 30s or 1m."
  }
}

variable "dlq_timeout" {
  description = "How long the resolver waits for SQS SendMessage to the click DLQ before logging the click fact whole, as a Go duration (`LINOONE_DLQ_TIMEOUT`). With publish_timeout it is the click budget a degraded bus adds to a redirect."
  type        = string

  validation {
    # A Go duration above 0 and at most 1m, as the functions take it (a value they
    # refuse would stop every resolve function at its start).
    condition = can(regex("^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$", var.dlq_timeout)) && try(alltrue([
      for ms in [sum([for p in regexall("([0-9]+(?:\\.[0-9]+)?)(ns|us|µs|ms|s|m|h)", var.dlq_timeout) :
      tonumber(p[0]) * { ns = 1e-6, us = 1e-3, "µs" = 1e-3, ms = 1, s = 1000, m = 60000, h = 3600000 }[p[1]]])] :
      ms > 0 && ms <= 60000
    ]), false)
    error_message = "dlq_timeout must be a Go duration above 0 and at most 1m, such as 500ms or 1.5s."
  }
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the functions' EMF metrics (`LINOONE_METRICS_NAMESPACE`) and of their alarms."
  type        = string
}

variable "api_timeout_seconds" {
  description = "Timeout of the issue function in seconds (below API Gateway's 30 s integration limit); the management API's integration timeout is one second more."
  type        = number

  validation {
    condition     = var.api_timeout_seconds >= 1 && var.api_timeout_seconds <= 29
    error_message = "api_timeout_seconds must be between 1 and 29."
  }
}

variable "replay_timeout_seconds" {
  description = "Timeout of the replay function in seconds; the click DLQ's visibility timeout is at least 6 times this."
  type        = number
}

variable "function_memory_mb" {
  description = "Memory size of each function in MB."
  type        = number
}

variable "resolve_timeout_seconds" {
  description = "Timeout of the resolve function in seconds: a Persist lookup (LINOONE_PERSIST_TIMEOUT) plus the click budget (publish and dead-letter timeouts), so a hung dependency fails fast; the resolver API's integration timeout is one second more."
  type        = number

  validation {
    condition     = var.resolve_timeout_seconds >= 1 && var.resolve_timeout_seconds <= 10 && floor(var.resolve_timeout_seconds) == var.resolve_timeout_seconds
    error_message = "resolve_timeout_seconds must be a whole number between 1 and 10."
  }
}

variable "resolve_reserved_concurrency" {
  description = "Concurrency reserved for the resolve function, -1 for none: at least the resolver's peak requests per second × its p99 duration in seconds (terraform/README.md, \"Sizing Resolve's concurrency\"); the concurrency alarm fires at 80 % of it."
  type        = number

  validation {
    condition     = var.resolve_reserved_concurrency >= -1 && floor(var.resolve_reserved_concurrency) == var.resolve_reserved_concurrency
    error_message = "resolve_reserved_concurrency must be -1 (none) or a whole number >= 0."
  }
}

variable "replay_maximum_concurrency" {
  description = "Most concurrent replay invocations (the click DLQ event source mapping's maximum_concurrency, 2-1000): replay must not take the resolver's concurrency or flood a recovering bus."
  type        = number
}

variable "resolver_throttling_burst_limit" {
  description = "Burst limit of the resolver API's default route throttling."
  type        = number
}

variable "resolver_throttling_rate_limit" {
  description = "Rate limit (requests per second) of the resolver API's default route throttling."
  type        = number
}

variable "management_throttling_burst_limit" {
  description = "Burst limit of the management API's default route throttling."
  type        = number
}

variable "management_throttling_rate_limit" {
  description = "Rate limit (requests per second) of the management API's default route throttling."
  type        = number
}

variable "alarm_sns_topic_arn" {
  description = "SNS topic notified by the alarms; \"\" for alarms without actions."
  type        = string
}

variable "cdn_enabled" {
  description = "Put CloudFront with a WAF rate-based rule per client IP in front of the resolver (off by default; cost and custom-domain interplay in terraform/README.md, \"Edge protection (cdn)\")."
  type        = bool
}

variable "cdn_rate_limit_per_5_minutes" {
  description = "With cdn_enabled: requests one client IP may make in any 5 minutes before WAF blocks it (minimum 10)."
  type        = number
}

variable "cdn_certificate_arn" {
  description = "With cdn_enabled and a custom domain: an ACM certificate in us-east-1 covering custom_domain_name, for the distribution; \"\" for none."
  type        = string
}
